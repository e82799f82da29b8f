import { randomUUID } from 'node:crypto';
import type { EventSink } from '../events';
import { GatewayNotFoundError } from '../gateway/errors';
import { fromCents } from '../gateway/money';
import type { Logger } from '../observability/logger';
import type { SaleRecords } from '../sale-records';
import type { SettlementMetrics } from './metrics';
import type { Settler } from './settle-batch';
import type { BankReview } from './bank-review';
import type { Settlement, SettlementLine, SettlementStore } from './types';

export interface MissingSweepDeps {
  store: SettlementStore;
  records: Pick<SaleRecords, 'get' | 'dueBatches' | 'batchSales' | 'swept'>;
  settler: Pick<Settler, 'settle'>;
  events: EventSink;
  appended?: () => void;
  metrics: SettlementMetrics;
  logger: Logger;
  /** tokengate's clock (its test clock outside production). */
  now: () => Promise<number>;
  /** A batch's sales are looked for this long after tokengate first saw the batch (due at its close, plus a day). */
  missingAfterMs: number;
  /** One sweep per this long, across replicas and restarts (a day). */
  everyMs: number;
  /** Held by the replica sweeping (one at a time); a replica that dies mid-sweep frees it this much later. */
  claimTtlMs?: number;
  /** Bank lines whose review ended are looked at again in the same daily pass (bank-review.ts). */
  bank?: Pick<BankReview, 'review'>;
}

export interface MissingSweep {
  /** Sweeps when a day has passed since the last sweep (any replica's): how many `missing` lines it reported. */
  sweep(): Promise<number>;
}

/**
 * `missing` (contract, "Settlements"; issue 39): a payment tokengate saw approved and not voided that no batch
 * closed since holds, a day after it was due. The index is the one the sale path already writes: each batch's
 * sales (for sale.settled), and the batch's first sight in the due index (sale-records: one command per batch).
 * Once a day one replica takes the batches first seen at least `missingAfterMs` ago; for each, a sale is
 * missing unless a kept settlement lists it (its batch's; or any other, by the sale → settlement index the
 * settlements' save writes: one MGET per batch swept), or its record is not a captured
 * sale (voided, declined, an authorization never captured, a void or capture still in flight). So a match or a
 * void takes a sale out of the index with no write on either path: the sweep reads what they left.
 *
 * Where a missing line shows: in its own batch's settlement when that batch closed without it; when the batch
 * never closed (a failed close, the gateway lost it), in the newest settlement kept (the first batch that
 * should have held it and did not). A batch still unread is read first (one `background` call; a batch the
 * gateway reports open has not closed). With no settlement kept at all, the batch waits for the next sweep.
 * Each line is reported once: its settlement.mismatch's `change` names the sale, and the line is appended once.
 */
export function createMissingSweep(deps: MissingSweepDeps): MissingSweep {
  const { store, records, metrics } = deps;
  const claimTtlMs = deps.claimTtlMs ?? 10 * 60_000;

  async function keptSettlement(batch: string): Promise<Settlement | undefined> {
    const kept = await store.get(batch);
    if (kept) return kept;
    // Not read yet (no webhook, no look since it closed): read now, in the background class.
    // A batch the gateway does not know closed nowhere; any other failure (budget, gateway) is tried again, and
    // so is a batch another replica is reading now (its lines are not kept yet: no sale of it is missing).
    const outcome = await deps.settler.settle(batch).catch((err: unknown) => {
      if (err instanceof GatewayNotFoundError) return 'gone' as const;
      throw err;
    });
    if (outcome === 'busy') throw new Error('the batch is being read; the next sweep looks again');
    return store.get(batch);
  }

  async function missingOf(batch: string, own: ReadonlySet<string>): Promise<SettlementLine[]> {
    const out: SettlementLine[] = [];
    const rest = (await records.batchSales(batch)).filter((sale) => !own.has(sale));
    // Held by any other kept settlement (a later batch picked it up): the index save() writes, one read for all.
    const elsewhere = rest.length > 0 ? await store.heldIn(rest) : new Map<string, string>();
    for (const sale of rest) {
      if (elsewhere.has(sale)) continue;
      const record = await records.get(sale);
      if (!record || record.state !== 'captured' || record.capturedCents <= 0) continue;
      out.push({ transaction: sale, sale, amount: fromCents(record.capturedCents), gateway_amount: '0.00', kind: 'sale', verdict: 'missing' });
    }
    return out;
  }

  async function report(home: Settlement, lines: SettlementLine[]): Promise<void> {
    await deps.events.append(lines.map((line) => ({ type: 'settlement.mismatch' as const, change: `settlement:missing:${line.transaction}`, data: { batch: home.batch, closed_at: home.closed_at, line } })));
    deps.appended?.();
    for (const line of await store.amend(home.batch, lines)) metrics.lines.inc({ verdict: line.verdict });
  }

  return {
    async sweep() {
      const now = await deps.now();
      const owner = randomUUID();
      if (!(await store.claimSweep(owner, now - deps.everyMs, claimTtlMs))) return 0;
      metrics.sweeps.inc();
      let reported = 0;
      let done = true;
      try {
        if (deps.bank) {
          await deps.bank.review().catch((err: unknown) => {
            done = false;
            deps.logger.warn('settlement review of open bank lines failed; the next sweep tries again', { error: err instanceof Error ? err.name : 'error' });
          });
        }
        const due = await records.dueBatches(now - deps.missingAfterMs, 1000);
        if (due.length === 0) return 0;
        const [newestSummary] = await store.list(undefined, 1);
        const newest = newestSummary ? await store.get(newestSummary.batch) : undefined;
        for (const { batch } of due) {
          try {
            const own = await keptSettlement(batch);
            const held = new Set(own?.lines.flatMap((l) => (l.sale ? [l.sale] : [])) ?? []);
            const missing = await missingOf(batch, held);
            const home = own ?? newest;
            if (missing.length > 0 && !home) {
              done = false;
              continue;
            }
            if (home && missing.length > 0) await report(home, missing);
            reported += missing.length;
            await records.swept(batch);
            if (missing.length > 0) deps.logger.warn('settlement: sales in no closed batch a day after they were due', { batch, home: home?.batch, missing: missing.length });
          } catch (err) {
            done = false;
            deps.logger.warn('settlement sweep of a batch failed; the next sweep tries again', { batch, error: err instanceof Error ? err.name : 'error' });
          }
        }
        return reported;
      } finally {
        // A sweep that left a batch for later is not done: the next look tries again rather than a day later.
        if (done) await store.sweepDone(owner, now);
        else await store.sweepDone(owner, -1);
      }
    },
  };
}
