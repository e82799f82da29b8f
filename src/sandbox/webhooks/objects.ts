import type { BatchRecord } from '../batches';
import type { Lifecycle, LifecycleTx } from '../lifecycle';
import { batchView, transactionView } from '../lookups';

/**
 * The `object` and `changes` of a webhook (gateway-facts.md, Webhooks: "a subset of data from the object
 * involved"). Taken from the lookup views (lookups.ts), so an event says what `GET transactions/{key}` or
 * `GET batches/{key}` would say at that moment, in fewer fields. README.md, "Webhooks", lists them.
 */

export type Fields = Record<string, unknown>;

/** The lookup's fields an event's transaction carries, in the lookup's order. */
const TRANSACTION_FIELDS = [
  'type', 'key', 'refnum', 'created', 'trantype_code', 'trantype', 'result_code', 'result', 'status_code', 'status',
  'creditcard', 'batch', 'amount', 'auth_amount', 'invoice', 'custkey', 'original',
] as const;

/** What a follow-up can change on a transaction: `changes.old`/`changes.new` hold those that did. */
const TRACKED = ['status_code', 'status', 'trantype_code', 'trantype', 'auth_amount', 'batch'] as const;

export function transactionObject(life: Lifecycle, tx: LifecycleTx): Fields {
  // As before issue 42 (the webhooks' fields are issue 36's): `original` stays; custom_fields are not in FIELDS.
  const view = transactionView(life, tx, { lookupRefunds: 'listed', customFields: 'dropped' });
  const out: Fields = {};
  for (const f of TRANSACTION_FIELDS) if (view[f] !== undefined) out[f] = view[f];
  // The masked number and the brand letter only: an event carries no more of the card than that.
  const card = view.creditcard as Fields | undefined;
  if (card) out.creditcard = { type: card.type, number: card.number };
  return out;
}

/** The transaction's fields a change is reported in (a field it lacks, e.g. no batch yet, is null). */
export function trackedFields(object: Fields): Fields {
  return Object.fromEntries(TRACKED.map((f) => [f, object[f] ?? null]));
}

/** Only the fields that differ, each side with its value. */
export function changed(before: Fields, after: Fields): { old: Fields; new: Fields } {
  const out = { old: {} as Fields, new: {} as Fields };
  for (const f of Object.keys(after)) {
    if (JSON.stringify(before[f] ?? null) === JSON.stringify(after[f])) continue;
    out.old[f] = before[f] ?? null;
    out.new[f] = after[f];
  }
  return out;
}

/**
 * A closed batch as its event names it: the batch, not its sales. Counts and totals as strings (the gateway's
 * batch numbers are strings on the wire, gateway-facts.md); `response` A = closed and settled.
 */
export function batchObject(life: Lifecycle, b: BatchRecord): Fields {
  const v = batchView(life, b);
  return {
    type: 'batch',
    key: v.key,
    batchrefnum: v.batchrefnum,
    sequence: v.sequence,
    response: 'A',
    status: v.status,
    opened: v.opened,
    closed: v.closed,
    numsales: String(v.sales_count),
    totalsales: v.sales_amount,
    numvoids: String(v.voids_count),
    totalvoids: v.voids_amount,
    numrefunds: String(v.refunds_count),
    totalrefunds: v.refunds_amount,
    netamount: v.total_amount,
  };
}
