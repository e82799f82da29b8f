import type { Logger } from '../observability/logger';
import { LimiterUnavailableError } from './errors';
import { createMemoryBackend, type MemoryBackend } from './memory-backend';
import type { RedisBackend } from './redis-backend';
import { isPaced, type CallClass, type Clock, type DayUsage, type Grant, type LimiterClasses, type LimiterLimits, type ReservationBackend, type ReserveRequest } from './types';
import { countIn, insertSorted, pruneUpTo, removeSorted } from './window-math';

export interface ResilientOptions {
  redis: RedisBackend;
  limits: LimiterLimits;
  classes: LimiterClasses;
  /** Replicas expected to share the budget: the fallback takes limit ÷ this (floor, at least 1). */
  expectedReplicas: number;
  clock: Clock;
  logger: Logger;
  endpointKey: string;
  /** After a failed command, wait this long before trying Redis again (ms). */
  probeIntervalMs?: number;
}

/**
 * Redis while it answers; otherwise reads go through a per-replica share of the budget and sales fail fast
 * (contract guarantee 5). Every slot this replica reserved is logged locally so the fallback counts them,
 * and every fallback start is written back to Redis on recovery, so neither side forgets the other.
 */
export function createResilientBackend(opts: ResilientOptions): ReservationBackend & { reconnected(): void } {
  const { redis, limits, classes, clock, logger } = opts;
  const probeIntervalMs = opts.probeIntervalMs ?? 500;
  const span = limits.windowMs + limits.marginMs;
  const daySpan = limits.dayWindowMs + limits.marginMs;
  const replicas = Math.max(1, opts.expectedReplicas);
  const share: LimiterLimits = {
    ...limits,
    perWindow: Math.max(1, Math.floor(limits.perWindow / replicas)),
    perDay: Math.max(1, Math.floor(limits.perDay / replicas)),
  };
  const localSlots: number[] = [];
  let fallbackSlots: number[] = [];
  let fallback: MemoryBackend | undefined;
  let retryAt = 0;

  function record(slot: number, inFallback: boolean): void {
    const now = clock();
    pruneUpTo(localSlots, now - daySpan);
    insertSorted(localSlots, slot);
    if (!inFallback) return;
    fallbackSlots.push(slot);
    if (fallbackSlots.length > 2 * share.perDay) fallbackSlots = fallbackSlots.filter((t) => t > now - daySpan);
  }

  /** `failed`: a command really failed (not merely skipped while waiting to probe): wait before the next try. */
  function enterFallback(err: unknown, failed: boolean): MemoryBackend {
    if (failed) retryAt = clock() + probeIntervalMs;
    if (!fallback) {
      logger.warn('Redis unreachable: reads use this replica\'s share of the upstream budget, sales answer 503', {
        endpointKey: opts.endpointKey, share: share.perWindow, error: err instanceof Error ? err.message : String(err),
      });
      fallback = createMemoryBackend(share, { ...classes, saleReservedSlots: 0 }, clock);
      fallback.seed(localSlots);
    }
    return fallback;
  }

  async function tryRedis(): Promise<boolean> {
    if (!redis.connected()) return false;
    if (!fallback) return true;
    if (clock() < retryAt) return false;
    // Recovery: first tell Redis what we sent without it, then trust it again.
    const now = clock();
    const sorted = [...fallbackSlots].sort((a, b) => a - b);
    await redis.addStarts(countIn(sorted, now - span, Infinity), countIn(sorted, now - daySpan, Infinity));
    fallbackSlots = [];
    fallback = undefined;
    logger.info('Redis reachable again: the shared upstream budget is back', { endpointKey: opts.endpointKey });
    return true;
  }

  /** Forgets a released slot locally too, so a later fallback does not count a call that never started. */
  function unrecord(slot: number, inFallback: boolean): void {
    removeSorted(localSlots, slot);
    if (inFallback) {
      const i = fallbackSlots.indexOf(slot);
      if (i >= 0) fallbackSlots.splice(i, 1);
    }
  }

  /**
   * Proceed when Redis cannot confirm: the slot was valid in the shared budget and is in our local log.
   * A release that fails leaves the entry in Redis: the slot stays used, which is only stricter.
   */
  const safe = (grant: Grant, slot: number): Grant =>
    grant.ok
      ? {
        ...grant,
        confirm: () => grant.confirm().catch(() => ({ blocked: false, lateMs: undefined })),
        // A 429 Redis cannot be told of: this replica's own share holds the key unsure meanwhile.
        outcome: (o, rateLimit) => grant.outcome(o, rateLimit).catch((err: unknown) => (o === 'rate_limited' ? enterFallback(err, true).block() : undefined)),
        release: async () => {
          unrecord(slot, false);
          await grant.release().catch((err: unknown) => logger.debug('could not release an unused upstream slot; it stays used', { error: (err as Error).message }));
        },
      }
      : grant;

  return {
    async reserve(cls: CallClass, maxWaitMs: number, request: ReserveRequest): Promise<Grant> {
      // Made only when needed: an Error captures a stack trace, and this line ran on every reservation
      // (2.5 % of a sale's CPU in the bench profile, the largest self time of our own code).
      let cause: unknown;
      let failed = false;
      try {
        if (await tryRedis()) {
          const grant = await redis.reserve(cls, maxWaitMs, request);
          const slot = clock() + grant.delayMs;
          if (grant.ok) record(slot, false);
          return safe(grant, slot);
        }
      } catch (err) {
        cause = err;
        failed = true;
      }
      cause ??= new Error('Redis connection is down');
      const local = enterFallback(cause, failed);
      // Writes need the shared budget (guarantee 5): only reads and background work go through this replica's share.
      if (!isPaced(cls)) throw new LimiterUnavailableError(undefined, { cause });
      const grant = await local.reserve(cls, maxWaitMs, request);
      if (!grant.ok) return grant;
      const slot = clock() + grant.delayMs;
      record(slot, true);
      return { ...grant, release: async () => (unrecord(slot, true), grant.release()) };
    },

    async reconcile(minuteUsed: number, dayUsed: number): Promise<number> {
      if (fallback) {
        // Only the part of the gateway's use that eats into our share: used - (limit - share).
        return fallback.reconcile(minuteUsed - (limits.perWindow - share.perWindow), dayUsed - (limits.perDay - share.perDay));
      }
      try {
        return await redis.reconcile(minuteUsed, dayUsed);
      } catch (err) {
        enterFallback(err, true);
        return 0;
      }
    },

    // The shared day only: while Redis is away there is nothing shared to report (the scrape skips the gauges).
    dayUsage: (): Promise<DayUsage> => redis.dayUsage(),

    fallbackMode: () => (fallback ? 1 : 0),
    // The connection is back (ioredis 'ready'): the next call tries Redis at once rather than after the probe
    // interval, so a write right after a restart finds the shared budget instead of answering 503.
    reconnected() {
      retryAt = 0;
    },
    async close(): Promise<void> {},
  };
}
