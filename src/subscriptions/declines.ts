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

/**
 * A returned bank payment's class, by its return code (gateway-facts.md, ACH; the NACHA rules): R01 insufficient
 * funds and R09 uncollected funds may be presented again (soft: retried on the schedule); every other code (R02
 * account closed, R03 no account, R04 invalid number, R07 authorization revoked, R08 payment stopped, R10 not
 * authorized, R16 frozen, …) and a return without a code are hard: that account is not debited again for the
 * subscription until the shopper gives another method (and, for R07/R10, a new authorization).
 */
const SOFT_RETURNS: ReadonlySet<string> = new Set(['R01', 'R09']);

/**
 * The `decline_code` of a bank debit that failed after it was accepted (`ach.failed`): the facts give a failure no
 * reason or code ("some processors only"), so it is read as a return without a code is: hard (the account is not
 * debited again for the subscription). It takes the return's path (returns.ts, applyReturn), history `result`
 * `returned`, this code telling the two apart.
 */
export const ACH_FAILED_CODE = 'ach_failed';

export function returnClassOf(code: string | undefined): DeclineClass {
  return code !== undefined && SOFT_RETURNS.has(code) ? 'soft' : 'hard';
}
