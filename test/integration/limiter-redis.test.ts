import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { Registry } from 'prom-client';
import type { GatewayResult } from '../../src/gateway/types';
import { silentLogger } from '../../src/observability/logger';
import {
  createRedisScheduler, limiterKeys, LimiterUnavailableError, maxInAnyWindow,
  type CallClass, type LimiterLimits, type UpstreamScheduler,
} from '../../src/limiter';
import { freePort } from '../support/ports';
import { startPrivateRedis } from '../support/private-redis';
import { connectRedis, deletePrefix, uniquePrefix } from '../support/redis';

/** Redis-only behaviour (issue 4, item 4): unreachable Redis, recovery, and a Redis that lost our state. */
const W = 500;
const M = 200;
const SPAN = W + M;
const TOL = 15;
const LIMITS: LimiterLimits = { perWindow: 6, windowMs: W, perDay: 1000, dayWindowMs: 60_000, marginMs: M };
const CLASSES = { saleMaxWaitMs: 3000, readMaxWaitMs: 3000, saleReservedSlots: 1 };
const logger = silentLogger();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ok = (): GatewayResult<string> => ({ value: 'ok', rateLimit: undefined, host: 'test', status: 200 });




/** A connection that reconnects quickly and never queues a command for long. */
function connection(port: number): Redis {
  const redis = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => 100, connectTimeout: 500 });
  redis.on('error', () => undefined);
  return redis;
}

function scheduler(redis: Redis, registry: Registry, keyPrefix = uniquePrefix('limiter'), limits: LimiterLimits = LIMITS): UpstreamScheduler {
  return createRedisScheduler({
    redis, keyPrefix, endpointKey: 'v2', limits, classes: CLASSES, logger, registry,
    expectedReplicas: 3, commandTimeoutMs: 300, probeIntervalMs: 100,
  });
}

async function timed(s: UpstreamScheduler, cls: CallClass, maxWaitMs?: number): Promise<{ startedAt?: number; error?: unknown }> {
  const out: { startedAt?: number; error?: unknown } = {};
  try {
    await s.run(cls, async () => {
      out.startedAt = performance.now();
      return ok();
    }, { maxWaitMs });
  } catch (error) {
    out.error = error;
  }
  return out;
}

const gauge = async (registry: Registry, name: string) => (await registry.getSingleMetric(name)?.get())?.values[0]?.value;

describe('Redis scheduler, degraded', () => {
  it('when Redis is unreachable, then reads use this replica\'s share and sales fail fast with LimiterUnavailableError', async () => {
    const redis = connection(await freePort());
    const registry = new Registry();
    const s = scheduler(redis, registry);
    try {
      const reads = await Promise.all(Array.from({ length: 4 }, () => timed(s, 'read')));
      const starts = reads.map((r) => r.startedAt as number);
      expect(reads.every((r) => r.error === undefined)).toBe(true);
      // Share = floor(6 / 3) = 2 per window on this replica.
      expect(maxInAnyWindow(starts, W + M / 2)).toBeLessThanOrEqual(2);
      expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(SPAN - TOL);
      // Asked to wait up to a minute: refused at once rather than after that wait (the ceiling is a quarter of
      // it, so a busy box's slowness cannot be taken for the wait, nor the wait for slowness; issue 41).
      const before = performance.now();
      const sale = await timed(s, 'sale', 60_000);
      expect(sale.error).toBeInstanceOf(LimiterUnavailableError);
      expect(sale.startedAt).toBeUndefined();
      expect(performance.now() - before).toBeLessThan(15_000);
      expect(await gauge(registry, 'tokengate_limiter_fallback_mode')).toBe(1);
    } finally {
      await s.close();
      redis.disconnect();
    }
  });

  it('when Redis goes away and comes back empty, then sales fail meanwhile and, once back, nothing starts for one window', async () => {
    // A private, non-persistent redis-server this test may stop (never the shared one).
    const server = await startPrivateRedis();
    const redis = connection(server.port);
    const registry = new Registry();
    const prefix = uniquePrefix('limiter');
    const s = scheduler(redis, registry, prefix);
    try {
      expect((await timed(s, 'sale')).error).toBeUndefined();
      await server.shutdown();
      await sleep(50);
      expect((await timed(s, 'sale')).error).toBeInstanceOf(LimiterUnavailableError);
      expect((await timed(s, 'read')).error).toBeUndefined();

      // Back, without the state (no persistence): an empty Redis must not be trusted for one full window.
      await server.start();
      const upAt = performance.now();
      let sale: { startedAt?: number; error?: unknown } = {};
      for (let i = 0; i < 50; i++) {
        sale = await timed(s, 'sale');
        if (!(sale.error instanceof LimiterUnavailableError)) break;
        await sleep(50);
      }
      expect(sale.error).toBeUndefined();
      expect(sale.startedAt as number).toBeGreaterThanOrEqual(upAt + SPAN - TOL);
      expect(await gauge(registry, 'tokengate_limiter_fallback_mode')).toBe(0);
      // The read made in fallback was written back to the shared count.
      const [, minute] = limiterKeys(prefix, 'v2');
      expect(await redis.zrange(minute, '0', '-1')).toEqual(expect.arrayContaining(['f1']));
    } finally {
      await s.close();
      redis.disconnect();
      await server.stop();
    }
  });

  it('when the limiter keys are deleted under a running replica, then it blocks the key for one full window', async () => {
    const redis = connectRedis();
    const prefix = uniquePrefix('limiter');
    const s = scheduler(redis, new Registry(), prefix);
    try {
      expect((await timed(s, 'read')).error).toBeUndefined();
      const keys = limiterKeys(prefix, 'v2');
      // meta, the minute and day logs, and the day's reads (no background call was made).
      expect(await redis.exists(...keys)).toBe(4);
      await deletePrefix(redis, prefix);
      const arrivedAt = performance.now();
      const next = await timed(s, 'read');
      expect(next.error).toBeUndefined();
      expect(next.startedAt as number).toBeGreaterThanOrEqual(arrivedAt + SPAN - TOL);
    } finally {
      await s.close();
      await deletePrefix(redis, prefix);
      await redis.quit();
    }
  });

  it('when a sale is placed before queued reads, then the keys live until the last reservation has passed', async () => {
    const redis = connectRedis();
    const prefix = uniquePrefix('limiter');
    const s = scheduler(redis, new Registry(), prefix);
    try {
      // 6 per window, 5 for reads: 11 reads reach two windows ahead; then a sale goes into this window.
      const reads = Array.from({ length: 11 }, () => timed(s, 'read'));
      await sleep(50);
      const sale = await timed(s, 'sale');
      expect(sale.error).toBeUndefined();
      const [, minute] = limiterKeys(prefix, 'v2');
      expect(await redis.pttl(minute)).toBeGreaterThan(2 * SPAN - 100);
      await Promise.all(reads);
    } finally {
      await s.close();
      await deletePrefix(redis, prefix);
      await redis.quit();
    }
  });

  it('when a fresh Redis is first used, then calls start at once and the keys share one hash tag', async () => {
    const redis = connectRedis();
    const prefix = uniquePrefix('limiter');
    const registry = new Registry();
    // A 20 s window: a Redis taken for one that lost our state would block the first call that long (plus the
    // margin); a quarter of it is the ceiling, far above a busy box's slowness (issue 41).
    const s = scheduler(redis, registry, prefix, { ...LIMITS, windowMs: 20_000 });
    try {
      const arrivedAt = performance.now();
      const first = await timed(s, 'sale');
      expect((first.startedAt as number) - arrivedAt).toBeLessThan(5_000);
      const keys = limiterKeys(prefix, 'v2');
      for (const key of keys) expect(key.startsWith(`{${prefix}:v2}:`)).toBe(true);
      const text = await registry.metrics();
      for (const name of ['queue_wait_seconds', 'refusals_total', 'phantom_reservations_total', 'upstream_429_total', 'fallback_mode']) {
        expect(text).toContain(`tokengate_limiter_${name}`);
      }
    } finally {
      await s.close();
      await deletePrefix(redis, prefix);
      await redis.quit();
    }
  });
});
