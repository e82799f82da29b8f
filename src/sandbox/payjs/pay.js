/*
 * Pay.js stand-in served by the tokengate sandbox at /js/v2/pay.js (gateway-facts.md, "Adding a card without
 * touching card data"). Same surface as the gateway's script:
 *   const client = new usaepay.Client(publicKey);
 *   const card = client.createPaymentCardEntry();
 *   card.generateHTML(style); card.addHTML('containerId');
 *   card.addEventListener('error', (message) => …);
 *   client.getPaymentKey(card).then((result) => result.error ? … : sendToServer(result));
 *   const check = client.createPaymentCheckEntry();   // the check form (gateway-facts.md, ACH): /js/v2/check.html
 *   check.generateHTML(style); check.addHTML('containerId'); client.getPaymentKey(check).then(…);
 * The card form is an iframe on this script's origin; the page only ever receives the payment key (or an
 * error), never what was typed.
 */
(function () {
  'use strict';
  var current = document.currentScript;
  var FRAME_ORIGIN = new URL(current && current.src ? current.src : '/js/v2/pay.js', window.location.href).origin;
  var nextId = 1;

  /** `frame`: the form's page on the gateway's origin; `title` and `height` of its iframe. */
  function PaymentCardEntry(client, form) {
    this.client = client;
    this.form = form || { page: 'card-frame.html', title: 'Card details', kind: 'payment-card', height: '130px' };
    this.style = {};
    this.iframe = null;
    this.listeners = { error: [], change: [] };
    this.onMessage = this.onMessage.bind(this);
  }

  PaymentCardEntry.prototype.generateHTML = function (style) {
    this.style = style && typeof style === 'object' ? style : {};
    return this;
  };

  PaymentCardEntry.prototype.addHTML = function (containerId) {
    var container = document.getElementById(containerId);
    if (!container) throw new Error('usaepay: no element with id "' + containerId + '"');
    var config = { parent: window.location.origin, style: this.style };
    var iframe = document.createElement('iframe');
    iframe.src = FRAME_ORIGIN + '/js/v2/' + this.form.page + '#' + encodeURIComponent(JSON.stringify(config));
    iframe.title = this.form.title;
    iframe.setAttribute('data-usaepay', this.form.kind);
    iframe.style.border = '0';
    iframe.style.width = '100%';
    iframe.style.height = this.form.height;
    container.appendChild(iframe);
    this.iframe = iframe;
    window.addEventListener('message', this.onMessage);
  };

  PaymentCardEntry.prototype.addEventListener = function (type, callback) {
    if (!this.listeners[type]) this.listeners[type] = [];
    this.listeners[type].push(callback);
  };

  PaymentCardEntry.prototype.emit = function (type, value) {
    (this.listeners[type] || []).forEach(function (cb) {
      try {
        cb(value);
      } catch (e) {
        setTimeout(function () { throw e; });
      }
    });
  };

  /** Messages from our own iframe only: validation errors as the customer types. */
  PaymentCardEntry.prototype.onMessage = function (event) {
    if (event.origin !== FRAME_ORIGIN || !this.iframe || event.source !== this.iframe.contentWindow) return;
    var data = event.data || {};
    if (data.type === 'usaepay:error') this.emit('error', String(data.message || ''));
    if (data.type === 'usaepay:change') this.emit('change', { complete: Boolean(data.complete) });
  };

  function Client(publicKey) {
    if (typeof publicKey !== 'string' || publicKey === '') throw new Error('usaepay.Client needs the merchant public key');
    this.publicKey = publicKey;
  }

  Client.prototype.createPaymentCardEntry = function () {
    return new PaymentCardEntry(this);
  };

  /** The check form: the same entry, framing /js/v2/check.html (bank details stay in that iframe). */
  Client.prototype.createPaymentCheckEntry = function () {
    return new PaymentCardEntry(this, { page: 'check.html', title: 'Bank account details', kind: 'payment-check', height: '230px' });
  };

  /** Resolves with the payment key (a string), or with {error: {message, code}} as the gateway's script does. */
  Client.prototype.getPaymentKey = function (entry) {
    var publicKey = this.publicKey;
    return new Promise(function (resolve) {
      if (!entry || !entry.iframe || !entry.iframe.contentWindow) {
        resolve({ error: { message: 'The payment form is not on the page yet.', code: 'no_form' } });
        return;
      }
      var id = 'k' + nextId++;
      var frame = entry.iframe.contentWindow;
      var timer = setTimeout(function () {
        window.removeEventListener('message', onAnswer);
        resolve({ error: { message: 'The payment form did not answer.', code: 'timeout' } });
      }, 30000);
      function onAnswer(event) {
        if (event.origin !== FRAME_ORIGIN || event.source !== frame) return;
        var data = event.data || {};
        if (data.type !== 'usaepay:paymentKey' || data.id !== id) return;
        clearTimeout(timer);
        window.removeEventListener('message', onAnswer);
        if (data.error) {
          entry.emit('error', data.error.message);
          resolve({ error: data.error });
        } else {
          resolve(data.key);
        }
      }
      window.addEventListener('message', onAnswer);
      frame.postMessage({ type: 'usaepay:getPaymentKey', id: id, publicKey: publicKey }, FRAME_ORIGIN);
    });
  };

  window.usaepay = { Client: Client, version: 'tokengate-sandbox' };
})();
