import { hash } from 'node:crypto';
import type { EventSink } from '../events/types';
import type { StoredResponse, WriteContext } from '../idempotency';
import type { Logger } from '../observability/logger';
import { appendEvents, createCommit } from './commit';
import { canceledNow, isChangeable, periodDue, type Transition } from './lifecycle';
import { outcomeOfAnswer } from './renewals';
import type { FirstCharge, SubscriptionRecord, SubscriptionStore } from './types';

/**
 * A subscription whose first period is charged at its creation (start today or omitted) is created by that charge's
 * approval, exactly once, whichever path learns of it:
 *   the charge's own answer   its completion (the checkout's `alsoRecord`)
 *   the reconciler            a lost answer found in the gateway's records (ReconcilerDeps.resolved), even if the
 *                             client never asks again: before, the shopper was charged and no subscription existed
 *   the client's replay       the same key asked again after either (the net when the others' write failed)
 * Each builds the same record from the terms the charge's attempt kept before it was sent (FirstCharge) and the
 * approved sale, and creates it only if absent (one Lua step across replicas); `subscription.created` is appended
 * by the one that created it.
 *
 * A customer deleted while the charge's outcome was unknown (its lease ended, so the deletion did not wait for it):
 * the deletion's cancel-all ran before the subscription existed, so the subscription is created as the deletion
 * would have left it, canceled (period 0 paid, nothing due), with `subscription.canceled` after `subscription.created`.
 * The wallet's customer tombstone says so; it is written before the cancel-all lists the customer's subscriptions,
 * so it is read again after an active create: a deletion between the two reads is canceled here.
 */

/** The subscription's key: derived from the caller and the create's Idempotency-Key, so a retried create finds it. */
export function subscriptionKey(sub: string, idempotencyKey: string): string {
  return 'sub_' + hash('sha256', `subscription\u0000${sub}\u0000${idempotencyKey}`, 'hex').slice(0, 20);
}

/** The first charge's Idempotency-Key under the caller: derived from the create's (a control character: no caller's key holds one). */
const FIRST_CHARGE_PREFIX = 'subscription\u0000';
export const firstChargeKey = (idempotencyKey: string) => FIRST_CHARGE_PREFIX + idempotencyKey;

/** The subscription an approved first charge (its sale `sale`) makes from the terms kept before it was sent. */
export function paidRecord(first: FirstCharge, sale: string): SubscriptionRecord {
  const base = first.record;
  const record: SubscriptionRecord = {
    ...base, first_sale: sale, periods_charged: 1, next_period: 1,
    history: [{ period: 0, sale, result: 'approved', decline_class: null, decline_code: null, at: new Date(base.created_ms).toISOString(), next_retry_at: null }],
  };
  const done = base.count === 1;
  return { ...record, status: done ? 'completed' : 'active', due_ms: done ? null : periodDue(record, 1) };
}

/** What a customer's deletion makes of a subscription not ended yet: canceled now (service.ts, cancelAllOf). */
export function canceledByDeletion(r: SubscriptionRecord): Transition | undefined {
  return isChangeable(r.status) ? canceledNow(r) : undefined;
}

export interface FirstCharges {
  /** Creates the subscription an approved first charge paid for, unless it exists; answers the stored one. */
  paid(first: FirstCharge, sale: string): Promise<SubscriptionRecord>;
  /**
   * The reconciler found a write's answer: a first charge's, approved, creates its subscription; declined or
   * failed, nothing. Answers whether the write was a first charge's.
   */
  resolved(write: { scope: string; key: string }, context: WriteContext | undefined, response: StoredResponse): Promise<boolean>;
}

export interface FirstChargesDeps {
  store: SubscriptionStore;
  events?: EventSink;
  appended?: () => void;
  logger: Logger;
  /** Whether the customer was deleted through tokengate (the wallet's tombstone, src/wallet/removals.ts). */
  customerRemoved?: (custkey: string) => Promise<boolean>;
}

export function createFirstCharges(deps: FirstChargesDeps): FirstCharges {
  const { store, logger } = deps;
  const commit = createCommit(deps);
  const removed = async (custkey: string) => (await deps.customerRemoved?.(custkey)) ?? false;

  async function paid(first: FirstCharge, sale: string): Promise<SubscriptionRecord> {
    // A bank debit is linked to its period before the subscription exists, so no return of it can miss it.
    if (first.bank && sale) await store.linkSale(sale, { key: first.record.key, period: 0, attempt: 0, payment_method: first.card });
    const made = paidRecord(first, sale);
    const gone = await removed(made.customer);
    const ended = gone ? canceledByDeletion(made) : undefined;
    const { created, record } = await store.create(ended ? ended.next : made);
    if (!created) return record;
    await appendEvents(deps, { next: record, events: ['subscription.created', ...(ended ? ended.events : [])] });
    // Deleted after the read above, its cancel-all may have listed the customer's subscriptions before this one.
    if (gone || !isChangeable(record.status) || !(await removed(record.customer))) return record;
    return (await commit(record.key, canceledByDeletion)) ?? record;
  }

  async function resolved(write: { scope: string; key: string }, _context: WriteContext | undefined, response: StoredResponse): Promise<boolean> {
    if (!write.key.startsWith(FIRST_CHARGE_PREFIX) || write.key.length === FIRST_CHARGE_PREFIX.length) return false;
    const outcome = outcomeOfAnswer(response);
    if (outcome.kind !== 'approved') return true; // declined or failed: no subscription (the create answered so too)
    const key = subscriptionKey(write.scope, write.key.slice(FIRST_CHARGE_PREFIX.length));
    const first = await store.firstCharge(key);
    if (!first) {
      // Kept before the charge was sent, for longer than its answer: only a charge made before this existed.
      logger.error('a first charge was found approved but its subscription\'s terms are not kept; the client\'s retry creates it', { subscription: key });
      return true;
    }
    await paid(first, outcome.transaction.key);
    return true;
  }

  return { paid, resolved };
}
