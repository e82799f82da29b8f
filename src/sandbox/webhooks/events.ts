import type { BatchRecord } from '../batches';
import type { FollowUpRecord, Lifecycle, LifecycleObserver, LifecycleTx } from '../lifecycle';
import { achEvent, type AchEventType } from '../ach/webhook-objects';
import { batchFailureObject, batchObject, changed, trackedFields, transactionObject, type Fields } from './objects';

/**
 * Which event each change of the lifecycle is (gateway-facts.md, Webhooks, event types). The lifecycle tells
 * this observer of every change whoever made it (tokengate, a curl, the admin routes, the batch timer), so a
 * follow-up sent straight to the sandbox, as the merchant's console would, emits the same events.
 *
 * Never emitted, as nothing in the sandbox produces them: `transaction.sale.queued` (nothing is queued), and no
 * customer or payment-method events (the gateway has
 * none). `transaction.sale.unvoided` follows the `unvoid` command, `transaction.sale.adjusted` both `cc:adjust`
 * and `refund:adjust`, `transaction.refund.voided` a `void` of a refund.
 */

export type WebhookEventType =
  | 'transaction.sale.success'
  | 'transaction.sale.failure'
  | 'transaction.sale.voided'
  | 'transaction.sale.captured'
  | 'transaction.sale.adjusted'
  | 'transaction.sale.unvoided'
  | 'transaction.refund.success'
  | 'transaction.refund.voided'
  | 'settlement.batch.success'
  | 'settlement.batch.failure';

/** The events about a batch, not a transaction. */
export type BatchEventType = 'settlement.batch.success' | 'settlement.batch.failure';

/** The card updater's events, on request (../card-updater.ts): about a stored card, not a transaction. */
export type CardUpdateEventType = `cardupdate.${'updated_expiration' | 'updated_card' | 'account_closed' | 'contact_customer'}`;

export interface LifecycleEvent {
  type: WebhookEventType | CardUpdateEventType | AchEventType;
  object: Fields;
  changes: { old: Fields; new: Fields };
  /** Sandbox clock (epoch ms) of the change. */
  now: number;
}

export interface WebhookObserver extends LifecycleObserver {
  /** Forgets what it knew of transactions (the sandbox's reset()). */
  reset(): void;
}

/**
 * `enabled` is asked first on every change: with no receiver configured the observer does nothing, and keeps
 * nothing (a benchmark's millions of sales cost no memory here).
 */
export function createWebhookObserver(life: Lifecycle, enabled: () => boolean, emit: (event: LifecycleEvent) => void): WebhookObserver {
  /** Each transaction's tracked fields as its last event told them: the `old` side of the next change. */
  const lastTold = new Map<string, Fields>();

  type TxEvent = Exclude<WebhookEventType, BatchEventType>;
  const born = (type: TxEvent, tx: LifecycleTx, now: number) => {
    const fields = trackedFields(life, tx);
    lastTold.set(tx.key, fields);
    emit({ type, object: transactionObject(life, tx, type), changes: { old: {}, new: fields }, now });
  };

  const moved = (type: TxEvent, tx: LifecycleTx, now: number) => {
    const fields = trackedFields(life, tx);
    const before = lastTold.get(tx.key);
    lastTold.set(tx.key, fields);
    // A capture's or an adjustment's original amount is what was authorized before it.
    const was = before && typeof before.auth_amount === 'string' ? Math.round(Number(before.auth_amount) * 100) : tx.amountCents;
    const originalCents = type === 'transaction.sale.captured' || type === 'transaction.sale.adjusted' ? was : tx.amountCents;
    // A transaction from before the webhooks were turned on: what it was is unknown here.
    emit({ type, object: transactionObject(life, tx, type, originalCents), changes: before ? changed(before, fields) : { old: {}, new: fields }, now });
  };

  return {
    adopted(tx: LifecycleTx, now: number) {
      if (!enabled()) return;
      born(tx.state === 'declined' ? 'transaction.sale.failure' : 'transaction.sale.success', tx, now);
    },

    followedUp(op: FollowUpRecord) {
      // A refusal or a folded duplicate moved nothing.
      if (!enabled() || op.result_code !== 'A' || op.folded) return;
      const created = op.createdKey === undefined ? undefined : life.get(op.createdKey);
      if (created) return born('transaction.refund.success', created, op.time);
      const tx = life.get(op.trankey);
      if (!tx) return;
      // A check's void is the ACH one (gateway-facts.md, ACH: `ach.voided`).
      if (tx.check && tx.state === 'voided') return emit(achEvent(life, tx, 'ach.voided', { status: 'P' }, { status: 'V' }, op.time));
      if (tx.state === 'voided') return moved(tx.kind === 'refund' ? 'transaction.refund.voided' : 'transaction.sale.voided', tx, op.time);
      if (op.command === 'cc:capture') return moved('transaction.sale.captured', tx, op.time);
      if (op.command === 'refund:adjust' || op.command === 'cc:adjust') return moved('transaction.sale.adjusted', tx, op.time);
      if (op.command === 'unvoid') return moved('transaction.sale.unvoided', tx, op.time);
    },

    batchClosed(batch: BatchRecord, now: number) {
      if (!enabled()) return;
      // Settling changes the status of every sale in the batch; the event names the batch, not the sales.
      for (const key of batch.members) {
        const tx = life.get(key);
        if (tx && lastTold.has(key)) lastTold.set(key, trackedFields(life, tx));
      }
      emit({ type: 'settlement.batch.success', object: batchObject(life, batch), changes: { old: { status: 'open' }, new: { status: 'closed' } }, now });
    },

    batchFailed(batch: BatchRecord, reason: string, now: number) {
      if (!enabled()) return;
      // The batch did not close: it stays open, its sales unsettled (README.md, Batches).
      emit({ type: 'settlement.batch.failure', object: batchFailureObject(life, batch, reason), changes: { old: { status: 'open' }, new: { status: 'open' } }, now });
    },

    reset() {
      lastTold.clear();
    },
  };
}
