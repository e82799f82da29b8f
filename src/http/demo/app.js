/*
 * The /demo checkout page (development only): loads the session and the gateway's Pay.js card form, adds a card
 * through it (the page receives only a single-use payment key), charges the chosen stored card or pays with the
 * new one and keeps it, and voids or refunds the last successful sale, each with a fresh Idempotency-Key. The
 * stored cards' list, its default and removals are wallet.js; the shared answer line is page.js.
 */
(function () {
  'use strict';
  var p = window.demoPage;
  var wallet = window.demoWallet;
  var $ = p.$;
  // lastSale: the last sale that went through ({key, amount, label}); a failed charge leaves it the target.
  var state = { client: null, card: null, lastSale: null, adding: false };
  var customer = function () { return p.state.customer; };
  /** openapi.json's Amount (two decimals at most, above 0): a new card's amount is checked before its key is made. */
  var AMOUNT = /^(0|[1-9][0-9]{0,7})(\.[0-9]{1,2})?$/;

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement('script');
      s.src = src;
      s.onload = resolve;
      s.onerror = function () { reject(new Error('could not load ' + src)); };
      document.head.appendChild(s);
    });
  }

  /**
   * A payment key from the card form, once at a time. The form empties once it makes one, and the form shows
   * its own message beside a bad field: the page reports the attempt once, as `what` ("Card not added").
   */
  function withPaymentKey(what, use) {
    if (state.adding) return;
    state.adding = true;
    $('card-form-error').textContent = '';
    state.client.getPaymentKey(state.card).then(function (result) {
      if (result && result.error) return p.show('error', what + ': ' + result.error.message);
      return use(result);
    }).finally(function () { state.adding = false; });
  }

  /** A payment key the gateway refused (unknown, expired, used) is said beside the card form. */
  function keyRefused(res) {
    var e = (res.body && res.body.error) || {};
    var refused = (e.details || []).some(function (d) { return d.path === 'body.payment_key'; });
    if (refused) $('card-form-error').textContent = 'The gateway refused this card entry: type the card again.';
    return refused;
  }

  function addCard() {
    withPaymentKey('Card not added', function (key) {
      return p.api('POST', p.methodsPath(), { payment_key: key }, true).then(function (res) {
        if (res.status !== 201) {
          keyRefused(res);
          return p.failed('add the card', res, undefined, 'the card was not added');
        }
        p.show('approved', 'Added ' + p.fullLabel(res.body) + ', verified and selected', res.body);
        return wallet.refresh(res.body.key);
      });
    });
  }

  /** Which sale Void and Refund act on, and whether they can. */
  function target(sale, note) {
    state.lastSale = sale;
    $('target').textContent = sale ? 'Last sale: ' + p.money(sale.amount) + ' on ' + sale.label + ' — ' + note : 'No sale yet.';
    $('void').disabled = !sale || sale.done;
    $('refund').disabled = !sale || sale.done || sale.refunded >= sale.amount;
    // The button just used may now be disabled: keep keyboard focus on the answer rather than lose it.
    if (document.activeElement && document.activeElement.disabled) $('answer-line').focus();
  }

  /**
   * A sale that went through: the target of Void and Refund, and its line ("Charged 12.34 to Visa ending 2224 —
   * pending settlement", "Charged 12.34 to a new Visa ending 2224 — kept as a card" when `isNew`).
   */
  function charged(b, card, note, isNew) {
    var partial = b.result_code === 'P';
    var to = (isNew ? 'a new ' : '') + card;
    target({ key: b.key, amount: p.cents(partial ? b.auth_amount : b.amount), refunded: 0, label: card }, p.said(b.status));
    if (partial) return p.show('partial', 'Partially approved: charged ' + b.auth_amount + ' of ' + b.amount + ' to ' + to + ' — ' + note, b);
    return p.show('approved', 'Charged ' + b.amount + ' to ' + to + ' — ' + note, b);
  }

  function charge() {
    var chosen = document.querySelector('input[name=pm]:checked');
    if (!chosen) return;
    var card = p.label(wallet.card(chosen.value));
    p.fieldError($('amount'), '');
    var body = { customer: customer(), payment_method: chosen.value, amount: $('amount').value.trim() };
    p.api('POST', '/v1/sales', body, true).then(function (res) {
      if (res.status !== 201) return p.failed('charge', res, $('amount'));
      return charged(res.body, card, p.said(res.body.status));
    });
  }

  /**
   * The card a sale kept, as listed: the answer names it when tokengate knew it by then; otherwise it is named
   * just after the answer, so the list is read again (a few times) for a card that was not there before.
   */
  function keptCard(sale, before, tries) {
    return wallet.refresh(sale.payment_method).then(function () {
      if (sale.payment_method) return wallet.card(sale.payment_method);
      var key = wallet.keys().filter(function (k) { return before.indexOf(k) < 0; })[0];
      // Found by difference: redrawn once more with it checked (a plain redraw checks the default).
      if (key) return wallet.refresh(key).then(function () { return wallet.card(key); });
      if (tries <= 0) return undefined;
      return new Promise(function (r) { setTimeout(r, 400); }).then(function () { return keptCard(sale, before, tries - 1); });
    });
  }

  /** Pays with the card typed in the form and keeps it: one sale with payment_key and save_payment_method. */
  function payNew() {
    var field = $('amount');
    var amount = field.value.trim();
    p.fieldError(field, '');
    // The payment key is single use and the form empties once it is made: a bad amount would cost the card typed.
    if (!AMOUNT.test(amount) || p.cents(amount) <= 0) {
      p.fieldError(field, 'Enter an amount like 12.34');
      field.focus();
      return p.show('error', 'Could not pay: the amount is not valid.');
    }
    withPaymentKey('Card not charged', function (key) {
      var before = wallet.keys();
      var body = { customer: customer(), payment_key: key, save_payment_method: true, amount: amount };
      return p.api('POST', '/v1/sales', body, true).then(function (res) {
        if (res.status !== 201) {
          keyRefused(res);
          return p.failed('pay', res, field, 'the card was not kept');
        }
        return keptCard(res.body, before, 5).then(function (m) {
          var last4 = String((res.body.creditcard || {}).number || '').slice(-4);
          charged(res.body, m ? p.label(m) : 'card ending ' + last4, 'kept as a card', true);
        });
      });
    });
  }

  /** "Voided sale of 20.00 on Visa ending 2224". */
  function voided(sale) { return 'Voided sale of ' + p.money(sale.amount) + ' on ' + sale.label; }
  /** What a void released: all of it, or what was left after partial refunds (issue 41: it said the whole sale). */
  function released(sale) {
    if (!sale.refunded) return 'the funds are released';
    return p.money(sale.amount - sale.refunded) + ' released (' + p.money(sale.refunded) + ' was refunded)';
  }

  function voidSale() {
    var sale = state.lastSale;
    if (!sale) return;
    p.api('POST', '/v1/sales/' + encodeURIComponent(sale.key) + '/void', undefined, true).then(function (res) {
      if (res.status !== 200) return p.failed('void', res);
      sale.done = true;
      target(sale, 'voided');
      p.show('approved', voided(sale) + ' — ' + released(sale), res.body);
    });
  }

  /**
   * The shopper's token cannot refund (no refunds:create): a refund is the merchant's back office, which in
   * production calls tokengate from the merchant's server. The page asks for a short-lived back-office token
   * at each refund, uses it for that call only and does not keep it.
   */
  function refund() {
    var sale = state.lastSale;
    if (!sale) return;
    var field = $('refund-amount');
    var amount = field.value.trim();
    p.fieldError(field, '');
    fetch('/demo/back-office/session').then(function (r) { return r.json(); }).then(function (session) {
      return p.api('POST', '/v1/sales/' + encodeURIComponent(sale.key) + '/refunds', amount ? { amount: amount } : undefined, true, session.token);
    }).then(function (res) {
      var b = res.body || {};
      if (res.status !== 201) return p.failed('refund', res, field);
      field.value = '';
      // All of an unsettled sale is voided rather than refunded (method void): say what happened.
      if (b.method === 'void') {
        sale.done = true;
        target(sale, 'voided');
        return p.show('approved', voided(sale) + ' (not settled yet, so the refund became a void) — ' + released(sale), b);
      }
      sale.refunded += p.cents(b.amount);
      target(sale, p.money(sale.refunded) + ' refunded');
      return p.show('approved', 'Refunded ' + b.amount + ' of ' + p.money(sale.amount) + ' on ' + sale.label, b);
    });
  }

  fetch('/demo/session').then(function (r) { return r.json(); }).then(function (session) {
    p.state.token = session.token;
    p.state.customer = session.customer;
    $('customer').textContent = session.customer;
    return Promise.all([wallet.refresh(), p.api('GET', '/v1/payment-config'), window.demoSubscriptions.start()]);
  }).then(function (all) {
    var config = all[1];
    if (config.status !== 200) throw new Error('payment-config answered ' + config.status);
    return loadScript(config.body.pay_js_url).then(function () {
      state.client = new usaepay.Client(config.body.public_key);
      state.card = state.client.createPaymentCardEntry();
      state.card.generateHTML({ fontSize: '14px' });
      state.card.addHTML('card-form');
      $('add').disabled = false;
      $('pay-new').disabled = false;
      // The bank panel (bank.js) shares the client: its check form is Pay.js' other entry.
      return window.demoBank.start(state.client);
    });
  }).catch(function (err) {
    p.show('error', 'Could not start: ' + err.message);
  });

  $('add').addEventListener('click', addCard);
  $('charge').addEventListener('click', charge);
  $('pay-new').addEventListener('click', payNew);
  $('void').addEventListener('click', voidSale);
  $('refund').addEventListener('click', refund);
  ['amount', 'refund-amount'].forEach(function (id) {
    $(id).addEventListener('input', function () { p.fieldError($(id), ''); });
  });
})();
