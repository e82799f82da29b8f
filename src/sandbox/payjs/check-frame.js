/*
 * The check form inside the Pay.js iframe (sandbox origin; gateway-facts.md, ACH). As the card form does
 * (card-frame.js), it answers getPaymentKey requests from the page that framed it by sending the account to this
 * origin's POST /js/v2/payment_key (`check`); the page gets the key or an error message, never the account.
 */
(function () {
  'use strict';
  function readConfig() {
    try {
      return JSON.parse(decodeURIComponent(window.location.hash.slice(1)) || '{}') || {};
    } catch {
      return {};
    }
  }
  var config = readConfig();
  var parentOrigin = typeof config.parent === 'string' ? config.parent : '';
  var holder = document.getElementById('ach-holder');
  var routing = document.getElementById('ach-routing');
  var account = document.getElementById('ach-account');
  var type = document.getElementById('ach-type');
  var message = document.getElementById('message');
  var inputs = [holder, routing, account];
  var STYLE_PROPS = ['color', 'fontSize', 'fontFamily', 'backgroundColor', 'borderColor', 'borderRadius', 'padding'];
  var style = config.style && typeof config.style === 'object' ? config.style : {};
  inputs.concat([type]).forEach(function (input) {
    STYLE_PROPS.forEach(function (p) {
      if (typeof style[p] === 'string') input.style[p] = style[p];
    });
  });

  function digits(s) {
    return String(s || '').replace(/\D/g, '');
  }

  /** The ABA checksum (gateway-facts.md, ACH). */
  function aba(d) {
    if (!/^\d{9}$/.test(d)) return false;
    var w = [3, 7, 1, 3, 7, 1, 3, 7, 1];
    var sum = 0;
    for (var i = 0; i < 9; i++) sum += w[i] * Number(d[i]);
    return sum % 10 === 0;
  }

  function post(data) {
    if (parentOrigin) window.parent.postMessage(data, parentOrigin);
  }

  function problem() {
    if (holder.value.trim() === '') return { field: holder, text: 'Enter the account holder\'s name.' };
    if (!aba(digits(routing.value))) return { field: routing, text: 'Check the 9-digit routing number.' };
    if (!/^\d{4,17}$/.test(digits(account.value))) return { field: account, text: 'Check the account number.' };
    return null;
  }

  function show(p) {
    inputs.forEach(function (i) { i.removeAttribute('aria-invalid'); });
    message.textContent = p ? p.text : '';
    if (p) p.field.setAttribute('aria-invalid', 'true');
  }

  inputs.forEach(function (input) {
    input.addEventListener('blur', function () {
      var p = problem();
      if (p && p.field === input && input.value !== '') {
        show(p);
        post({ type: 'usaepay:error', message: p.text });
      }
    });
    input.addEventListener('input', function () {
      post({ type: 'usaepay:change', complete: problem() === null });
    });
  });

  window.addEventListener('message', function (event) {
    if (!parentOrigin || event.origin !== parentOrigin || event.source !== window.parent) return;
    var data = event.data || {};
    if (data.type !== 'usaepay:getPaymentKey') return;
    var answer = function (body) {
      post(Object.assign({ type: 'usaepay:paymentKey', id: data.id }, body));
    };
    var p = problem();
    show(p);
    if (p) {
      answer({ error: { message: p.text, code: 'invalid_check' } });
      return;
    }
    fetch('/js/v2/payment_key', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ public_key: data.publicKey, check: { accountholder: holder.value.trim(), routing: digits(routing.value), account: digits(account.value), account_type: type.value } }),
    }).then(function (res) {
      return res.json().then(function (body) {
        if (res.ok && body && typeof body.payment_key === 'string') {
          routing.value = '';
          account.value = '';
          answer({ key: body.payment_key });
        } else {
          var text = body && body.error ? String(body.error) : 'The account was not accepted.';
          show({ field: routing, text: text });
          answer({ error: { message: text, code: body && body.errorcode ? body.errorcode : res.status } });
        }
      });
    }).catch(function () {
      answer({ error: { message: 'Could not reach the payment gateway.', code: 'network' } });
    });
  });
})();
