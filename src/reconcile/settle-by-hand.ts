import type { GatewayClient } from '../gateway/client';
import type { GatewayResult } from '../gateway/types';
import type { UnknownRecord } from '../idempotency';
import type { UpstreamScheduler } from '../limiter';
import type { SaleRecords } from '../sale-records';
import { shownCapturedCents, statusOf } from '../sales/sale-view';
import { writeReference } from '../writes/reference';
import type { AnswerOf } from './find';
import { creditOf } from './find-refund';
import type { PendingWrite } from './pending-write';
import type { PendingWrites } from './pending-writes';
import type { FindResult, HandDecision, HandOutcome, Reconciler } from './reconciler';

/**
 * Settling by hand what the gateway's documented records cannot decide (issue 42, contract guarantee 6). Only a
 * refund can be left so: a capture or a void is decided by the sale's look-up (its status), a sale or an
 * authorization by the customer's or the batches' lists; a refund whose credit carries no tokengate tag (a whole
 * refund's creditvoid on a sale that settled meanwhile, a gateway that dropped the custom field) beside an
 * untagged credit of its amount cannot be told from a refund made in the console. The operator looks at the
 * gateway's console and says:
 *   found   with `transaction`: the refund's own transaction (a credit of this refund's amount), or the sale's key
 *           when the sale shows the refund itself (voided, or its capture lowered): the key replays it;
 *   absent  the refund is not at the gateway: its reservation and key are released, a retry refunds once.
 *           Refused while the write could still be processed (before RECONCILE_MAX_PROCESSING_MS since unknown).
 * Who decided what is logged and kept beside the record (PendingWrites.keepDecision), and the decision goes
 * through the reconciler's own transitions (resolve or release, guarded against a retry taking the key over).
 */
export class HandSettleError extends Error {
  constructor(readonly code: 'not_refund' | 'transaction_mismatch' | 'transaction_required', message: string) {
    super(message);
    this.name = 'HandSettleError';
  }
}

export interface HandSettlerDeps {
  reconciler: Pick<Reconciler, 'settleByHand'>;
  pending: Pick<PendingWrites, 'listUnknown' | 'decisionOf'>;
  gateway: Pick<GatewayClient, 'getTransaction'>;
  budget: Pick<UpstreamScheduler, 'run'>;
  records: SaleRecords;
  answer: AnswerOf;
}

export interface HandSettler {
  settle(write: PendingWrite, decision: HandDecision): Promise<HandOutcome>;
  /** The open unknown outcomes, oldest first, each with what its record says it was (no card data is kept). */
  open(limit: number): Promise<Array<{ caller: string; idempotency_key: string; unknown_since: string }>>;
}

export function createHandSettler(deps: HandSettlerDeps): HandSettler {
  const { records, answer } = deps;
  // An operator's read waits for a slot like any read (never one kept for sales).
  const read = async <T>(call: () => Promise<GatewayResult<T>>): Promise<T> => (await deps.budget.run('read', call)).value;

  async function decideRefund(write: PendingWrite, record: UnknownRecord, decision: HandDecision): Promise<FindResult> {
    const ctx = record.context;
    if (ctx?.op !== 'refund' || !ctx.sale) throw new HandSettleError('not_refund', 'Only a refund can be settled by hand: the gateway\'s records decide every other write.');
    const saleKey = ctx.sale;
    const id = writeReference(write.scope, write.key);
    const mine = (await records.moves(saleKey)).reservations.find((r) => r.id === id);
    if (decision.outcome === 'absent') return { kind: 'absent', onProven: mine ? () => records.settle(saleKey, 'refund', id, 'released') : undefined };
    if (!decision.transaction) throw new HandSettleError('transaction_required', 'A refund found needs the gateway transaction that is it.');
    if (!mine) throw new HandSettleError('transaction_mismatch', 'The sale keeps no reservation for this refund.');
    const sale = await read(() => deps.gateway.getTransaction(saleKey));
    let refund: { key: string; refnum: string; method: 'refund' | 'void' };
    if (decision.transaction === saleKey) {
      // The sale itself shows the refund only when voided, or when refund:adjust lowered its capture by as much. A
      // look-up without auth_amount shows nothing either way: the operator's word (from the console) stands.
      const known = await records.get(saleKey);
      const voided = statusOf(sale) === 'voided';
      const shown = shownCapturedCents(sale);
      if (!voided && shown !== undefined && (known === undefined || known.capturedCents - shown < mine.cents)) throw new HandSettleError('transaction_mismatch', 'The sale shows no refund of this amount: name the refund\'s own transaction.');
      refund = { key: saleKey, refnum: sale.refnum, method: voided ? 'void' : 'refund' };
    } else {
      const credit = creditOf(await read(() => deps.gateway.getTransaction(decision.transaction as string)));
      if (!credit || credit.cents !== mine.cents) throw new HandSettleError('transaction_mismatch', 'That transaction is not a refund of this amount.');
      refund = { key: credit.key, refnum: credit.refnum, method: 'refund' };
    }
    await records.settle(saleKey, 'refund', id, 'applied', mine.cents, refund.key !== saleKey ? refund.key : undefined, { ...refund, cents: mine.cents });
    if (refund.method === 'void') await records.markVoided(saleKey);
    return answer(record, { op: 'refund', detail: sale, refund: { ...refund, amountCents: mine.cents } });
  }

  return {
    settle: (write, decision) => deps.reconciler.settleByHand(write, (record) => decideRefund(write, record, decision), decision),
    async open(limit) {
      const open = await deps.pending.listUnknown(limit);
      return open.map(({ write, sinceMs }) => ({ caller: write.scope, idempotency_key: write.key, unknown_since: new Date(sinceMs).toISOString() }));
    },
  };
}
