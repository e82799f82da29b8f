import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import type { GatewayResult, RateLimitInfo } from '../../src/gateway/types';
import { silentLogger } from '../../src/observability/logger';
import {
  createMemoryScheduler, createRedisScheduler,
  type CallClass, type LimiterClasses, type LimiterLimits, type RunOptions, type UpstreamScheduler,
} from '../../src/limiter';
import type { RedisClient } from '../../src/redis/connect';
import { uniquePrefix } from '../support/redis';

/**
 * What the scheduler's contracts (limiter-suite.contract.ts, limiter-shares.contract.ts) share: replicas of
 * either implementation on scaled-down windows, and a recorder of when each call arrived and started.
 * Windows: 5 per 500 ms + 200 ms margin (a caller may wake up to 100 ms late: a loaded 2-core CI box pauses
 * that long). "Replicas" are separate Redis connections sharing one key (the memory scheduler is one process,
 * so its replicas are the same instance).
 */
export const W = 500;
export const M = 200;
export const SPAN = W + M;
export const LIMITS: LimiterLimits = { perWindow: 5, windowMs: W, perDay: 1000, dayWindowMs: 60_000, marginMs: M };
export const CLASSES: LimiterClasses = { saleMaxWaitMs: 5000, readMaxWaitMs: 3000, saleReservedSlots: 1 };
/** Late starts are re-reserved beyond M / 2, so consecutive (N+1)-th starts are at least W + M / 2 apart. */
export const GUARANTEED = W + M / 2;
/** Redis places slots on its clock, from before the reply that started the first call: allow that skew. */
export const TOL = 15;

/** Where the scheduler keeps its state: in memory, or in a Redis reached through `connect` (single node or Cluster). */
export type SchedulerBackend =
  | { kind: 'memory' }
  | {
      kind: 'redis';
      connect(): RedisClient;
      /** Removes the suite's keys; a throwaway server needs none. */
      cleanup?(redis: RedisClient, prefix: string): Promise<void>;
    };
export interface Setup {
  replicas: UpstreamScheduler[];
  registry: Registry;
  /**
   * The longest event-loop stall since setup, in ms. A stall delays a caller before it asks for a slot (not a
   * late wake: the scheduler never saw it), so upper bounds on waits and order allow for it (a loaded CI box
   * stalled 450 ms once). Lower bounds, the budget itself, never do.
   */
  stallMs(): number;
  close(): Promise<void>;
}

const logger = silentLogger();

export async function setup(backend: SchedulerBackend, count: number, limits: Partial<LimiterLimits> = {}, classes: Partial<LimiterClasses> = {}): Promise<Setup> {
  const registry = new Registry();
  const opts = { endpointKey: 'v2', limits: { ...LIMITS, ...limits }, classes: { ...CLASSES, ...classes }, logger, registry };
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const stallMs = () => loop.max / 1e6;
  if (backend.kind === 'memory') {
    const one = createMemoryScheduler(opts);
    return { replicas: Array.from({ length: count }, () => one), registry, stallMs, close: async () => (loop.disable(), one.close()) };
  }
  const prefix = uniquePrefix('limiter');
  const connections: RedisClient[] = Array.from({ length: count }, () => backend.connect());
  // Warm connections, as a running service has: a first connect would look like a late wake.
  await Promise.all(connections.map((c) => c.ping()));
  const replicas = connections.map((redis) => createRedisScheduler({ ...opts, redis, keyPrefix: prefix, expectedReplicas: 3 }));
  return {
    replicas,
    registry,
    stallMs,
    async close() {
      loop.disable();
      await Promise.all(replicas.map((r) => r.close()));
      await backend.cleanup?.(connections[0] as RedisClient, prefix);
      await Promise.all(connections.map((c) => c.quit()));
    },
  };
}

export interface Fired {
  cls: CallClass;
  arrivedAt: number;
  attempts: number[];
  error?: unknown;
}

export function ok(rateLimit?: RateLimitInfo): GatewayResult<string> {
  return { value: 'ok', rateLimit, host: 'test', status: 200 };
}

/** Fires calls and records when each arrived and when each attempt actually started. */
export function recorder() {
  const calls: Fired[] = [];
  function fire(s: UpstreamScheduler, cls: CallClass, opts?: RunOptions, body?: (attempt: number) => Promise<GatewayResult<string>>): Promise<Fired> {
    const c: Fired = { cls, arrivedAt: performance.now(), attempts: [] };
    calls.push(c);
    return s
      .run(cls, async () => {
        c.attempts.push(performance.now());
        return body ? body(c.attempts.length) : ok();
      }, opts)
      .then(() => c, (error: unknown) => Object.assign(c, { error }));
  }
  const starts = (cls?: CallClass) => calls.filter((c) => !cls || c.cls === cls).flatMap((c) => c.attempts);
  return { calls, fire, starts };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every timer kind; what withoutTimers() leaves real is the rest (I/O, setImmediate, the clocks). */
const NOT_TIMERS = ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame', 'requestIdleCallback', 'cancelIdleCallback', 'setImmediate', 'clearImmediate'] as const;

/**
 * "At once" as an event, not elapsed ms (issue 41): runs `start` with setTimeout and setInterval frozen (jest's fake
 * timers, never advanced) and resolves with what it settled to. The scheduler waits only on a timer (its sleep
 * until a slot), so a call that settles here was started or refused from its first reservation, with no wait,
 * however slow a busy box is; one that would have waited never settles, and after a generous ceiling this throws.
 * Redis and the event loop run as usual (I/O and setImmediate are real).
 */
export async function withoutTimers<T>(start: () => Promise<T>, ceilingMs = 20_000): Promise<T> {
  jest.useFakeTimers({ doNotFake: [...NOT_TIMERS] });
  try {
    let settled = false;
    const done = start().finally(() => (settled = true));
    const until = performance.now() + ceilingMs;
    while (!settled) {
      if (performance.now() > until) throw new Error(`not settled without a timer within ${ceilingMs} ms: it waited for one`);
      await new Promise((r) => setImmediate(r));
    }
    return await done;
  } finally {
    jest.useRealTimers();
  }
}
export const counterValue = async (registry: Registry, name: string) =>
  ((await registry.getSingleMetric(name)?.get())?.values ?? []).reduce((sum, v) => sum + v.value, 0);
