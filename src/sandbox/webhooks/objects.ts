import type { BatchRecord } from '../batches';
import type { Lifecycle, LifecycleTx } from '../lifecycle';
import { batchView, gatewayTime } from '../lookups';
import { formatCents } from '../sale-request';
import type { BatchEventType, WebhookEventType } from './events';

/**
 * The `object` of a webhook: exactly the fields the REST reference's example of that event type shows
 * (UsaEPay.NET docs/api-rest.md, "Webhooks"; test/fixtures/gateway-webhooks/ holds those examples, and
 * test/integration/sandbox-webhooks.test.ts checks each event's shape against them). gateway-facts.md, "Money
 * webhooks in detail": no `trantype_code`, no `status_code`, a refund names no sale (no `original`), a void
 * carries no `amount`. `refnum` is a JSON number where the example has one (sale success and failure, refund
 * success), a string elsewhere. README.md, "Webhooks", says where each value comes from.
 */

export type Fields = Record<string, unknown>;

/** Which example's field set an event type follows. */
type Shape = 'sale' | 'moved' | 'voided' | 'refund' | 'refund-voided';
const SHAPES: Record<Exclude<WebhookEventType, BatchEventType>, Shape> = {
  'transaction.sale.success': 'sale',
  'transaction.sale.failure': 'sale',
  'transaction.sale.captured': 'moved',
  'transaction.sale.adjusted': 'moved',
  'transaction.sale.voided': 'voided',
  'transaction.sale.unvoided': 'voided',
  'transaction.refund.success': 'refund',
  'transaction.refund.voided': 'refund-voided',
};

const RESULT = { A: 'Approved', P: 'Partially Approved', D: 'Declined' } as const;

/**
 * The transaction's object for `type`. `originalCents`: `amount_detail.original_amount` where the example has
 * it (the amount before this change: what was authorized before a capture or an adjustment; the amount itself
 * for a void, an unvoid, a refund).
 */
export function transactionObject(life: Lifecycle, tx: LifecycleTx, type: Exclude<WebhookEventType, BatchEventType>, originalCents = tx.amountCents): Fields {
  const shape = SHAPES[type];
  const ref = life.batchRefOf(tx);
  const batch = ref ? { batchrefnum: String(ref.batchrefnum), sequence: ref.sequence, type: 'batch', key: ref.key } : undefined;
  const card = tx.creditcard as Fields | undefined;
  const base: Fields = { type: 'transaction', key: tx.key };
  const original = { original_amount: formatCents(originalCents) };
  const result = RESULT[tx.resultCode];
  if (shape === 'sale') {
    return {
      ...base,
      refnum: Number(tx.refnum),
      auth_amount: formatCents(tx.resultCode === 'D' ? 0 : tx.authCents),
      amount: formatCents(tx.amountCents),
      ...(tx.amountDetail ? { amount_detail: tx.amountDetail } : {}),
      authcode: tx.authcode,
      result_code: tx.resultCode,
      invoice: tx.invoice,
      avs: tx.avs ?? { result_code: '' },
      cvc: tx.cvc ?? { result_code: '' },
      ...(tx.resultCode === 'D' ? {} : { trantype: tx.kind === 'authonly' ? 'Credit Card Auth Only' : 'Credit Card Sale' }),
      // The masked number and the brand letter only: an event carries no more of the card than that.
      ...(card ? { creditcard: { type: card.type, number: card.number } } : {}),
      ...(batch ? { batch } : {}),
      result,
    };
  }
  const brand = { creditcard: { type: card?.type ?? '' } };
  const originalDate = { original_date: gatewayTime(tx.created) };
  if (shape === 'voided' || shape === 'refund-voided') {
    return { ...base, refnum: tx.refnum, amount_detail: original, authcode: tx.authcode, result_code: tx.resultCode, result, ...brand, ...originalDate };
  }
  if (shape === 'refund') {
    return {
      ...base,
      refnum: Number(tx.refnum),
      auth_amount: formatCents(tx.authCents),
      amount_detail: original,
      authcode: tx.authcode,
      result_code: tx.resultCode,
      avs: tx.avs ?? { result_code: '' },
      cvc: tx.cvc ?? { result_code: '' },
      ...(batch ? { batch } : {}),
      result,
      ...brand,
    };
  }
  return {
    ...base,
    refnum: tx.refnum,
    auth_amount: formatCents(tx.authCents),
    amount: formatCents(tx.authCents),
    amount_detail: original,
    authcode: tx.authcode,
    result_code: tx.resultCode,
    avs: { result_code: '' },
    cvc: { result_code: '' },
    ...(batch ? { batch } : {}),
    result,
    ...brand,
    ...originalDate,
  };
}

/** What a change is reported in (`changes.old`/`changes.new`, gateway-facts.md, Webhooks): the amounts and the batch. */
const TRACKED = ['auth_amount', 'batch'] as const;

/** The transaction's tracked fields (a field it lacks, e.g. no batch yet, is null). */
export function trackedFields(life: Lifecycle, tx: LifecycleTx): Fields {
  const ref = life.batchRefOf(tx);
  const now: Fields = { auth_amount: formatCents(tx.authCents), batch: ref ? { key: ref.key, batchrefnum: String(ref.batchrefnum), sequence: ref.sequence } : null };
  return Object.fromEntries(TRACKED.map((f) => [f, now[f] ?? null]));
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
 * A closed batch as the reference's `settlement.batch.success` example names it: the batch, not its sales.
 * `totalsales` and `totalcredits` are digit strings with no decimal point (the example's "617799" for 41 sales
 * and "000" read as cents), `numsales` a JSON number, `response` A = closed and settled.
 */
export function batchObject(life: Lifecycle, b: BatchRecord): Fields {
  const v = batchView(life, b);
  const cents = (amount: unknown) => String(Math.round(Number(amount) * 100)).padStart(3, '0');
  return {
    type: 'batch',
    key: v.key,
    batchnum: v.sequence,
    batchrefnum: v.batchrefnum,
    response: 'A',
    totalsales: cents(v.sales_amount ?? 0), // a pair is absent when the batch has none of its kind
    numsales: v.sales_count ?? 0,
    totalcredits: cents(v.refunds_amount ?? 0),
    uri: `batches/${String(v.key)}`,
  };
}

/**
 * A batch whose close failed, as the reference's `settlement.batch.failure` example names it: `type, key,
 * batchnum, batchrefnum`, `response` E, `reason`, `uri`; no totals (the example has none).
 */
export function batchFailureObject(life: Lifecycle, b: BatchRecord, reason: string): Fields {
  const v = batchView(life, b);
  return { type: 'batch', key: v.key, batchnum: v.sequence, batchrefnum: v.batchrefnum, response: 'E', reason, uri: `batches/${String(v.key)}` };
}
