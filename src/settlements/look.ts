import type { Logger } from '../observability/logger';
import type { Settler } from './settle-batch';
import type { SettlementMetrics } from './metrics';
import type { MissingSweep } from './sweep-missing';

export interface SettlementLook {
  start(): void;
  stop(): Promise<void>;
  /** A batch the gateway said closed (its webhook): settled behind the webhook's answer, never blocking it. */
  closed(batch: string): void;
  /** A batch the gateway said did not close (its `settlement.batch.failure`): counted and logged, nothing read. */
  failed(batch: string, reason: string): void;
}

/**
 * When settlements are read: on the gateway's `settlement.batch.success` (closed()), and at every `everyMs` a
 * look at `GET /batches` for those closed since the last one kept (with webhooks off the only way; with them on,
 * the net under a lost webhook or a replica that died mid-read). One call a look when nothing closed. After each
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

export function createSettlementLook(deps: { settler: Settler; everyMs: number; logger: Logger; sweep?: MissingSweep; metrics?: Pick<SettlementMetrics, 'batchFailures'> }): SettlementLook {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const retries = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    running.add(p);
    void p.finally(() => running.delete(p));
  };
  const fail = (what: string) => (err: unknown) => deps.logger.warn(`settlement ${what} failed; the next look tries again`, { error: err instanceof Error ? err.name : 'error' });
  return {
    start() {
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
      for (const t of retries) clearTimeout(t);
      retries.clear();
      await Promise.allSettled([...running]);
    },
    closed(batch) {
      const attempt = (n: number) =>
        track(deps.settler.settle(batch).catch((err: unknown) => {
          fail('read')(err);
          const delay = READ_RETRY_MS[n];
          if (delay === undefined || stopped) return;
          const t = setTimeout(() => {
            retries.delete(t);
            attempt(n + 1);
          }, delay);
          t.unref();
          retries.add(t);
        }));
      attempt(0);
    },
    failed(batch, reason) {
      // The gateway's reason is its own text: only a plain phrase of it is logged.
      deps.metrics?.batchFailures.inc();
      deps.logger.warn('settlement: the gateway says the batch did not close; its sales stay unsettled and it is read once it closes', { batch, reason: /^[\w .,'-]{1,120}$/.test(reason) ? reason : 'unreadable' });
    },
  };
}
