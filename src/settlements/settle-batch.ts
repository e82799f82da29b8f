import { randomUUID } from 'node:crypto';
import type { EventSink } from '../events';
import type { GatewayClient } from '../gateway';
import type { Batch, GatewayResult, TransactionDetail } from '../gateway/types';
import type { UpstreamScheduler } from '../limiter/types';
import type { Logger } from '../observability/logger';
import { closedMsOf, isOwnCredit, matchLine, settlementOf, type MatchRecords } from './match';
import type { SettlementMetrics } from './metrics';
import type { Settlement, SettlementLine, SettlementStore } from './types';

export interface SettlerDeps {
  store: SettlementStore;
  gateway: Pick<GatewayClient, 'getBatch' | 'listBatches' | 'listBatchTransactions'>;
  budget: Pick<UpstreamScheduler, 'run'>;
  records: MatchRecords;
  events: EventSink;
  /** Tells the event delivery that something was appended. */
  appended?: () => void;
  metrics: SettlementMetrics;
  logger: Logger;
  pageSize?: number;
  /**
   * How long one replica's claim on a batch's read lasts unless renewed (it is renewed every third of it while the
   * read goes on): a replica that dies mid-read frees the batch this much later (default 10 s; it was 5 minutes,
   * unrenewed, and a batch whose reader was SIGKILLed waited that long for anyone else).
   */
  claimTtlMs?: number;
  /** A periodic look reads batches closed at most this long ago (the first look, or after a long outage). */
  lookbackMs?: number;
  /**
   * Whether a write begun before `heardMs` (when the batch's close was heard) is still in flight or its outcome
   * unknown: a sale tokengate sent but never heard answered has no record until the reconciler finds it, and
   * would read as `not_ours`.
   */
  unresolved?: (heardMs: number) => Promise<boolean>;
  /** tokengate's clock (ms), from which a bank line's review runs (default Date.now). */
  now?: () => number;
  /** A bank line stays open this long after its batch's read (SETTLEMENTS_BANK_RETURN_WINDOW_MS; default 60 days). */
  bankReturnWindowMs?: number;
  /** Called once a settlement is kept (the bank review's `kept`: a return heard during the read changes its line). */
  kept?: (settlement: Settlement) => Promise<unknown>;
}

/**
 * The batch holds a sale tokengate keeps no record of while some outcome is still unknown: it may be one of
 * tokengate's that the reconciler has not found yet (the 60 s soak: a sale whose answer a reset cut, in a batch
 * closed 12 s before the reconciler found it, was kept `not_ours`). Nothing is kept; the read is tried again.
 */
export class SettlementNotYetError extends Error {
  override readonly name = 'SettlementNotYetError';
  constructor() {
    super('a sale of the batch may be one whose outcome is still unknown');
  }
}

/**
 * `waitSince`: when the batch's close was first heard (the webhook) or seen (a look); a sale with no record while a
 * write begun before then is unresolved defers the read (SettlementNotYetError), for UNKNOWN_WAIT_MS at most from
 * then. Without it, or past that, the read keeps what it finds.
 */
export interface SettleOptions {
  waitSince?: number;
}

/** NACHA's longest common return window: a consumer's "not authorized" (R10) within 60 days of settlement. */
export const BANK_RETURN_WINDOW_MS = 60 * 24 * 3600_000;

export type SettleOutcome = 'settled' | 'kept' | 'busy' | 'open';

export interface Settler {
  /** Reads the closed batch once (one replica; a kept one is never read again) and keeps its settlement. */
  settle(batch: string, options?: SettleOptions): Promise<SettleOutcome>;
  /**
   * Every batch closed within the lookback (7 days) and not kept: each settled. How many were. Not only those
   * since the newest kept: a replica that died reading an older batch (its webhook answered, its read lost) leaves
   * it unkept behind newer kept ones (a soak's SIGKILL 3 s after a batch's settlement.batch.success: 363 sales in
   * no settlement).
   */
  look(): Promise<number>;
}

/**
 * The one read per batch (issue 39): when the gateway says a batch closed (its `settlement.batch.success`, or a
 * look at `GET /batches`), the batch and its transactions are read page by page in the `background` budget
 * class, each line matched with tokengate's records (match.ts), and the settlement kept once. Its events are
 * appended before it is kept, each with its own `change` (the log's dedupe): a replica that dies in between
 * leaves the batch unkept, the next look reads it again, and nothing is reported twice.
 */
/**
 * Where a settlement sorts in the list: its close, then the batch's sequence (closes carry whole seconds, so two
 * batches closed within one second keep the gateway's order). An integer: exact as a sorted set's score.
 */
function orderOf(batch: Batch): number {
  const closedMs = closedMsOf(batch.closed) ?? Date.now();
  return Math.floor(closedMs / 1000) * 1000 + (Number.parseInt(batch.sequence, 10) % 1000 || 0);
}

/**
 * How long a read defers a batch while a write that could be in it is still unknown (its sale would read
 * `not_ours`, and a kept settlement is never read again), from `waitSince`: past the reconcile deadline; past it,
 * what is read is kept. The webhook's read and the look wait alike.
 */
const UNKNOWN_WAIT_MS = 10 * 60_000;

/** A read's claim lasts this long unless renewed (renewed every third of it while the read goes on). */
const CLAIM_TTL_MS = 10_000;

/** How long one page's read waits for a background slot before it fails (and look.ts tries again later). */
const READ_WAIT_MS = 60_000;

export function createSettler(deps: SettlerDeps): Settler {
  const { store, gateway, budget, metrics } = deps;
  const pageSize = deps.pageSize ?? 100;
  const claimTtlMs = deps.claimTtlMs ?? CLAIM_TTL_MS;
  const lookbackMs = deps.lookbackMs ?? 7 * 24 * 3600_000;
  const read = async <T>(what: string, call: () => Promise<GatewayResult<T>>): Promise<T> => {
    metrics.gatewayCalls.inc({ call: what });
    // Waits for spare budget rather than failing at once (the class's default wait is 0): a read refused at once
    // was retried only after 30 s and then 2 min, and a busy minute (a rolling deploy under load) left a batch
    // unread that long (a soak's settlement_mismatches 51). A wait takes no slot from sales or renewals.
    return (await budget.run('background', call, { maxWaitMs: READ_WAIT_MS, caller: 'settlements' })).value;
  };

  async function lines(batch: string): Promise<SettlementLine[]> {
    const out: SettlementLine[] = [];
    const review = { nowMs: (deps.now ?? Date.now)(), windowMs: deps.bankReturnWindowMs ?? BANK_RETURN_WINDOW_MS };
    for (let offset = 0; ; ) {
      const page = await read('batch_transactions', () => gateway.listBatchTransactions(batch, { limit: pageSize, offset }));
      for (const tx of page.data as TransactionDetail[]) {
        const line = await matchLine(deps.records, tx, review, async (credit) => (await store.creditReturns([credit])).get(credit));
        if (line) out.push(line);
      }
      offset += page.data.length;
      if (page.data.length === 0 || offset >= page.total) return out;
    }
  }

  async function report(settlement: Settlement): Promise<void> {
    const { lines: all, ...summary } = settlement;
    await deps.events.append([
      { type: 'settlement.closed', change: `settlement:${settlement.batch}`, data: summary },
      ...all.filter((l) => l.verdict !== 'matched').map((line) => ({ type: 'settlement.mismatch' as const, change: `settlement:${settlement.batch}:${line.transaction}`, data: { batch: settlement.batch, closed_at: settlement.closed_at, line } })),
    ]);
    deps.appended?.();
  }

  async function settleRead(batch: Batch, owner: string, options: SettleOptions): Promise<SettleOutcome> {
    const all = await lines(batch.key);
    const unknownSale = all.some((l) => l.kind === 'sale' && l.verdict === 'not_ours');
    const waiting = options.waitSince !== undefined && Date.now() - options.waitSince < UNKNOWN_WAIT_MS;
    if (waiting && unknownSale && deps.unresolved && (await deps.unresolved(options.waitSince as number))) throw new SettlementNotYetError();
    const settlement = settlementOf(batch, all);
    await report(settlement);
    if (await store.save(settlement, owner, orderOf(batch))) {
      for (const line of settlement.lines) metrics.lines.inc({ verdict: line.verdict });
      metrics.batches.inc();
      deps.logger.info('settlement kept', { batch: batch.key, ...settlement.counts });
      // A return applied after a bank line was built and before the settlement was kept found nothing to change:
      // looked at again now that it is kept (a failure leaves the line to the return's redelivery or the review).
      if (deps.kept && settlement.lines.some((l) => l.bank === 'open' || isOwnCredit(l))) {
        await deps.kept(settlement).catch((err: unknown) => deps.logger.warn('settlement: could not look at its bank lines again', { batch: batch.key, error: err instanceof Error ? err.name : 'error' }));
      }
    }
    return 'settled';
  }

  async function settle(batchKey: string, known?: Batch, options: SettleOptions = {}): Promise<SettleOutcome> {
    const owner = randomUUID();
    const claimed = await store.claim(batchKey, owner, claimTtlMs);
    if (claimed !== 'claimed') return claimed;
    // The claim is renewed while the read goes on (claim.lua extends an owner's own claim). A lost renewal (Redis
    // slow or away) lets another replica read too: the settlement is still kept once (save.lua), its events deduped.
    const renew = setInterval(() => void store.claim(batchKey, owner, claimTtlMs).catch(() => undefined), Math.max(50, Math.floor(claimTtlMs / 3)));
    renew.unref();
    // Renewing stops before the claim is given back: a renewal after it would take the claim again.
    let outcome: SettleOutcome | undefined;
    try {
      const batch = known ?? (await read('batch', () => gateway.getBatch(batchKey)));
      if (batch.status === 'closed') outcome = await settleRead(batch, owner, options);
    } catch (err) {
      clearInterval(renew);
      await store.release(batchKey, owner).catch(() => undefined);
      throw err;
    }
    clearInterval(renew);
    if (outcome !== undefined) return outcome;
    await store.release(batchKey, owner);
    return 'open';
  }

  /** When this settler's looks first saw each unkept batch closed (their `waitSince`); bounded by the lookback's batches. */
  const firstSeen = new Map<string, number>();

  return {
    settle: (batch, options) => settle(batch, undefined, options),
    async look() {
      let settled = 0;
      const horizon = Date.now() - lookbackMs;
      for (let offset = 0; ; ) {
        const page = await read('batches', () => gateway.listBatches({ limit: pageSize, offset }));
        for (const batch of page.data) {
          if (batch.status !== 'closed') continue;
          const closedMs = closedMsOf(batch.closed);
          if (closedMs !== undefined && closedMs < horizon) return settled;
          // A kept one costs its claim's Redis call, no gateway call; the look goes on past it to the horizon.
          // Like the webhook's read, it waits while a write that could be in the batch is unknown (a 60 s soak's
          // look every 10 s kept three sales not_ours that the reconciler found moments later), a while at most.
          const seen = firstSeen.get(batch.key) ?? Date.now();
          firstSeen.set(batch.key, seen);
          try {
            if ((await settle(batch.key, batch, { waitSince: seen })) === 'settled') settled += 1;
            firstSeen.delete(batch.key);
          } catch (err) {
            if (!(err instanceof SettlementNotYetError)) throw err; // the next look tries it again
          }
        }
        offset += page.data.length;
        if (page.data.length === 0 || offset >= page.total) return settled;
      }
    },
  };
}
