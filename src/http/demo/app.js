/*
 * The /demo checkout page (development only): lists the dev customer's cards, adds one through the gateway's
 * Pay.js iframe (the page receives only a single-use payment key), charges the chosen card with a fresh
 * Idempotency-Key, and voids or refunds the last sale. Every answer is shown as it came back.
 */
(function () {
  'use strict';
  var state = { token: '', customer: '', client: null, card: null, lastSale: null };
  var $ = function (id) { return document.getElementById(id); };

  function show(kind, title, body) {
    var el = $('answer');
    el.className = kind;
    el.textContent = title + (body ? '\n' + JSON.stringify(body, null, 2) : '');
    var li = document.createElement('li');
    li.textContent = new Date().toLocaleTimeString() + ' ' + title;
    $('log').insertBefore(li, $('log').firstChild);
  }

  /** A call to tokengate with the shopper's token, or with `token` (the back office's, for refunds). */
  function api(method, path, body, idempotent, token) {
    var headers = { authorization: 'Bearer ' + (token || state.token) };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotent) headers['idempotency-key'] = 'demo-' + crypto.randomUUID();
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (res) {
        return res.json().catch(function () { return {}; }).then(function (json) { return { status: res.status, body: json }; });
      });
  }

  /** One plain line per answer: approved, partially approved, declined, or the error code. */
  function describe(what, res) {
    var b = res.body || {};
    if (res.status >= 200 && res.status < 300) {
      // A follow-up answers the sale itself: its result_code stays the sale's (P after a partial approval), so a
      // voided sale is said as such rather than as a partial approval.
      if (b.result_code === 'P' && b.status !== 'voided') return show('partial', what + ': partially approved, ' + b.auth_amount + ' of ' + b.amount, b);
      return show('approved', what + ': approved (' + res.status + (b.status ? ', ' + b.status : '') + ')', b);
    }
    var code = b.error && b.error.code ? b.error.code : 'HTTP ' + res.status;
    if (code === 'card_declined') return show('declined', what + ': declined (card_declined)', b.error);
    return show('error', what + ': error ' + code + ' (' + res.status + ')', b.error || b);
  }

  function label(m) {
    if (m.method_name) return m.method_name;
    return (m.card_type || 'card') + ' ending ' + (m.ccnum4last || '????');
  }

  function refreshCards() {
    return api('GET', '/v1/customers/' + encodeURIComponent(state.customer) + '/payment_methods?limit=100').then(function (res) {
      var ul = $('cards');
      ul.textContent = '';
      if (res.status !== 200) return describe('Listing cards', res);
      res.body.data.forEach(function (m, i) {
        var li = document.createElement('li');
        var input = document.createElement('input');
        input.type = 'radio';
        input.name = 'pm';
        input.value = m.key;
        input.id = 'pm-' + m.key;
        if (i === res.body.data.length - 1) input.checked = true;
        var lab = document.createElement('label');
        lab.htmlFor = input.id;
        lab.textContent = ' ' + label(m) + '  (expires ' + m.expires + ')';
        li.appendChild(input);
        li.appendChild(lab);
        ul.appendChild(li);
      });
      $('charge').disabled = res.body.data.length === 0;
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
    $('add').disabled = true;
    state.client.getPaymentKey(state.card).then(function (result) {
      if (result && result.error) return show('error', 'Card form: ' + result.error.message);
      return api('POST', '/v1/customers/' + encodeURIComponent(state.customer) + '/payment_methods', { payment_key: result }, true).then(function (res) {
        describe('Adding a card', res);
        return refreshCards();
      });
    }).finally(function () { $('add').disabled = false; });
  }

  function charge() {
    var chosen = document.querySelector('input[name=pm]:checked');
    if (!chosen) return;
    var body = { customer: state.customer, payment_method: chosen.value, amount: $('amount').value.trim() };
    api('POST', '/v1/sales', body, true).then(function (res) {
      describe('Sale', res);
      state.lastSale = res.status === 201 ? res.body.key : null;
      $('void').disabled = !state.lastSale;
      $('refund').disabled = !state.lastSale;
    });
  }

  /**
   * The shopper's token cannot refund (no refunds:create): a refund is the merchant's back office, which in
   * production calls tokengate from the merchant's server. The page asks for a short-lived back-office token
   * at each refund, uses it for that call only and does not keep it.
   */
  function backOfficeToken() {
    return fetch('/demo/back-office/session').then(function (r) { return r.json(); }).then(function (s) { return s.token; });
  }

  function followUp(what, path, token) {
    if (!state.lastSale) return;
    api('POST', '/v1/sales/' + encodeURIComponent(state.lastSale) + path, undefined, true, token).then(function (res) {
      describe(what, res);
      if (res.status < 300) {
        $('void').disabled = true;
        $('refund').disabled = true;
      }
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
      state.card.addEventListener('error', function (message) { show('error', 'Card form: ' + message); });
      $('add').disabled = false;
    });
  }).catch(function (err) {
    show('error', 'Could not start: ' + err.message);
  });

  $('add').addEventListener('click', addCard);
  $('charge').addEventListener('click', charge);
  $('void').addEventListener('click', function () { followUp('Void', '/void'); });
  $('refund').addEventListener('click', function () {
    backOfficeToken().then(function (token) { followUp('Refund', '/refunds', token); });
  });
})();
