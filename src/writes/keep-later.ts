import type { Logger } from '../observability/logger';

/**
 * Calls `listener` each time the store's connection is ready again (Redis back after a restart or a failover).
 * Returns the unsubscribe.
 */
export type WhenStoreReady = (listener: () => void) => () => void;

/** One write of a finished write's parts that Redis could not take: named for the logs, safe to repeat. */
export interface LaterPart {
  what: string;
  keep: () => Promise<unknown>;
}

/** Tries each part once now (Redis may be back); answers the parts it still could not take. */
export async function keepNow(parts: readonly LaterPart[]): Promise<LaterPart[]> {
  const tried = await Promise.allSettled(parts.map((p) => p.keep()));
  return parts.filter((_, i) => tried[i]?.status === 'rejected');
}

/** A write's answer is kept at least this long after it was given when Redis could not take it at once. */
export const KEEP_AT_LEAST_MS = 10 * 60_000;

export interface KeepLaterOptions {
  /** Stops trying after this time (ms since the epoch). */
  untilMs: number;
  log: Logger;
  /** The write's operation, for the logs. */
  op: string;
  /** Tries at once when Redis is back, so a part is kept before the next request on that connection reads it. */
  whenReady?: WhenStoreReady;
  /** Resolves once the replicas hold the writes so far (REDIS_WRITE_REPLICAS): a part is kept only then. */
  replicated?: () => Promise<void>;
  /** What is logged when it gives up (default: the reconciler rebuilds the answer). */
  gaveUp?: string;
}

/**
 * Tries again every ~200 ms (one try at a time: a try waits out Redis' own timeout while it is away), each part
 * of a finished write that Redis could not take, until it is kept or `untilMs`. Each part must be safe to repeat:
 * completing checks the attempt still owns the key, records are created only when absent, events are appended
 * once per change, a reservation is settled once (lua/settle.lua answers 0 for one already gone). A process that
 * dies first leaves the key to its lease and the reconciler (guarantee 6), which rebuilds the answer from the
 * gateway. The write protocol keeps a write's parts in one part with the answer last (protocol.ts): a follow-up's
 * settlement of its sale's reservation (Written.before), then the records and events Redis did not take, then the
 * answer, so a kept answer never leaves the rest undone (the reconciler drops a key whose answer is kept). An answer
 * Redis took while refusing the rest marks its key for the reconciler (IdempotencyStore.markFollowing) beside
 * keeping the rest here. A follow-up not sent has its release kept before its key is freed (WriteNotSentError.before);
 * one of unknown outcome keeps its settlement itself (src/sales/follow-up-service.ts).
 */
export function keepLater(parts: LaterPart[], options: KeepLaterOptions): void {
  const { untilMs, log, op, whenReady, replicated } = options;
  let left = parts;
  const delay = 200;
  let trying = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = async (): Promise<void> => {
    if (trying || left.length === 0) return;
    trying = true;
    clearTimeout(timer);
    const results = await Promise.allSettled(left.map((p) => p.keep()));
    // Kept only once the replicas hold it too (REDIS_WRITE_REPLICAS): otherwise every part is tried again.
    const held = replicated ? await replicated().then(() => true, () => false) : true;
    trying = false;
    left = held ? left.filter((_, i) => results[i]?.status === 'rejected') : left;
    if (left.length === 0) {
      unsubscribe?.();
      log.info('a write\'s answer was kept once Redis was back', { op, parts: parts.map((p) => p.what) });
      return;
    }
    if (Date.now() + delay > untilMs) {
      unsubscribe?.();
      log.error(options.gaveUp ?? 'gave up keeping a write\'s answer; the reconciler rebuilds it', { op, parts: left.map((p) => p.what) });
      return;
    }
    timer = setTimeout(() => void attempt(), delay * (0.75 + Math.random() / 2)).unref();
  };
  const unsubscribe = whenReady?.(() => void attempt());
  timer = setTimeout(() => void attempt(), delay).unref();
}
