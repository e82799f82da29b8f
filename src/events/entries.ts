import type { PaymentEvent, PaymentEventType } from './types';

/**
 * An event's id is its place in the log: `evt_` and the stream entry id (`<ms>-<seq>`), so `GET /v1/events?after=`
 * reads on from it and ids sort as the log does. (A clock value and a counter: never card data, src/card.)
 */
export const EVENT_ID = /^evt_(\d{1,16})-(\d{1,19})$/;

const TYPES: ReadonlySet<string> = new Set<PaymentEventType>([
  'sale.succeeded', 'sale.authorized', 'sale.declined', 'sale.captured', 'sale.voided', 'sale.settled', 'refund.succeeded',
  'refund.voided', 'sale.unvoided', 'sale.adjusted', 'payment_method.added', 'payment_method.removed', 'payment_method.updated', 'customer.created', 'customer.deleted',
  'subscription.created', 'subscription.renewed', 'subscription.payment_failed', 'subscription.past_due', 'subscription.unpaid',
  'subscription.canceled', 'subscription.completed', 'subscription.updated',
  'settlement.closed', 'settlement.mismatch',
  'sale.submitted', 'sale.returned', 'sale.failed', 'payment_method.bank_notice',
]);

export type EntryFields = Record<string, string>;

export const eventIdOf = (entryId: string): string => `evt_${entryId}`;

/** The stream entry id of an event id (callers validated it against EVENT_ID). */
export function entryIdOf(eventId: string): string {
  const m = EVENT_ID.exec(eventId);
  if (!m) throw new Error('not an event id');
  return `${m[1]}-${m[2]}`;
}

/** A log entry as the event it holds; undefined for an entry that is not one (never thrown on Redis content). */
export function eventOf(entryId: string, fields: EntryFields): PaymentEvent | undefined {
  const type = fields.type;
  if (!type || !TYPES.has(type) || fields.data === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(fields.data);
  } catch {
    return undefined;
  }
  return { id: eventIdOf(entryId), type: type as PaymentEventType, created: Math.floor(Number(entryId.split('-')[0]) / 1000), data };
}
