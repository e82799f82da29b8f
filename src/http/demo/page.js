/*
 * What every part of the /demo page shares (loaded first; wallet.js and app.js use it as window.demoPage): the
 * session's token and customer, the calls to tokengate, and the one way an answer is said: a plain line, the
 * JSON as it came back folded under it, the line in the history, an error beside its field.
 */
(function () {
  'use strict';
  var state = { token: '', customer: '' };
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

  /** A call to tokengate with the shopper's token (or `token`); a 204 answers body undefined. */
  function api(method, path, body, idempotent, token) {
    var headers = { authorization: 'Bearer ' + (token || state.token) };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotent) headers['idempotency-key'] = 'demo-' + crypto.randomUUID();
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (res) {
        if (res.status === 204) return { status: 204, body: undefined };
        return res.json().catch(function () { return {}; }).then(function (json) { return { status: res.status, body: json }; });
      });
  }

  /** The customer's payment methods path, or one of them. */
  function methodsPath(pmkey) {
    return '/v1/customers/' + encodeURIComponent(state.customer) + '/payment_methods' + (pmkey ? '/' + encodeURIComponent(pmkey) : '');
  }

  function cents(amount) { return Math.round(Number(amount) * 100); }
  function money(c) { return (c / 100).toFixed(2); }
  /** "pending_settlement" → "pending settlement". */
  function said(status) { return String(status || '').replace(/_/g, ' '); }
  /** The gateway's expiry "0930" → "09/30". */
  function expiry(e) { return /^\d{4}$/.test(e || '') ? e.slice(0, 2) + '/' + e.slice(2) : e || '?'; }
  /** Every card said the same way, from the gateway's fields, whatever its method_name. */
  function label(m) { return (m.card_type && m.card_type !== 'Unknown' ? m.card_type : 'Card') + ' ending ' + (m.ccnum4last || '????'); }
  /**
   * The card's own name, when someone gave it one: the gateway names a card it keeps by its masked number
   * ("XXXXXXXXXXXX2224") or, for the sandbox's fixtures, by its type and last four: neither is a name.
   */
  function name(m) {
    var n = String(m.method_name || '').trim();
    return n && n !== label(m) && !/^[0-9]{0,6}[Xx*•]+[0-9]{4}$/.test(n) ? n : '';
  }
  /** The card with its expiry and its name, as the list shows it (two cards may share a type and last four). */
  function fullLabel(m) { return label(m) + ' · expires ' + expiry(m.expires) + (name(m) ? ' · “' + name(m) + '”' : ''); }

  /** Marks `input` invalid with `message` in its `<id>-error` element, or clears it (message ''). */
  function fieldError(input, message) {
    var el = $(input.id + '-error');
    el.textContent = message;
    if (message) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
  }

  /**
   * A failed answer: a decline in the gateway's words (`declineNote` after it); a bad amount said beside its
   * field; anything else the error's own message and code. `what` is the action ("charge", "void", …),
   * `amountField` the input whose value was sent as the amount, if any.
   */
  function failed(what, res, amountField, declineNote) {
    var e = (res.body && res.body.error) || {};
    if (e.code === 'card_declined') {
      var tx = e.transaction || {};
      return show('declined', 'Declined: ' + (tx.error || tx.result || e.message) + (declineNote ? ' (' + declineNote + ')' : ''), res.body);
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

  window.demoPage = {
    state: state, $: $, show: show, api: api, methodsPath: methodsPath, cents: cents, money: money, said: said,
    expiry: expiry, label: label, name: name, fullLabel: fullLabel, fieldError: fieldError, failed: failed,
  };
})();
