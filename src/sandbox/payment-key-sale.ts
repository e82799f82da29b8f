import { maskCardNumber } from './cards';
import type { SandboxCore } from './core';
import { ERRORS, SALE_ERRORS } from './errors';
import type { SaleOutcome } from './ledger';
import type { PaymentKeyCard } from './payment-keys';
import { fail } from './reads';
import type { Processed } from './respond';
import { isTruthyFlag } from './sale-request';

/**
 * `payment_key` in place of `creditcard` on `cc:sale` and `authonly` (gateway-facts.md, Pay.js): the key is
 * consumed (single use) and the sale runs on the card it stands for, exactly as with the raw number, so the
 * test cards behave the same. With `custkey` and `save_customer_paymethod` an approved (or partially approved)
 * card becomes a payment method of that customer; the answer then names the customer (`customer {custkey,
 * custid}`) and, with `save_card`, `savedcard.key` is that payment method's card reference token.
 */

export interface PaymentKeyUse {
  card: PaymentKeyCard;
  saveToCustomer: boolean;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const present = (v: unknown) => v !== undefined && v !== null && v !== '';

/** Cardholder and AVS details a server may send beside a payment key. */
const BILLING_FIELDS = ['cardholder', 'avs_street', 'avs_postalcode'] as const;

/** Undefined when the body names no payment key; else the body to charge, or the answer refusing it. */
export function usePaymentKey(core: SandboxCore, json: Record<string, unknown>): { json: Record<string, unknown>; use: PaymentKeyUse } | { answer: Processed } | undefined {
  if (!present(json.payment_key)) return undefined;
  if (present(json.creditcard) || present(json.UMCardRef)) return { answer: fail(ERRORS.ambiguousPaymentKey) };
  if (typeof json.payment_key !== 'string' || json.payment_key.length > 255) return { answer: fail(ERRORS.invalidField, 'payment_key must be a string') };
  // The server's billing details beside the key (top level, like method_name) fill in or replace what the
  // card form collected (emulator choice, README). Checked before the key is spent.
  const billing: Pick<PaymentKeyCard, (typeof BILLING_FIELDS)[number]> = {};
  for (const f of BILLING_FIELDS) {
    const v = json[f];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string' || v.length > 255) return { answer: fail(ERRORS.invalidField, `${f} must be a string`) };
    billing[f] = v;
  }
  const taken = core.paymentKeys.consume(json.payment_key, core.publicKey);
  if (!taken.ok) {
    core.stats.saleErrors++;
    const e = SALE_ERRORS[taken.reason === 'unknown' ? 'paymentKeyUnknown' : taken.reason === 'used' ? 'paymentKeyUsed' : 'paymentKeyExpired'];
    const invoice = typeof json.invoice === 'string' ? json.invoice : '';
    return { answer: { status: 200, body: { type: 'transaction', key: '', refnum: '', is_duplicate: 'N', result_code: 'E', result: 'Error', authcode: '', invoice, ...e } } };
  }
  const card = { ...taken.card, ...billing };
  const rest = Object.fromEntries(Object.entries(json).filter(([k]) => k !== 'payment_key' && !(BILLING_FIELDS as readonly string[]).includes(k)));
  const creditcard = {
    number: card.number,
    expiration: card.expiration,
    ...(card.cvc ? { cvc: card.cvc } : {}),
    ...(card.cardholder ? { cardholder: card.cardholder } : {}),
    ...(card.avs_street ? { avs_street: card.avs_street } : {}),
    ...(card.avs_postalcode ? { avs_postalcode: card.avs_postalcode } : {}),
  };
  return { json: { ...rest, creditcard }, use: { card, saveToCustomer: isTruthyFlag(json.save_customer_paymethod) } };
}

/** After the sale: store the card on the customer when asked and approved; fix up the answer. */
export function savePaymentKeyCard(core: SandboxCore, outcome: SaleOutcome, use: PaymentKeyUse, custkey: string | undefined, methodName: unknown, now: number): void {
  if (outcome.record) outcome.record.cardSource = 'payment_key';
  const approved = outcome.response.result_code === 'A' || outcome.response.result_code === 'P';
  if (!use.saveToCustomer || !custkey || !approved || outcome.folded) return;
  const customer = core.fixtures.customer(custkey);
  if (!customer) return;
  // Unnamed, a method is named by its masked number (emulator choice, README): how a customer recognises it.
  const name = typeof methodName === 'string' && methodName !== '' ? methodName : maskCardNumber(use.card.number);
  const method = core.fixtures.addMethod(customer, { ...use.card, method_name: name }, new Date(now));
  const response = outcome.response as unknown as Record<string, unknown>;
  response.customer = { custkey: customer.key, custid: customer.custid };
  if (isRecord(response.savedcard)) response.savedcard = { ...response.savedcard, key: method.cardref };
}
