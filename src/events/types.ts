/**
 * Payment events (contract, "Payment events (out)"): what tokengate tells the merchant's own services about money
 * and wallets. They come from two places only, so nothing has to remember to emit:
 *   - a write's completion (src/writes, and the reconciler's resolution of an unknown one): the write's operation
 *     and stored answer name the event (write-events.ts, one table);
 *   - a change to a sale's record that tokengate hears of (a gateway webhook, a refresh that reads the gateway):
 *     src/sale-records reports it, src/sales/sale-events.ts renders it.
 * The same money reported twice (a replay, a reconciled retry, the gateway's webhook about tokengate's own write)
 * carries the same `change` and is one event in the log (appended atomically with the dedupe).
 */
export type PaymentEventType =
  | 'sale.succeeded'
  | 'sale.authorized'
  | 'sale.declined'
  | 'sale.captured'
  | 'sale.voided'
  | 'sale.settled'
  | 'refund.succeeded'
  | 'refund.voided'
  | 'sale.unvoided'
  | 'sale.adjusted'
  // Bank payments (contract, "Bank payments"; src/webhooks/ach-events.ts).
  | 'sale.submitted'
  | 'sale.returned'
  | 'sale.failed'
  | 'payment_method.bank_notice'
  | 'payment_method.added'
  | 'payment_method.removed'
  // The gateway's card updater changed a stored card (src/webhooks/card-updates.ts).
  | 'payment_method.updated'
  | 'customer.created'
  | 'customer.deleted'
  // Subscriptions (issue 37): each a change of the subscription object, which is the event's data.
  | 'subscription.created'
  | 'subscription.renewed'
  | 'subscription.payment_failed'
  | 'subscription.past_due'
  | 'subscription.unpaid'
  | 'subscription.canceled'
  | 'subscription.completed'
  | 'subscription.updated'
  // Settlements (issue 39): a closed batch read and matched (its summary), and each line that is not `matched`.
  | 'settlement.closed'
  | 'settlement.mismatch';

export interface EventDraft {
  type: PaymentEventType;
  /**
   * The identity of the money movement or wallet change (e.g. `void:<sale key>`, `refund:<refund key>`): whoever
   * reports it (tokengate's write, its reconciler, the gateway's webhook, a refresh), it is one event.
   */
  change: string;
  /** The sale, refund, payment method or customer object as the API answers it (masked, never card data). */
  data: unknown;
}

/** One event as the log keeps it and as receivers get it (the body of every delivery). */
export interface PaymentEvent {
  /** `evt_<ms>-<seq>`: the log's own order, the same on every delivery (`webhook-id`). */
  id: string;
  type: PaymentEventType;
  /** When it was appended, Unix seconds. */
  created: number;
  data: unknown;
}

/** Where drafts go: the durable event log, or nowhere when none is wired. */
export interface EventSink {
  /** Appends each draft unless its `change` is already in the log; resolves once every append is stored. */
  append(drafts: readonly EventDraft[]): Promise<void>;
}

/** An event handed to one destination's delivery, with the attempt it is on (1 = the first). */
export interface DueEvent {
  event: PaymentEvent;
  attempt: number;
}

/**
 * The durable log (Redis Streams on Redis: one stream, one consumer group per destination) and the delivery
 * bookkeeping each destination needs: new events for a consumer, events whose retry is due, acknowledgement.
 * One consumer holds an event at a time; a dead consumer's events fall due again on their own.
 */
export interface EventLog extends EventSink {
  /** Events after `after` (an event id; none: the oldest kept), oldest first, at most `limit`. */
  list(after: string | undefined, limit: number): Promise<PaymentEvent[]>;
  /** Makes the destination's group if it is missing (it starts at the log's end: events from now on). */
  ensureDestination(destination: string): Promise<void>;
  /** Events no consumer of the destination has taken yet, now taken by `consumer` (attempt 1). */
  takeNew(destination: string, consumer: string, count: number): Promise<DueEvent[]>;
  /**
   * Events taken earlier whose next attempt is due, now taken by `consumer` with the attempt count raised.
   * `dueAfterMs[n - 1]`: how long after the start (or stamp) of an event's n-th attempt the next may start (the
   * last value serves every later attempt).
   */
  takeDue(destination: string, consumer: string, dueAfterMs: readonly number[], count: number): Promise<DueEvent[]>;
  /** Stamps a failed attempt as having started `agoMs` ago (the retry schedule counts from its end). */
  stamp(destination: string, consumer: string, id: string, agoMs: number): Promise<void>;
  /** Delivered, or given up: no further attempt. */
  ack(destination: string, id: string): Promise<void>;
  /** Events of the destination taken and not acknowledged, and the oldest one's age (ms). */
  backlog(destination: string): Promise<{ pending: number; oldestMs: number | undefined }>;
}
