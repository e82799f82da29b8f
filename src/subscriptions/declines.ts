import type { Transaction } from '../gateway/types';
import type { DeclineClass } from './types';

/**
 * A declined renewal's class (gateway-facts.md, "Recurring and other charges the shopper does not start"; the
 * networks' rules as Stripe, Recurly and hyperswitch apply them). Hard: never retried on the same card (10257 not
 * permitted, 10262 restricted, lost or stolen, pick-up, invalid account; 79248/79249 the cardholder's stop on
 * recurring; 601/602 an invalid card reference). Everything else, a gateway error (E) included, is soft: worth a
 * later retry (10127 generic decline, 10205 do not honor, 10251 insufficient funds).
 */
const HARD_CODES: ReadonlySet<string> = new Set(['10257', '10262', '79248', '79249', '601', '602']);

export function declineClassOf(tx: Pick<Transaction, 'result_code' | 'error_code'>): DeclineClass {
  return tx.error_code !== undefined && HARD_CODES.has(tx.error_code) ? 'hard' : 'soft';
}
