/*
 * The card form inside the Pay.js iframe (sandbox origin). It answers getPaymentKey requests from the page
 * that framed it (the origin named in the URL fragment by pay.js) by sending the card to this origin's
 * POST /js/v2/payment_key; the page gets the key or an error message, never the card.
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
  var number = document.getElementById('cc-number');
  var exp = document.getElementById('cc-exp');
  var cvc = document.getElementById('cc-csc');
  var message = document.getElementById('message');
  var STYLE_PROPS = ['color', 'fontSize', 'fontFamily', 'backgroundColor', 'borderColor', 'borderRadius', 'padding'];

  // Style from generateHTML(style): a few safe properties applied to the inputs (CSSOM, allowed by the CSP).
  var style = config.style && typeof config.style === 'object' ? config.style : {};
  [number, exp, cvc].forEach(function (input) {
    STYLE_PROPS.forEach(function (p) {
      if (typeof style[p] === 'string') input.style[p] = style[p];
    });
  });

  function digits(s) {
    return String(s || '').replace(/\D/g, '');
  }

  function luhn(d) {
    var sum = 0;
    for (var i = 0; i < d.length; i++) {
      var n = Number(d[d.length - 1 - i]);
      if (i % 2 === 1) {
        n *= 2;
        if (n > 9) n -= 9;
      }
      sum += n;
    }
    return sum % 10 === 0;
  }

  function post(data) {
    if (parentOrigin) window.parent.postMessage(data, parentOrigin);
  }

  /** The first problem with what was typed, or '' (client-side checks; the server checks again). */
  function problem() {
    var n = digits(number.value);
    if (n.length < 12 || n.length > 19 || !luhn(n)) return { field: number, text: 'Check the card number.' };
    var e = digits(exp.value);
    if (!/^(0[1-9]|1[0-2])\d\d$/.test(e)) return { field: exp, text: 'Enter the expiry as MM/YY.' };
    if (!/^\d{3,4}$/.test(cvc.value)) return { field: cvc, text: 'Enter the 3 or 4 digit CVC.' };
    return null;
  }

  function show(p) {
    [number, exp, cvc].forEach(function (i) { i.removeAttribute('aria-invalid'); });
    message.textContent = p ? p.text : '';
    if (p) p.field.setAttribute('aria-invalid', 'true');
  }

  [number, exp, cvc].forEach(function (input) {
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
      answer({ error: { message: p.text, code: 'invalid_card' } });
      return;
    }
    var e = digits(exp.value);
    fetch('/js/v2/payment_key', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ public_key: data.publicKey, card: { number: digits(number.value), expiration: e, cvc: cvc.value } }),
    }).then(function (res) {
      return res.json().then(function (body) {
        if (res.ok && body && typeof body.payment_key === 'string') {
          // One key per card entry: the form is cleared (all of it, so a second card cannot inherit the first's
          // expiry), and a second key needs the card typed again.
          number.value = '';
          exp.value = '';
          cvc.value = '';
          answer({ key: body.payment_key });
        } else {
          var text = body && body.error ? String(body.error) : 'The card was not accepted.';
          show({ field: number, text: text });
          answer({ error: { message: text, code: body && body.errorcode ? body.errorcode : res.status } });
        }
      });
    }).catch(function () {
      answer({ error: { message: 'Could not reach the payment gateway.', code: 'network' } });
    });
  });
})();
