/*
 * The /demo checkout page (development only): lists the dev customer's cards, adds one through the gateway's
 * Pay.js iframe (the page receives only a single-use payment key), charges the chosen card with a fresh
 * Idempotency-Key, and voids or refunds the last successful sale. Each answer is said in one plain line, with
 * the JSON as it came back below it.
 */
(function () {
  'use strict';
  // lastSale: the last sale that went through ({key, amount, label}); a failed charge leaves it the target.
  var state = { token: '', customer: '', client: null, card: null, cards: {}, lastSale: null, adding: false };
  var $ = function (id) { return document.getElementById(id); };

  /** Shows one answer: a plain line, the JSON under it (collapsed), and the line in the history. */
  function show(kind, line, body) {
    $('answer').className = kind;
    $('answer-line').textContent = line;
    $('answer-details').hidden = body === undefined;
    $('answer-json').textContent = body === undefined ? '' : JSON.stringify(body, null, 2);
    var li = document.createElement('li');
    li.textContent = new Date().toLocaleTimeString() + ' ' + line;
    $('log').insertBefore(li, $('log').firstChild);
  }

  function api(method, path, body, idempotent, token) {
    var headers = { authorization: 'Bearer ' + (token || state.token) };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotent) headers['idempotency-key'] = 'demo-' + crypto.randomUUID();
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (res) {
        return res.json().catch(function () { return {}; }).then(function (json) { return { status: res.status, body: json }; });
      });
  }

  function cents(amount) { return Math.round(Number(amount) * 100); }
  function money(c) { return (c / 100).toFixed(2); }
  /** "pending_settlement" → "pending settlement". */
  function said(status) { return String(status || '').replace(/_/g, ' '); }
  /** The gateway's expiry "0930" → "09/30". */
  function expiry(e) { return /^\d{4}$/.test(e || '') ? e.slice(0, 2) + '/' + e.slice(2) : e || '?'; }
  /** Every card said the same way, from the gateway's fields, whatever its method_name. */
  function label(m) { return (m.card_type && m.card_type !== 'Unknown' ? m.card_type : 'Card') + ' ending ' + (m.ccnum4last || '????'); }

  /** Marks `input` invalid with `message` beside it, or clears it (message ''). */
  function fieldError(input, message) {
    var el = $(input.id + '-error');
    el.textContent = message;
    if (message) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
  }

  /**
   * A failed answer: a decline in the gateway's words; a bad amount said beside its field; anything else the
   * error's own message and code. `what` is the action ("charge", "void", …), `amountField` the input whose
   * value was sent as the amount, if any.
   */
  function failed(what, res, amountField) {
    var e = (res.body && res.body.error) || {};
    if (e.code === 'card_declined') {
      var tx = e.transaction || {};
      return show('declined', 'Declined: ' + (tx.error || tx.result || e.message) + (what === 'add the card' ? ' (the card was not added)' : ''), res.body);
    }
    var badAmount = (e.details || []).some(function (d) { return d.path === 'body.amount'; });
    if (amountField && badAmount) {
      fieldError(amountField, 'Enter an amount like 12.34');
      amountField.focus();
      return show('error', 'Could not ' + what + ': the amount is not valid.', res.body);
    }
    if (amountField && e.code === 'refund_exceeds_sale') fieldError(amountField, 'More than is left to refund.');
    return show('error', 'Could not ' + what + ': ' + (e.message || 'HTTP ' + res.status) + ' (' + (e.code || res.status) + ')', res.body);
  }

  function refreshCards(select) {
    return api('GET', '/v1/customers/' + encodeURIComponent(state.customer) + '/payment_methods?limit=100').then(function (res) {
      var ul = $('cards');
      ul.textContent = '';
      if (res.status !== 200) return failed('list the cards', res);
      var data = res.body.data;
      data.forEach(function (m, i) {
        state.cards[m.key] = label(m);
        var li = document.createElement('li');
        var input = document.createElement('input');
        input.type = 'radio';
        input.name = 'pm';
        input.value = m.key;
        input.id = 'pm-' + m.key;
        input.checked = select ? m.key === select : i === data.length - 1;
        var lab = document.createElement('label');
        lab.htmlFor = input.id;
        lab.textContent = label(m) + ' · expires ' + expiry(m.expires);
        li.appendChild(input);
        li.appendChild(lab);
        ul.appendChild(li);
      });
      $('charge').disabled = data.length === 0;
    });
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement('script');
      s.src = src;
      s.onload = resolve;
      s.onerror = function () { reject(new Error('could not load ' + src)); };
      document.head.appendChild(s);
    });
  }

  function addCard() {
    if (state.adding) return;
    state.adding = true;
    state.client.getPaymentKey(state.card).then(function (result) {
      // The card form shows its own message beside the field; the page reports the attempt once.
      if (result && result.error) return show('error', 'Card not added: ' + result.error.message);
      return api('POST', '/v1/customers/' + encodeURIComponent(state.customer) + '/payment_methods', { payment_key: result }, true).then(function (res) {
        if (res.status !== 201) return failed('add the card', res);
        show('approved', 'Added ' + label(res.body) + ' · expires ' + expiry(res.body.expires) + ', verified and selected', res.body);
        return refreshCards(res.body.key);
      });
    }).finally(function () { state.adding = false; });
  }

  /** Which sale Void and Refund act on, and whether they can. */
  function target(sale, note) {
    state.lastSale = sale;
    $('target').textContent = sale ? 'Last sale: ' + money(sale.amount) + ' on ' + sale.label + ' — ' + note : 'No sale yet.';
    $('void').disabled = !sale || sale.done;
    $('refund').disabled = !sale || sale.done || sale.refunded >= sale.amount;
    // The button just used may now be disabled: keep keyboard focus on the answer rather than lose it.
    if (document.activeElement && document.activeElement.disabled) $('answer-line').focus();
  }

  function charge() {
    var chosen = document.querySelector('input[name=pm]:checked');
    if (!chosen) return;
    var card = state.cards[chosen.value];
    fieldError($('amount'), '');
    var body = { customer: state.customer, payment_method: chosen.value, amount: $('amount').value.trim() };
    api('POST', '/v1/sales', body, true).then(function (res) {
      var b = res.body || {};
      if (res.status !== 201) return failed('charge', res, $('amount'));
      var partial = b.result_code === 'P';
      var charged = cents(partial ? b.auth_amount : b.amount);
      target({ key: b.key, amount: charged, refunded: 0, label: card }, said(b.status));
      if (partial) return show('partial', 'Partially approved: charged ' + b.auth_amount + ' of ' + b.amount + ' to ' + card + ' — ' + said(b.status), b);
      return show('approved', 'Charged ' + b.amount + ' to ' + card + ' — ' + said(b.status), b);
    });
  }

  function voidSale() {
    var sale = state.lastSale;
    if (!sale) return;
    api('POST', '/v1/sales/' + encodeURIComponent(sale.key) + '/void', undefined, true).then(function (res) {
      if (res.status !== 200) return failed('void', res);
      sale.done = true;
      target(sale, 'voided');
      show('approved', 'Voided sale of ' + money(sale.amount) + ' on ' + sale.label + ' — the funds are released', res.body);
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
    fieldError(field, '');
    fetch('/demo/back-office/session').then(function (r) { return r.json(); }).then(function (session) {
      return api('POST', '/v1/sales/' + encodeURIComponent(sale.key) + '/refunds', amount ? { amount: amount } : undefined, true, session.token);
    }).then(function (res) {
      var b = res.body || {};
      if (res.status !== 201) return failed('refund', res, field);
      field.value = '';
      // All of an unsettled sale is voided rather than refunded (method void): say what happened.
      if (b.method === 'void') {
        sale.done = true;
        target(sale, 'voided');
        return show('approved', 'Voided sale of ' + money(sale.amount) + ' on ' + sale.label + ' (not settled yet, so the refund became a void) — the funds are released', b);
      }
      sale.refunded += cents(b.amount);
      target(sale, money(sale.refunded) + ' refunded');
      return show('approved', 'Refunded ' + b.amount + ' of ' + money(sale.amount) + ' on ' + sale.label, b);
    });
  }

  fetch('/demo/session').then(function (r) { return r.json(); }).then(function (session) {
    state.token = session.token;
    state.customer = session.customer;
    $('customer').textContent = session.customer;
    return Promise.all([refreshCards(), api('GET', '/v1/payment-config')]);
  }).then(function (all) {
    var config = all[1];
    if (config.status !== 200) throw new Error('payment-config answered ' + config.status);
    return loadScript(config.body.pay_js_url).then(function () {
      state.client = new usaepay.Client(config.body.public_key);
      state.card = state.client.createPaymentCardEntry();
      state.card.generateHTML({ fontSize: '14px' });
      state.card.addHTML('card-form');
      $('add').disabled = false;
    });
  }).catch(function (err) {
    show('error', 'Could not start: ' + err.message);
  });

  $('add').addEventListener('click', addCard);
  $('charge').addEventListener('click', charge);
  $('void').addEventListener('click', voidSale);
  $('refund').addEventListener('click', refund);
  ['amount', 'refund-amount'].forEach(function (id) {
    $(id).addEventListener('input', function () { fieldError($(id), ''); });
  });
})();
