import type { GatewayClient } from '../gateway/client';
import type { GatewayResult, ListEnvelope, PaymentMethod, Transaction } from '../gateway/types';

/** Runs one read of the customer's methods through the budget (the caller picks the class, share and wait). */
export type ReadMethods = (call: () => Promise<GatewayResult<ListEnvelope<PaymentMethod>>>) => Promise<GatewayResult<ListEnvelope<PaymentMethod>>>;

/** The last four digits of a masked number (`4000xxxxxxxx2224`). */
export const last4Of = (masked: string | undefined): string | undefined => masked?.match(/(\d{4})\s*$/)?.[1];

/** What identifies the card a sale stored: its last four digits and (with `save_card`) its expiration. */
export function savedCardOf(tx: Pick<Transaction, 'savedcard' | 'creditcard'>): { last4: string | undefined; expiration: string | undefined } {
  return { last4: last4Of(tx.savedcard?.cardnumber ?? tx.creditcard?.number), expiration: tx.savedcard?.expiration || undefined };
}

/**
 * The payment method a sale just stored on the customer (`save_customer_paymethod`): the gateway's answer does not
 * name it (gateway-facts.md, the wallet), so it is the customer's newest method with the card's last four digits
 * and, when known, its expiration (`GET /customers/{c}/payment_methods`, one read). Undefined when none matches.
 */
export async function findNewMethod(
  gateway: Pick<GatewayClient, 'listPaymentMethods'>, read: ReadMethods, custkey: string, last4: string | undefined, expiration: string | undefined,
): Promise<PaymentMethod | undefined> {
  const list = (await read(() => gateway.listPaymentMethods(custkey, { limit: 100, offset: 0 }))).value;
  const candidates = list.data.filter((m) => (last4 === undefined || String(m.ccnum4last ?? '') === last4) && (expiration === undefined || String(m.expires ?? '') === expiration));
  // Newest by `added` ("YYYY-MM-DD hh:mm:ss" sorts as text); equal stamps: the later in the list.
  const found = candidates.reduce<PaymentMethod | undefined>((best, m) => (!best || String(m.added ?? '') >= String(best.added ?? '') ? m : best), undefined);
  // The customer's only card is its default (contract: exactly one default when it has any), whatever sortord the
  // gateway gave it: the answer and the payment_method.added event said `default: false` for a first card
  // (issue 36, item 5), while the list said true.
  return found && list.data.length === 1 ? { ...found, default: true } : found;
}
