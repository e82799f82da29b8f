import type { Lifecycle, LifecycleTx } from '../lifecycle';
import { formatCents } from '../sale-request';
import type { Fields } from '../webhooks/objects';

/**
 * The `ach.*` webhooks (gateway-facts.md, ACH): `ach.submitted` (P→B), `ach.settled` (B→S), `ach.returned`
 * (`changes.new` {`status` R, `returned` date, `reason`}), `ach.voided`, `ach.note_added` (a bank's notice of
 * change). The object is a transaction subset as the money webhooks' (gateway-facts.md, "Money webhooks in
 * detail": `type`, `key`, `refnum`, `amount`, `result_code`, `result`, `authcode`, `invoice`, `batch`) plus
 * `check.trackingcode` ("Objects carry check.trackingcode"). README.md, "ACH", names each field's source.
 */
export type AchEventType = 'ach.submitted' | 'ach.settled' | 'ach.returned' | 'ach.failed' | 'ach.voided' | 'ach.note_added';

const RESULT = { A: 'Approved', P: 'Partially Approved', D: 'Declined' } as const;

export function achObject(life: Lifecycle, tx: LifecycleTx): Fields {
  const ref = life.batchRefOf(tx);
  return {
    type: 'transaction',
    key: tx.key,
    refnum: tx.refnum,
    amount: formatCents(tx.amountCents),
    authcode: tx.authcode,
    result_code: tx.resultCode,
    result: RESULT[tx.resultCode],
    invoice: tx.invoice,
    ...(ref ? { batch: { batchrefnum: String(ref.batchrefnum), sequence: ref.sequence, type: 'batch', key: ref.key } } : {}),
    check: { trackingcode: tx.check?.trackingcode ?? '' },
  };
}

export function achEvent(life: Lifecycle, tx: LifecycleTx, type: AchEventType, old: Fields, now: Fields, at: number) {
  return { type, object: achObject(life, tx), changes: { old, new: now }, now: at };
}
