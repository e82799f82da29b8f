import type { StoredResponse, WriteContext } from '../idempotency';
import type { EventDraft, PaymentEventType } from './types';

/**
 * Which payment event each write makes, from what the write is (its operation and context) and the answer it
 * stored: the ONE table every write passes through, at its completion (src/writes) and at the reconciler's
 * resolution of an unknown outcome (src/reconcile), so the event is the same whichever of the two ended it.
 * A new write operation must be named in WriteOp to run through the protocol, and TypeScript then requires its
 * row here: a write added later emits (or says `none`) without anyone remembering to.
 *
 * `change` names the money movement, not who reported it, so the gateway's webhook about the same movement
 * (src/sales/sale-events.ts builds the same identities) is the same event:
 *   sale:<key>            a sale, authorization or decline          capture:<key>     an authorization captured
 *   void:<key>            the sale voided (a void, or a refund of all of an unsettled sale, which the gateway voids)
 *   refund:<refund key>   a refund with a transaction of its own    refund:<sale key>:<write>  a part refunded of an
 *                                                                   unsettled sale (refund:adjust: no key of its own)
 * Replays never reach this table (the protocol answers them before running anything).
 */
export type WriteOp =
  | 'sale'
  | 'authorize'
  | 'capture'
  | 'void'
  | 'refund'
  | 'payment_method'
  | 'customer_create'
  | 'payment_method_remove'
  | 'customer_delete';

/** The write as the table reads it: its context, its stored answer, and its stable reference (writeReference). */
export interface CompletedWrite {
  context: WriteContext;
  response: StoredResponse;
  reference: string;
}

type Rule = (w: CompletedWrite) => EventDraft[];

type Body = Record<string, unknown> | undefined;
const bodyOf = (r: StoredResponse): Body => (r.body !== null && typeof r.body === 'object' ? (r.body as Record<string, unknown>) : undefined);
const keyOf = (o: Body): string | undefined => (typeof o?.key === 'string' && o.key !== '' ? o.key : undefined);
const draft = (type: PaymentEventType, change: string | undefined, data: unknown): EventDraft[] => (change ? [{ type, change, data }] : []);

/**
 * A card added to a customer, told once per method whoever tells it: the add's answer, a sale that stored the card
 * (at its completion, or when named after it: src/sales/new-card.ts), the reconciler's follow-through.
 */
export const paymentMethodAdded = (key: string, data: unknown): EventDraft => ({ type: 'payment_method.added', change: `payment_method.added:${key}`, data });

/** A decline's answer (402 card_declined) carries the sale object in `error.transaction`. */
function declinedSale(r: StoredResponse): Body {
  const tx = (bodyOf(r)?.error as { transaction?: unknown } | undefined)?.transaction;
  return tx !== null && typeof tx === 'object' ? (tx as Record<string, unknown>) : undefined;
}

/** A sale or authorization: 201 approved (partial approvals too), 402 declined; anything else moved nothing. */
const charge = (approved: PaymentEventType): Rule => ({ response }) => {
  if (response.status === 201) return draft(approved, keyOf(bodyOf(response)) && `sale:${keyOf(bodyOf(response))}`, response.body);
  const sale = response.status === 402 ? declinedSale(response) : undefined;
  // A card verification's 402 carries no sale (its `type` is card_verification): no money, no event.
  return sale?.type === 'sale' ? draft('sale.declined', `sale:${keyOf(sale)}`, sale) : [];
};

const WRITE_EVENTS: { readonly [op in WriteOp]: Rule } = {
  sale: charge('sale.succeeded'),
  authorize: charge('sale.authorized'),
  capture: ({ response, context }) => (response.status === 200 ? draft('sale.captured', `capture:${context.sale ?? keyOf(bodyOf(response))}`, response.body) : []),
  void: ({ response, context }) => (response.status === 200 ? draft('sale.voided', `void:${context.sale ?? keyOf(bodyOf(response))}`, response.body) : []),
  refund: ({ response, context, reference }) => {
    const refund = bodyOf(response);
    const key = keyOf(refund);
    if (response.status !== 201 || !key) return [];
    const sale = context.sale ?? (typeof refund?.sale === 'string' ? refund.sale : key);
    // A refund of all of an unsettled sale voided it: the same movement as the gateway's `sale.voided` webhook.
    if (refund?.method === 'void') return draft('refund.succeeded', `void:${sale}`, refund);
    return draft('refund.succeeded', key === sale ? `refund:${sale}:${reference}` : `refund:${key}`, refund);
  },
  payment_method: ({ response }) => {
    const key = keyOf(bodyOf(response));
    return response.status === 201 && key ? [paymentMethodAdded(key, response.body)] : [];
  },
  customer_create: ({ response }) => (response.status === 201 ? draft('customer.created', keyOf(bodyOf(response)) && `customer.created:${keyOf(bodyOf(response))}`, response.body) : []),
  // 204 answers carry no object: the event names what went (the wallet may hand a fuller object: Written.events).
  payment_method_remove: ({ response, context }) =>
    response.status === 204 && context.payment_method
      ? draft('payment_method.removed', `payment_method.removed:${context.payment_method}`, { type: 'customerpaymentmethod', key: context.payment_method, customer: context.customer })
      : [],
  customer_delete: ({ response, context }) =>
    response.status === 204 ? draft('customer.deleted', `customer.deleted:${context.customer}`, { type: 'customer', key: context.customer }) : [],
};

export function isWriteOp(op: string): op is WriteOp {
  return Object.prototype.hasOwnProperty.call(WRITE_EVENTS, op);
}

/**
 * The events a completed write makes. `given`: drafts the write handed over itself (a fuller object than its
 * answer carries); one of the same change replaces the table's. An operation not in the table (a record written
 * by an older version) makes none.
 */
export function eventsOfWrite(write: CompletedWrite, given: readonly EventDraft[] = []): EventDraft[] {
  const derived = isWriteOp(write.context.op) ? WRITE_EVENTS[write.context.op](write) : [];
  const changes = new Set(given.map((d) => d.change));
  return [...derived.filter((d) => !changes.has(d.change)), ...given];
}
