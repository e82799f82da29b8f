/*
 * The /demo page's bank payments (issue 38, development only): the shopper types the account into the gateway's
 * Pay.js check form (client.createPaymentCheckEntry(), an iframe on the gateway's origin; this page only ever
 * receives a single-use payment key), reads the "I agree" authorization and ticks it, and pays in one
 * POST /v1/sales with the key and `authorization {text}` (the text shown, as accepted). Each payment is then
 * followed from tokengate's own sale (GET /v1/sales/{key}: tokengate's record, kept up to date by the gateway's
 * ach.* webhooks; the page never asks the gateway) as time moves: pending, submitted at the evening cut-off,
 * settled the next morning, or returned days later with the bank's code (the sandbox's return test accounts).
 * "Move 12 hours" moves tokengate's clock through POST /demo/clock (the subscriptions panel's way; the embedded
 * sandbox's ACH clock follows it). app.js hands this panel the Pay.js client once the script is loaded (start).
 */
(function () {
  'use strict';
  var p = window.demoPage;
  var $ = p.$;
  /** A step of the clock: never both the 5 pm cut-off and the 8 am settlement after it (15 h apart), so each step shows one. */
  var STEP_MS = 12 * 3600000;
  /** openapi.json's Amount, checked before the single-use key is made (a bad amount would cost the typing). */
  var AMOUNT = /^(0|[1-9][0-9]{0,7})(\.[0-9]{1,2})?$/;
  /** Statuses a bank payment does not leave (settled may still be returned days later). */
  var FINAL = ['returned', 'failed', 'voided', 'declined', 'error'];
  var state = { client: null, check: null, paying: false, payments: [], polling: null };

  /** The authorization as the shopper read it: exactly the text shown beside the box they ticked. */
  function mandate() { return $('ach-mandate').textContent.replace(/\s+/g, ' ').trim(); }

  /** "settled", "returned (R01, 2026-11-30)". */
  function statusText(sale) {
    if (sale.status === 'returned') {
      var why = [sale.return_code, sale.returned_at].filter(Boolean).join(', ');
      return 'returned' + (why ? ' (' + why + ')' : '') + (sale.amount_returned ? ': ' + sale.amount_returned + ' taken back' : '');
    }
    return p.said(sale.status);
  }

  function draw() {
    var list = $('bank-payments');
    list.textContent = '';
    if (!state.payments.length) {
      var none = document.createElement('li');
      none.className = 'muted';
      none.textContent = 'No bank payment yet.';
      list.appendChild(none);
      return;
    }
    state.payments.forEach(function (pay) {
      var li = document.createElement('li');
      li.setAttribute('data-sale', pay.key);
      li.setAttribute('data-status', pay.sale.status);
      li.textContent = pay.sale.amount + ' by bank account (sale ' + pay.key + ') — ' + statusText(pay.sale);
      list.appendChild(li);
    });
  }

  /** Reads each payment still moving from tokengate; a change is drawn and said in the history. */
  function readAll() {
    var moving = state.payments.filter(function (pay) { return FINAL.indexOf(pay.sale.status) < 0; });
    return Promise.all(moving.map(function (pay) {
      return p.api('GET', '/v1/sales/' + encodeURIComponent(pay.key)).then(function (res) {
        if (res.status !== 200 || !res.body) return false;
        var was = pay.sale.status;
        pay.sale = res.body;
        if (res.body.status === was) return false;
        p.show(res.body.status === 'returned' || res.body.status === 'failed' ? 'declined' : 'approved',
          'Bank payment of ' + res.body.amount + ' is now ' + statusText(res.body), res.body);
        return true;
      });
    })).then(draw);
  }

  /**
   * Follows the payments for a while after something that moves them (a payment, the clock): the webhooks that
   * move a sale arrive a moment after the clock does. Reads stop on their own; the page never polls for ever.
   */
  function follow() {
    window.clearInterval(state.polling);
    var left = 30;
    state.polling = window.setInterval(function () {
      if (--left < 0) return window.clearInterval(state.polling);
      readAll();
    }, 1000);
  }

  function showClock(now) { $('bank-clock-now').textContent = new Date(now).toUTCString(); }

  function moveDay() {
    $('bank-move').disabled = true;
    fetch('/demo/clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: STEP_MS }) })
      .then(function (r) { return r.json().then(function (b) { return { status: r.status, body: b }; }); })
      .then(function (res) {
        if (res.status !== 200) return p.failed('move the clock', res);
        showClock(res.body.now);
        p.show('approved', 'Moved tokengate\'s clock 12 hours: it is now ' + new Date(res.body.now).toUTCString(), res.body);
        follow();
      })
      .finally(function () { $('bank-move').disabled = false; });
  }

  function payByBank() {
    var field = $('bank-amount');
    var amount = field.value.trim();
    p.fieldError(field, '');
    $('ach-agree-error').textContent = '';
    if (!AMOUNT.test(amount) || p.cents(amount) <= 0) {
      p.fieldError(field, 'Enter an amount like 12.34');
      field.focus();
      return p.show('error', 'Could not pay by bank: the amount is not valid.');
    }
    if (!$('ach-agree').checked) {
      $('ach-agree-error').textContent = 'Tick “I agree” to authorize the debit.';
      $('ach-agree').focus();
      return p.show('error', 'Could not pay by bank: the debit is not authorized yet.');
    }
    if (state.paying) return;
    state.paying = true;
    state.client.getPaymentKey(state.check).then(function (key) {
      if (key && key.error) return p.show('error', 'Bank payment not made: ' + key.error.message);
      var body = { customer: p.state.customer, payment_key: key, amount: amount, authorization: { text: mandate() } };
      return p.api('POST', '/v1/sales', body, true).then(function (res) {
        if (res.status !== 201) return p.failed('pay by bank', res, field);
        $('ach-agree').checked = false;
        state.payments.unshift({ key: res.body.key, sale: res.body });
        draw();
        p.show('approved', 'Bank payment of ' + res.body.amount + ' made — ' + statusText(res.body), res.body);
        follow();
      });
    }).finally(function () { state.paying = false; });
  }

  /** Called by app.js with the Pay.js client once the gateway's script is on the page. */
  function start(client) {
    state.client = client;
    state.check = client.createPaymentCheckEntry();
    state.check.generateHTML({ fontSize: '14px' });
    state.check.addHTML('check-form');
    draw();
    $('pay-bank').disabled = false;
    return fetch('/demo/clock').then(function (r) { return r.json(); }).then(function (c) {
      showClock(c.now);
      $('bank-move').disabled = false;
    });
  }

  $('pay-bank').addEventListener('click', payByBank);
  $('bank-move').addEventListener('click', moveDay);
  $('bank-amount').addEventListener('input', function () { p.fieldError($('bank-amount'), ''); });
  $('ach-agree').addEventListener('change', function () { $('ach-agree-error').textContent = ''; });

  window.demoBank = { start: start };
})();
