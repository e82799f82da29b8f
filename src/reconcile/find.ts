import type { GatewayClient } from '../gateway/client';
import type { GatewayResult, TransactionDetail } from '../gateway/types';
import type { UnknownRecord } from '../idempotency';
import type { UpstreamScheduler } from '../limiter';
import type { SaleRecords } from '../sale-records';
import { recordFromDetail } from '../sales/sale-view';
import type { PendingWrite } from './pending-write';
import type { FindResult, Finder } from './reconciler';
import { createSaleFinder } from './find-sale';

/** Renders what a found write answers (the HTTP edge's shapes), from its record and the gateway's transaction. */
export type AnswerOf = (record: UnknownRecord, tx: TransactionDetail) => FindResult & { kind: 'found' };

export interface WriteFinderDeps {
  gateway: GatewayClient;
  budget: Pick<UpstreamScheduler, 'run'>;
  records: SaleRecords;
  answer: AnswerOf;
  lookbackMarginMs: number;
}

/**
 * The reconciler's Finder for every write of the write protocol, by the operation its record names. Gateway
 * reads take a read slot only when one is free at once (maxWaitMs 0: never a slot kept for sales, never a
 * wait in front of a checkout); a refusal makes the look fail and it is tried again later.
 */
export function createWriteFinder(deps: WriteFinderDeps): Finder {
  const { gateway, budget, records } = deps;
  const read = async <T>(call: () => Promise<GatewayResult<T>>): Promise<T> => (await budget.run('read', call, { maxWaitMs: 0 })).value;
  const findSale = createSaleFinder({
    gateway,
    read,
    // A transaction with a sale record belongs to another key (or was already resolved): never claim it twice.
    isTaken: async (key) => (await records.get(key)) !== undefined,
    lookbackMarginMs: deps.lookbackMarginMs,
  });

  return async (_write: PendingWrite, record: UnknownRecord) => {
    const ctx = record.context;
    if (!ctx) throw new Error('the record keeps no write context: it cannot be looked up');
    switch (ctx.op) {
      case 'sale':
      case 'authorize': {
        if (!record.invoice || !ctx.amount) throw new Error('the record keeps no invoice or amount');
        const tx = await findSale({ command: ctx.op === 'sale' ? 'sale' : 'authonly', customer: ctx.customer, invoice: record.invoice, amount: ctx.amount, startedMs: record.startedMs });
        if (!tx) return { kind: 'absent' };
        // The sale is tokengate's from now on: its customer owns it, and refunds are bounded by it.
        await records.create(tx.key, { ...recordFromDetail(tx), customer: ctx.customer });
        return deps.answer(record, tx);
      }
      default:
        throw new Error(`reconciling a ${ctx.op} is not supported yet`);
    }
  };
}
