import { performance } from 'node:perf_hooks';
import type { Cluster, Redis } from 'ioredis';
import { createMemoryBackend } from './memory-backend';
import { createLimiterMetrics } from './metrics';
import { createRedisBackend } from './redis-backend';
import { createResilientBackend } from './resilient-backend';
import { createRunLoop } from './run-loop';
import { CLASS_DEFAULTS, type ReservationBackend, type SchedulerOptions, type UpstreamScheduler } from './types';
import type { LimiterMetrics } from './metrics';

export { RateLimitExceededError, LimiterUnavailableError } from './errors';
export { CLASS_RANK, CLASS_DEFAULTS, reservedSlots, maxWaitOf, callerCaps, dayShareOf, probeTimes } from './types';
export type { AheadSlot, CallClass, UpstreamScheduler, RunOptions, LimiterLimits, LimiterClasses, SchedulerOptions, Clock } from './types';
export { limiterKeys, callerKey } from './redis-backend';
export { callerId } from './caller';
export { maxInAnyWindow, utilisation, orderViolations, waves } from './measure';

const monotonic = () => performance.now();

function validate(opts: SchedulerOptions): void {
  const { limits, classes } = opts;
  for (const [name, v] of Object.entries(limits)) {
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`limiter: ${name} must be a finite number >= 0`);
  }
  if (limits.perWindow < 1 || limits.perDay < 1) throw new RangeError('limiter: limits must allow at least one call');
  if (classes.saleReservedSlots >= Math.min(limits.perWindow, limits.perDay)) {
    throw new RangeError('limiter: saleReservedSlots must leave reads at least one slot per window');
  }
  const shareOf = (name: 'readDayShare' | 'backgroundDayShare' | 'callerShare' | 'callerDayShare') => classes[name] ?? CLASS_DEFAULTS[name];
  for (const name of ['readDayShare', 'backgroundDayShare', 'callerShare', 'callerDayShare'] as const) {
    const v = shareOf(name);
    if (!Number.isFinite(v) || v <= 0 || v > 1) throw new RangeError(`limiter: ${name} must be a share in (0, 1]`);
  }
  // Pacing a class to less than one call a day would refuse it for ever.
  if (Math.floor(shareOf('readDayShare') * limits.perDay) < 1 || Math.floor(shareOf('backgroundDayShare') * limits.perDay) < 1) {
    throw new RangeError('limiter: readDayShare and backgroundDayShare must each allow at least one call a day');
  }
}

/** The scheduler, reporting the day window's use at scrape time until it is closed. */
function withDayGauges(loop: UpstreamScheduler, backend: ReservationBackend, metrics: LimiterMetrics, perDay: number): UpstreamScheduler {
  const unwatch = metrics.watchDay(() => backend.dayUsage(), perDay);
  return {
    run: (cls, call, runOpts) => loop.run(cls, call, runOpts),
    acquire: (cls, runOpts) => loop.acquire(cls, runOpts),
    reserveAhead: (cls, runOpts) => loop.reserveAhead(cls, runOpts),
    close: () => (unwatch(), loop.close()),
  };
}

/** Development mode: one process, same rule and semantics as the Redis scheduler. */
export function createMemoryScheduler(opts: SchedulerOptions): UpstreamScheduler {
  validate(opts);
  const clock = opts.clock ?? monotonic;
  const backend = createMemoryBackend(opts.limits, opts.classes, clock);
  const metrics = createLimiterMetrics(opts.registry, opts.endpointKey);
  const loop = createRunLoop({ backend, limits: opts.limits, classes: opts.classes, clock, logger: opts.logger, metrics });
  return withDayGauges(loop, backend, metrics, opts.limits.perDay);
}

export interface RedisSchedulerOptions extends SchedulerOptions {
  redis: Redis | Cluster;
  keyPrefix: string;
  /** Replicas sharing the budget; while Redis is unreachable reads use limit ÷ this (floor, at least 1). */
  expectedReplicas: number;
  /** A Redis command slower than this counts as Redis unreachable (ms, default 1000). */
  commandTimeoutMs?: number;
  /** How often to try Redis again after a failed command while in fallback (ms, default 500). */
  probeIntervalMs?: number;
}

/**
 * Shared budget across replicas, with the fallback folded in (guarantee 5 is not optional in production):
 * reads use a per-replica share while Redis is unreachable, sales throw LimiterUnavailableError.
 * The connection belongs to the caller: close() does not quit it.
 */
export function createRedisScheduler(opts: RedisSchedulerOptions): UpstreamScheduler {
  validate(opts);
  const clock = opts.clock ?? monotonic;
  const redis = createRedisBackend({
    redis: opts.redis,
    keyPrefix: opts.keyPrefix,
    endpointKey: opts.endpointKey,
    limits: opts.limits,
    classes: opts.classes,
    logger: opts.logger,
    commandTimeoutMs: opts.commandTimeoutMs,
  });
  const backend = createResilientBackend({
    redis,
    limits: opts.limits,
    classes: opts.classes,
    expectedReplicas: opts.expectedReplicas,
    clock,
    logger: opts.logger,
    endpointKey: opts.endpointKey,
    probeIntervalMs: opts.probeIntervalMs,
  });
  opts.redis.on('ready', backend.reconnected);
  const metrics = createLimiterMetrics(opts.registry, opts.endpointKey);
  const loop = createRunLoop({ backend, limits: opts.limits, classes: opts.classes, clock, logger: opts.logger, metrics });
  const scheduler = withDayGauges(loop, backend, metrics, opts.limits.perDay);
  return {
    ...scheduler,
    async close() {
      opts.redis.off('ready', backend.reconnected);
      await scheduler.close();
    },
  };
}
export { limiterSettings, endpointKeyOf } from './settings';
