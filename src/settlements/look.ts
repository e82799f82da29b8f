import type { Logger } from '../observability/logger';
import type { Settler } from './settle-batch';

export interface SettlementLook {
  start(): void;
  stop(): Promise<void>;
  /** A batch the gateway said closed (its webhook): settled behind the webhook's answer, never blocking it. */
  closed(batch: string): void;
}

/**
 * When settlements are read: on the gateway's `settlement.batch.success` (closed()), and at every `everyMs` a
 * look at `GET /batches` for those closed since the last one kept (with webhooks off the only way; with them on,
 * the net under a lost webhook or a replica that died mid-read). One call a look when nothing closed.
 */
export function createSettlementLook(deps: { settler: Settler; everyMs: number; logger: Logger }): SettlementLook {
  let timer: NodeJS.Timeout | undefined;
  const running = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    running.add(p);
    void p.finally(() => running.delete(p));
  };
  const fail = (what: string) => (err: unknown) => deps.logger.warn(`settlement ${what} failed; the next look tries again`, { error: err instanceof Error ? err.name : 'error' });
  return {
    start() {
      if (timer || deps.everyMs <= 0) return;
      timer = setInterval(() => track(deps.settler.look().catch(fail('look'))), deps.everyMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await Promise.allSettled([...running]);
    },
    closed(batch) {
      track(deps.settler.settle(batch).catch(fail('read')));
    },
  };
}
