/*
 * The check form inside the Pay.js iframe (sandbox origin; gateway-facts.md, ACH): its fields and checks; frame.js
 * answers the page that framed it as for the card form (a payment key or an error message, never the account).
 */
(function () {
  'use strict';
  var digits = window.usaepayFrame.digits;
  var holder = document.getElementById('ach-holder');
  var routing = document.getElementById('ach-routing');
  var account = document.getElementById('ach-account');
  var type = document.getElementById('ach-type');

  /** The ABA checksum (gateway-facts.md, ACH). */
  function aba(d) {
    if (!/^\d{9}$/.test(d)) return false;
    var w = [3, 7, 1, 3, 7, 1, 3, 7, 1];
    var sum = 0;
    for (var i = 0; i < 9; i++) sum += w[i] * Number(d[i]);
    return sum % 10 === 0;
  }

  window.usaepayFrame({
    inputs: [holder, routing, account],
    styled: [holder, routing, account, type],
    problem: function () {
      if (holder.value.trim() === '') return { field: holder, text: 'Enter the account holder\'s name.' };
      if (!aba(digits(routing.value))) return { field: routing, text: 'Check the 9-digit routing number.' };
      if (!/^\d{4,17}$/.test(digits(account.value))) return { field: account, text: 'Check the account number.' };
      return null;
    },
    invalidCode: 'invalid_check',
    body: function (publicKey) {
      return { public_key: publicKey, check: { accountholder: holder.value.trim(), routing: digits(routing.value), account: digits(account.value), account_type: type.value } };
    },
    // The numbers go with the key; the holder's name stays (a second key for the same person).
    clear: function () {
      routing.value = '';
      account.value = '';
    },
    refused: 'The account was not accepted.',
    refusedField: routing,
  });
})();
