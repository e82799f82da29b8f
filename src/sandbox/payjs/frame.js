/*
 * What the Pay.js iframes share (the card form, card-frame.js; the check form, check-frame.js): the parent's origin
 * from the URL fragment, the merchant's style on the inputs, the field checks shown on blur, and the answer to the
 * framing page's getPaymentKey: what was typed goes to this origin's POST /js/v2/payment_key, the page gets the key
 * or an error message, never the card or the account. Each form calls `usaepayFrame(form)` with its own fields,
 * checks and request body.
 */
(function () {
  'use strict';
  var STYLE_PROPS = ['color', 'fontSize', 'fontFamily', 'backgroundColor', 'borderColor', 'borderRadius', 'padding'];

  function readConfig() {
    try {
      return JSON.parse(decodeURIComponent(window.location.hash.slice(1)) || '{}') || {};
    } catch {
      return {};
    }
  }

  /**
   * form: { inputs: the checked fields, styled: the fields styled (inputs by default), problem(): the first
   * problem {field, text} or null, invalidCode: the error code of a form that fails its checks, body(publicKey):
   * the payment_key request, clear(): empties what must not be reused, refused: the text when the gateway says no,
   * refusedField: the field a refusal marks }.
   */
  window.usaepayFrame = function (form) {
    var config = readConfig();
    var parentOrigin = typeof config.parent === 'string' ? config.parent : '';
    var message = document.getElementById('message');

    // Style from generateHTML(style): a few safe properties applied to the inputs (CSSOM, allowed by the CSP).
    var style = config.style && typeof config.style === 'object' ? config.style : {};
    (form.styled || form.inputs).forEach(function (input) {
      STYLE_PROPS.forEach(function (p) {
        if (typeof style[p] === 'string') input.style[p] = style[p];
      });
    });

    function post(data) {
      if (parentOrigin) window.parent.postMessage(data, parentOrigin);
    }

    function show(p) {
      form.inputs.forEach(function (i) { i.removeAttribute('aria-invalid'); });
      message.textContent = p ? p.text : '';
      if (p) p.field.setAttribute('aria-invalid', 'true');
    }

    form.inputs.forEach(function (input) {
      input.addEventListener('blur', function () {
        var p = form.problem();
        if (p && p.field === input && input.value !== '') {
          show(p);
          post({ type: 'usaepay:error', message: p.text });
        }
      });
      input.addEventListener('input', function () {
        post({ type: 'usaepay:change', complete: form.problem() === null });
      });
    });

    window.addEventListener('message', function (event) {
      if (!parentOrigin || event.origin !== parentOrigin || event.source !== window.parent) return;
      var data = event.data || {};
      if (data.type !== 'usaepay:getPaymentKey') return;
      var answer = function (body) {
        post(Object.assign({ type: 'usaepay:paymentKey', id: data.id }, body));
      };
      var p = form.problem();
      show(p);
      if (p) {
        answer({ error: { message: p.text, code: form.invalidCode } });
        return;
      }
      fetch('/js/v2/payment_key', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(form.body(data.publicKey)),
      }).then(function (res) {
        return res.json().then(function (body) {
          if (res.ok && body && typeof body.payment_key === 'string') {
            form.clear();
            answer({ key: body.payment_key });
          } else {
            var text = body && body.error ? String(body.error) : form.refused;
            show({ field: form.refusedField, text: text });
            answer({ error: { message: text, code: body && body.errorcode ? body.errorcode : res.status } });
          }
        });
      }).catch(function () {
        answer({ error: { message: 'Could not reach the payment gateway.', code: 'network' } });
      });
    });
  };

  window.usaepayFrame.digits = function (s) {
    return String(s || '').replace(/\D/g, '');
  };
})();
