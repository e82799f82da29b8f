/*
 * The card form inside the Pay.js iframe (sandbox origin): its fields and checks; frame.js answers the page that
 * framed it (a payment key or an error message, never the card).
 */
(function () {
  'use strict';
  var digits = window.usaepayFrame.digits;
  var number = document.getElementById('cc-number');
  var exp = document.getElementById('cc-exp');
  var cvc = document.getElementById('cc-csc');

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

  window.usaepayFrame({
    inputs: [number, exp, cvc],
    /** The first problem with what was typed, or null (client-side checks; the server checks again). */
    problem: function () {
      var n = digits(number.value);
      if (n.length < 12 || n.length > 19 || !luhn(n)) return { field: number, text: 'Check the card number.' };
      var e = digits(exp.value);
      if (!/^(0[1-9]|1[0-2])\d\d$/.test(e)) return { field: exp, text: 'Enter the expiry as MM/YY.' };
      if (!/^\d{3,4}$/.test(cvc.value)) return { field: cvc, text: 'Enter the 3 or 4 digit CVC.' };
      return null;
    },
    invalidCode: 'invalid_card',
    body: function (publicKey) {
      return { public_key: publicKey, card: { number: digits(number.value), expiration: digits(exp.value), cvc: cvc.value } };
    },
    // One key per card entry: the form is cleared (all of it, so a second card cannot inherit the first's expiry),
    // and a second key needs the card typed again.
    clear: function () {
      number.value = '';
      exp.value = '';
      cvc.value = '';
    },
    refused: 'The card was not accepted.',
    refusedField: number,
  });
})();
