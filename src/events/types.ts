/**
 * Payment events (contract, "Payment events (out)"): what tokengate tells the merchant's own services about money
 * and wallets. Writes hand drafts to the write protocol (`Written.events`), which appends them with the write's
 * completion; the webhook intake and the records append theirs where a record changes. One place emits per change.
 */
export type PaymentEventType =
  | 'sale.succeeded'
  | 'sale.authorized'
  | 'sale.declined'
  | 'sale.captured'
  | 'sale.voided'
  | 'sale.settled'
  | 'refund.succeeded'
  | 'payment_method.added'
  | 'payment_method.removed'
  | 'customer.created'
  | 'customer.deleted';

export interface EventDraft {
  type: PaymentEventType;
  /**
   * The change's identity (e.g. `sale.voided:<sale key>`, `refund.succeeded:<refund key>`): the same change
   * reported twice (a replay, a reconciled retry, the gateway's webhook about tokengate's own write) is one event.
   */
  change: string;
  /** The sale, refund, payment method or customer object as the API answers it (masked, never card data). */
  data: unknown;
}

/** Where drafts go: the durable event log (src/events), or nowhere when none is wired. */
export interface EventSink {
  append(drafts: readonly EventDraft[]): Promise<void>;
}
