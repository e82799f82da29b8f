/**
 * The gateway's webhook body, read once its signature holds (gateway-facts.md, Webhooks):
 * `{"type":"event","event_triggered","event_type","event_body":{"merchant":{"merch_key"},"object","changes"},"event_id"}`.
 * The object is "a subset of data from the object involved": a transaction or a batch. The event type is its
 * meaning; of the object only `key` is required (issue 36): the reference's own examples carry no
 * `trantype_code` or `status_code`, a `refnum` that is a string in some and a JSON number in others, a void
 * with no `amount`, and a refund that names no sale (test/fixtures/gateway-webhooks/).
 */
export interface GatewayEvent {
  id: string;
  type: string;
  /** `event_body.merchant.merch_key`, when given. */
  merchant?: string;
  /** `event_triggered` ("YYYY-MM-DD hh:mm:ss"), when given. */
  triggered?: string;
  /** The event's subset object (a transaction or a batch). */
  object: Record<string, unknown>;
  /** `event_body.changes.new`, when given as an object (the `ach.*` events carry their news there). */
  changed?: Record<string, unknown>;
}

const ID = /^[A-Za-z0-9_-]{8,128}$/;

/** The event, or undefined when the body is not one (the caller answers 400, echoing nothing). */
export function parseGatewayEvent(text: string): GatewayEvent | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { type, event_id: id, event_type: eventType, event_body: eventBody, event_triggered: triggered } = body as Record<string, unknown>;
  if (type !== 'event' || typeof id !== 'string' || !ID.test(id) || typeof eventType !== 'string' || eventType.length > 100) return undefined;
  const { object, merchant, changes } = (eventBody ?? {}) as { object?: unknown; merchant?: { merch_key?: unknown } | null; changes?: { new?: unknown } | null };
  const changed = changes && typeof changes === 'object' ? changes.new : undefined;
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return undefined;
  const merchKey = merchant && typeof merchant === 'object' ? merchant.merch_key : undefined;
  return {
    id,
    type: eventType,
    ...(typeof merchKey === 'string' ? { merchant: merchKey } : {}),
    ...(typeof triggered === 'string' ? { triggered } : {}),
    object: object as Record<string, unknown>,
    ...(changed !== null && typeof changed === 'object' && !Array.isArray(changed) ? { changed: changed as Record<string, unknown> } : {}),
  };
}

/** A transaction event's object as far as tokengate reads it: every field beyond `key` optional. */
export interface EventTransaction {
  key: string;
  refnum?: string;
  /** Cents of `auth_amount`, `amount` and `amount_detail.original_amount`, each when given as money. */
  authCents?: number;
  amountCents?: number;
  originalCents?: number;
  resultCode?: string;
  invoice?: string;
  trantype?: string;
  batch?: { key: string; batchrefnum: string; sequence?: string };
  /** `original.key`: no documented event carries it; read when a gateway sends it. */
  original?: string;
}

const MONEY = /^\d{1,10}(\.\d{1,2})?$/;
const cents = (v: unknown): number | undefined => {
  const text = typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v.toFixed(2) : v;
  return typeof text === 'string' && MONEY.test(text) ? Math.round(Number(text) * 100) : undefined;
};
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : undefined);
const KEY = /^[A-Za-z0-9_-]{1,64}$/;

/** The object as a transaction, or undefined when it has no usable `key` (the one field an event must carry). */
export function readTransaction(o: Record<string, unknown>): EventTransaction | undefined {
  const key = text(o.key);
  if (!key || !KEY.test(key)) return undefined;
  const tx: EventTransaction = { key };
  const refnum = text(o.refnum);
  if (refnum !== undefined) tx.refnum = refnum;
  const [auth, amount] = [cents(o.auth_amount), cents(o.amount)];
  if (auth !== undefined) tx.authCents = auth;
  if (amount !== undefined) tx.amountCents = amount;
  const detail = o.amount_detail as Record<string, unknown> | null | undefined;
  const original = detail && typeof detail === 'object' ? cents(detail.original_amount) : undefined;
  if (original !== undefined) tx.originalCents = original;
  for (const [field, name] of [['result_code', 'resultCode'], ['invoice', 'invoice'], ['trantype', 'trantype']] as const) {
    const v = text(o[field]);
    if (v !== undefined) tx[name] = v;
  }
  const b = o.batch as Record<string, unknown> | null | undefined;
  const batchKey = b && typeof b === 'object' ? text(b.key) : undefined;
  if (b && batchKey) tx.batch = { key: batchKey, batchrefnum: text(b.batchrefnum) ?? '', ...(text(b.sequence) ? { sequence: text(b.sequence) as string } : {}) };
  const orig = o.original as Record<string, unknown> | null | undefined;
  const origKey = orig && typeof orig === 'object' ? text(orig.key) : undefined;
  if (origKey && KEY.test(origKey)) tx.original = origKey;
  return tx;
}

/**
 * Every money event type of gateway-facts.md, each applied or ignored on purpose (src/webhooks/intake.ts says
 * why); any other type is acknowledged and counted as `other`.
 */
export const APPLIED_TYPES = [
  'transaction.sale.success', 'transaction.sale.failure', 'transaction.sale.voided', 'transaction.sale.captured', 'transaction.sale.adjusted',
  'transaction.sale.unvoided', 'transaction.refund.success', 'transaction.refund.voided', 'settlement.batch.success',
  'settlement.batch.failure',
] as const;

/** Money event types ignored on purpose, with the reason (counted by their own name, result `ignored`). */
export const IGNORED_TYPES: Readonly<Record<string, string>> = {
  'transaction.sale.queued': 'held for review: no money moved; its later success, failure or void is what counts',
};
