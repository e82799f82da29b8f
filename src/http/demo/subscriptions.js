/*
 * The dev customer's subscriptions on the /demo page (issue 37): subscribe monthly with the card checked in the
 * list above, see each subscription with its renewals (its history of attempts), move tokengate's clock a day or
 * a month (POST /demo/clock: the page's server calls the clock the admin port's /test/clock moves, and the
 * embedded sandbox's clock follows), and cancel. Renewals are tokengate's own work, done a moment after the
 * clock moves: the panel reads the subscriptions again until none is due by the clock any more.
 */
(function () {
  'use strict';
  var p = window.demoPage;
  var $ = p.$;
  var DAY_MS = 86400000;

  function subsPath() { return '/v1/customers/' + encodeURIComponent(p.state.customer) + '/subscriptions'; }

  function when(iso) { return iso ? iso.slice(0, 16).replace('T', ' ') + ' UTC' : '—'; }

  /** One attempt of the history: its period, when, and what came of it. */
  function attemptLine(a) {
    var what = a.result === 'approved' ? 'paid' : a.result === 'declined' ? 'declined' + (a.decline_class ? ' (' + a.decline_class + ')' : '') : p.said(a.result);
    return 'Period ' + (a.period + 1) + ' · ' + when(a.at) + ' · ' + what + (a.sale ? ' · sale ' + a.sale : '');
  }

  function row(s) {
    var li = document.createElement('li');
    li.id = 'sub-' + s.key;
    var head = document.createElement('div');
    head.className = 'sub-head';
    var title = document.createElement('span');
    title.className = 'sub-title';
    title.textContent = s.amount + ' every ' + (s.interval_count > 1 ? s.interval_count + ' ' : '') + s.interval + ' · ' + p.said(s.status) +
      ' · ' + s.periods_charged + ' paid · next ' + (s.status === 'canceled' || s.status === 'completed' ? '—' : when(s.next_charge_at));
    head.appendChild(title);
    if (s.status !== 'canceled' && s.status !== 'completed') {
      var cancel = document.createElement('button');
      cancel.type = 'button';
      cancel.className = 'cancel-sub';
      cancel.textContent = 'Cancel';
      cancel.setAttribute('aria-label', 'Cancel the subscription of ' + s.amount + ' every ' + s.interval);
      cancel.addEventListener('click', function () { cancelSub(s); });
      head.appendChild(cancel);
    }
    li.appendChild(head);
    var history = document.createElement('ol');
    history.className = 'sub-history';
    history.setAttribute('aria-label', 'Renewals');
    (s.history || []).forEach(function (a) {
      var item = document.createElement('li');
      item.textContent = attemptLine(a);
      history.appendChild(item);
    });
    li.appendChild(history);
    return li;
  }

  function refresh() {
    return p.api('GET', subsPath()).then(function (res) {
      var ul = $('subs');
      ul.textContent = '';
      if (res.status !== 200) return p.failed('list the subscriptions', res);
      if (res.body.data.length === 0) {
        var none = document.createElement('li');
        none.className = 'muted';
        none.textContent = 'No subscription yet.';
        ul.appendChild(none);
      }
      res.body.data.forEach(function (s) { ul.appendChild(row(s)); });
      return res.body.data;
    });
  }

  function readClock() {
    return fetch('/demo/clock').then(function (r) { return r.json(); }).then(function (c) {
      $('clock-now').textContent = when(c.now);
      return Date.parse(c.now);
    });
  }

  /** The card checked in the stored cards' list (wallet.js). */
  function checkedCard() {
    var checked = document.querySelector('input[name="pm"]:checked');
    return checked ? checked.value : undefined;
  }

  function subscribe() {
    var field = $('sub-amount');
    p.fieldError(field, '');
    var pm = checkedCard();
    if (!pm) return p.show('error', 'Could not subscribe: check a card in the list first.');
    var body = { amount: field.value.trim(), interval: 'month', payment_method: pm, invoice_prefix: 'demo', consent: { text: 'Demo monthly plan: ' + field.value.trim() + ' a month until canceled' } };
    p.api('POST', subsPath(), body, true).then(function (res) {
      if (res.status !== 201) return p.failed('subscribe', res, field, 'no subscription was made');
      p.show('approved', 'Subscribed: ' + res.body.amount + ' a month, the first month paid now', res.body);
      return refresh();
    });
  }

  /**
   * Moves the clock, then reads the subscriptions until none is due by the clock (renewals run a moment after,
   * on tokengate's own schedule) or ten seconds have passed.
   */
  function move(ms, what) {
    $('move-day').disabled = true;
    $('move-month').disabled = true;
    fetch('/demo/clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: ms }) })
      .then(function (r) { return r.json(); })
      .then(function (c) {
        var now = Date.parse(c.now);
        $('clock-now').textContent = when(c.now);
        p.show('approved', 'Moved tokengate\'s clock ' + what + ': it is now ' + when(c.now));
        var deadline = Date.now() + 10000;
        var look = function () {
          return refresh().then(function (subs) {
            var due = (subs || []).some(function (s) { return (s.status === 'active' || s.status === 'past_due') && s.next_charge_at && Date.parse(s.next_charge_at) <= now; });
            if (due && Date.now() < deadline) return new Promise(function (r) { setTimeout(r, 500); }).then(look);
            return undefined;
          });
        };
        return look();
      })
      .finally(function () {
        $('move-day').disabled = false;
        $('move-month').disabled = false;
      });
  }

  function cancelSub(s) {
    p.api('POST', '/v1/subscriptions/' + encodeURIComponent(s.key) + '/cancel', {}).then(function (res) {
      if (res.status === 200) p.show('approved', 'Canceled the subscription of ' + s.amount + ' a month: nothing more will be charged', res.body);
      else p.failed('cancel the subscription', res);
      return refresh();
    }).then(function () { $('answer-line').focus(); });
  }

  $('subscribe').addEventListener('click', subscribe);
  $('move-day').addEventListener('click', function () { move(DAY_MS, 'a day'); });
  $('move-month').addEventListener('click', function () { move(31 * DAY_MS, '31 days'); });
  $('sub-amount').addEventListener('input', function () { p.fieldError($('sub-amount'), ''); });

  window.demoSubscriptions = {
    /** Lists the subscriptions and reads the clock (app.js, once the session is in). */
    start: function () {
      $('subscribe').disabled = false;
      $('move-day').disabled = false;
      $('move-month').disabled = false;
      return Promise.all([refresh(), readClock()]);
    },
  };
})();
