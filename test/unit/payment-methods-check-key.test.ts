import type { PaymentMethod } from '../../src/gateway/types';
import { savedByCheck } from '../../src/payment-methods/check-key';

/**
 * Which bank method a check form's key added as a card saved (src/payment-methods/check-key.ts): the gateway does not
 * name it, so it is the newest bank method added no earlier than the check. A bank account the customer kept
 * before (with its authorization) is never taken for it, nor is a card.
 */
const method = (key: string, payType: string, added: string): PaymentMethod => ({
  type: 'customerpaymentmethod', key, pay_type: payType, method_name: key, cardholder: '', expires: '', card_type: '', ccnum4last: '',
  avs_street: '', avs_postalcode: '', default: false, added, updated: added,
});
const CHECK = '2026-11-28 11:05:07';

test('when the customer kept a bank account before and a card was added since, then only the bank method added with the check is taken', () => {
  const methods = [method('old-bank', 'check', '2026-11-28 11:05:06'), method('card', 'cc', '2026-11-28 11:05:08'), method('saved', 'check', '2026-11-28 11:05:07')];
  expect(savedByCheck(methods, CHECK)?.key).toBe('saved');
});

test('when the gateway saved nothing, then nothing is taken (an older bank account stays)', () => {
  expect(savedByCheck([method('old-bank', 'check', '2026-11-28 11:05:06'), method('card', 'cc', '2026-11-28 11:06:00')], CHECK)).toBeUndefined();
});

test('when two bank methods carry stamps at or after the check, then the newest (the later listed on a tie) is taken', () => {
  expect(savedByCheck([method('a', 'check', CHECK), method('b', 'check', CHECK)], CHECK)?.key).toBe('b');
  expect(savedByCheck([method('a', 'check', '2026-11-28 11:05:09'), method('b', 'check', CHECK)], CHECK)?.key).toBe('a');
});
