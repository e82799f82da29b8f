import type { Logger } from '../observability/logger';
import { SettlementNotYetError, type Settler } from './settle-batch';
import type { SettlementMetrics } from './metrics';
import type { MissingSweep } from './sweep-missing';
import type { DueBatch, SettlementStore } from './types';

export interface SettlementLook {
  start(): void;
  stop(): Promise<void>;
  /**
   * A batch the gateway said closed (its webhook): recorded as due in the store (resolves once it is: before the
   * webhook is answered), then read behind the answer, never blocking it. Any replica reads it if this one dies.
   */
  closed(batch: string): Promise<void>;
  /** A batch the gateway said did not close (its `settlement.batch.failure`): counted and logged, nothing read. */
  failed(batch: string, reason: string): void;
}

/**
 * When settlements are read: on the gateway's `settlement.batch.success` (closed(): the batch is recorded due in
 * the store before the webhook is answered, and every replica takes due batches every DUE_EVERY_MS, so one that
 * dies mid-read leaves it to the others within seconds; failed reads are due again later, in the store, not in
 * a timer of one process), and at every `everyMs` a look at `GET /batches` for those closed in the lookback and
 * not kept (with webhooks off the only way; with them on, the net under a lost webhook). After each
 * look, the daily sweep for `missing` (sweep-missing.ts) is given its turn: it runs once a day across replicas.
 */
/** With looks off, the sweep for `missing` is still checked this often (it runs once a day across replicas). */
const SWEEP_CHECK_MS = 3_600_000;
/**
 * A read the webhook started that failed (the budget, a gateway fault, Redis) is tried again after these delays
 * rather than at the next look, an hour later (a 60 s soak met a reset on the batch's first read). The claim in
 * Redis still makes one read per batch whichever replica tries.
 */
const READ_RETRY_MS = [5_000, 30_000, 120_000, 600_000];
/**
 * A read deferred because an outcome is still unknown (SettlementNotYetError) is tried again this often, until the
 * settler's wait ends (10 minutes from the close heard, past the reconcile deadline: settle-batch.ts
 * UNKNOWN_WAIT_MS); that read keeps what it finds.
 */
const NOT_YET_RETRY_MS = 5_000;
/**
 * Each replica takes the due batches this often (one Redis read when none is due, no gateway call): a batch whose
 * webhook was answered by a replica that died before keeping it is read by another within seconds (a soak's
 * SIGKILL 3 s after a batch's settlement.batch.success lost its read until the hourly look).
 */
const DUE_EVERY_MS = 2_000;
/**
 * A due batch taken is not taken again for this long (unless rescheduled or done): the replica reading it holds it
 * meanwhile; past it, another takes it and the claim (renewed while a read goes on) says whether anyone still reads.
 */
const DUE_LEASE_MS = 10_000;
/** At most this many due batches taken at once. */
const DUE_TAKE = 20;
/** A batch due this long after its close was heard is given up to the look (its lookback is 7 days). */
const DUE_GIVE_UP_MS = 7 * 24 * 3600_000;

type DueStore = Pick<SettlementStore, 'markDue' | 'takeDue' | 'dueAgain' | 'dueDone'>;

export interface SettlementLookDeps {
  settler: Settler;
  everyMs: number;
  logger: Logger;
  sweep?: MissingSweep;
  metrics?: Pick<SettlementMetrics, 'batchFailures'>;
  /** The due batches, shared by the replicas (the settlement store). */
  due: DueStore;
  /** How often the due batches are taken (default DUE_EVERY_MS). */
  dueEveryMs?: number;
  /** How long a taken due batch is held before another may take it (default DUE_LEASE_MS). */
  dueLeaseMs?: number;
}

export function createSettlementLook(deps: SettlementLookDeps): SettlementLook {
  let timer: NodeJS.Timeout | undefined;
  let dueTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  const running = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    running.add(p);
    void p.finally(() => running.delete(p));
  };
  const fail = (what: string) => (err: unknown) => deps.logger.warn(`settlement ${what} failed; the next look tries again`, { error: err instanceof Error ? err.name : 'error' });
  const dueEveryMs = deps.dueEveryMs ?? DUE_EVERY_MS;
  const leaseMs = deps.dueLeaseMs ?? DUE_LEASE_MS;
  /** Due batches this replica reads now (taken again by its own next turn: skipped). */
  const reading = new Set<string>();

  /**
   * One due batch's read, through the claim (one read per batch across replicas). Kept: no longer due. Busy:
   * another replica reads it; the lease brings it back to whoever takes it next, to see. Failed: due again after
   * READ_RETRY_MS (the last delay over and over, until given up to the look); deferred (an outcome still unknown):
   * due again in NOT_YET_RETRY_MS (the settler ends the wait, SettleOptions.waitSince).
   */
  async function readDue(due: DueBatch): Promise<void> {
    let outcome: Awaited<ReturnType<Settler['settle']>>;
    try {
      outcome = await deps.settler.settle(due.batch, { waitSince: due.heardMs });
    } catch (err) {
      const notYet = err instanceof SettlementNotYetError;
      if (!notYet) fail('read')(err);
      if (!notYet && Date.now() - due.heardMs > DUE_GIVE_UP_MS) return deps.due.dueDone(due.batch);
      const delay = notYet ? NOT_YET_RETRY_MS : (READ_RETRY_MS[due.tries] ?? READ_RETRY_MS[READ_RETRY_MS.length - 1] ?? 600_000);
      return deps.due.dueAgain({ ...due, tries: notYet ? due.tries : due.tries + 1 }, Date.now() + delay);
    }
    if (outcome === 'settled' || outcome === 'kept') return deps.due.dueDone(due.batch);
    if (outcome === 'open') {
      // The gateway does not show it closed yet: read again later, as after a failure.
      const delay = READ_RETRY_MS[due.tries];
      if (delay === undefined) return deps.due.dueDone(due.batch); // left to the look, as before
      return deps.due.dueAgain({ ...due, tries: due.tries + 1 }, Date.now() + delay);
    }
    // busy: the lease holds it back; whoever takes it next sees whether the reader still lives (its claim).
  }

  /** Takes the due batches and reads each (not waited for: a long read does not hold up the next turn). */
  async function takeDue(): Promise<void> {
    if (stopped) return;
    const taken = await deps.due.takeDue(Date.now(), leaseMs, DUE_TAKE);
    for (const due of taken) {
      if (reading.has(due.batch) || stopped) continue;
      reading.add(due.batch);
      track(readDue(due).catch(fail('due read')).finally(() => reading.delete(due.batch)));
    }
  }

  return {
    start() {
      if (!dueTimer && dueEveryMs > 0) {
        dueTimer = setInterval(() => track(takeDue().catch(fail('due take'))), dueEveryMs);
        dueTimer.unref();
        // Batches left due by a replica that died (or by this one before a restart) are taken at once.
        track(takeDue().catch(fail('due take')));
      }
      if (timer || (deps.everyMs <= 0 && !deps.sweep)) return;
      // The sweep after the look: a batch the look has just kept is the sweep's to read, not to read again.
      const tick = async () => {
        if (deps.everyMs > 0) await deps.settler.look().catch(fail('look'));
        if (deps.sweep) await deps.sweep.sweep().catch(fail('sweep'));
      };
      timer = setInterval(() => track(tick()), deps.everyMs > 0 ? deps.everyMs : SWEEP_CHECK_MS);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      if (dueTimer) clearInterval(dueTimer);
      dueTimer = undefined;
      await Promise.allSettled([...running]);
    },
    async closed(batch) {
      // Due before the webhook is answered: a replica that dies from here on leaves it to the others' next turn.
      const heardMs = Date.now();
      await deps.due.markDue(batch, heardMs, heardMs);
      // The fast path: this replica takes it at once rather than at its next turn.
      if (!stopped) track(takeDue().catch(fail('due take')));
    },
    failed(batch, reason) {
      // The gateway's reason is its own text: only a plain phrase of it is logged.
      deps.metrics?.batchFailures.inc();
      deps.logger.warn('settlement: the gateway says the batch did not close; its sales stay unsettled and it is read once it closes', { batch, reason: /^[\w .,'-]{1,120}$/.test(reason) ? reason : 'unreadable' });
    },
  };
}
