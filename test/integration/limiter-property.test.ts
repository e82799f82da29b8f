import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import type Redis from 'ioredis';
import { Registry } from 'prom-client';
import type { GatewayResult } from '../../src/gateway/types';
import { silentLogger } from '../../src/observability/logger';
import {
  createRedisScheduler, maxInAnyWindow, orderViolations, RateLimitExceededError, utilisation,
  type CallClass, type LimiterLimits, type UpstreamScheduler,
} from '../../src/limiter';
import { connectRedis, deletePrefix, uniquePrefix } from '../support/redis';
import { loopLag } from '../support/wait';

/**
 * Random arrival patterns (bursts, steady floods, idle gaps) from 3 replicas on one Redis (issue 4, "Done
 * when"), at 10 per 2 s + 200 ms margin (late wakes tolerated up to 100 ms: a loaded CI box pauses that
 * long), 2 slots kept for sales.
 */
const N = 10;
const W = 2000;
const M = 200;
const SPAN = W + M;
const R = 2;
const LIMITS: LimiterLimits = { perWindow: N, windowMs: W, perDay: 100_000, dayWindowMs: 3_600_000, marginMs: M };
const CLASSES = { saleMaxWaitMs: 9000, readMaxWaitMs: 5000, saleReservedSlots: R };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ok = (): GatewayResult<string> => ({ value: 'ok', rateLimit: undefined, host: 'test', status: 200 });

interface Call { cls: CallClass; arrivedAt: number; startedAt?: number; error?: unknown }

async function replicas(count: number) {
  const prefix = uniquePrefix('limiter-prop');
  const registry = new Registry();
  const connections: Redis[] = Array.from({ length: count }, () => connectRedis());
  await Promise.all(connections.map((c) => c.ping()));
  const schedulers = connections.map((redis) => createRedisScheduler({
    redis, keyPrefix: prefix, endpointKey: 'v2', limits: LIMITS, classes: CLASSES, logger: silentLogger(), registry, expectedReplicas: count,
  }));
  return {
    schedulers,
    registry,
    async close() {
      await Promise.all(schedulers.map((s) => s.close()));
      await deletePrefix(connections[0] as Redis, prefix);
      await Promise.all(connections.map((c) => c.quit()));
    },
  };
}

function fire(s: UpstreamScheduler, cls: CallClass, calls: Call[], maxWaitMs?: number): Promise<void> {
  const c: Call = { cls, arrivedAt: performance.now() };
  calls.push(c);
  return s.run(cls, async () => {
    c.startedAt = performance.now();
    return ok();
  }, { maxWaitMs }).then(() => undefined, (error: unknown) => {
    c.error = error;
  });
}

type Segment =
  | { kind: 'burst'; replica: number; size: number; sales: number }
  | { kind: 'flood'; replica: number; count: number; everyMs: number; sales: boolean }
  | { kind: 'gap'; ms: number };

const segment: fc.Arbitrary<Segment> = fc.oneof(
  fc.record({ kind: fc.constant('burst' as const), replica: fc.nat(2), size: fc.integer({ min: 1, max: 10 }), sales: fc.nat(10) }),
  fc.record({ kind: fc.constant('flood' as const), replica: fc.nat(2), count: fc.integer({ min: 3, max: 8 }), everyMs: fc.integer({ min: 20, max: 200 }), sales: fc.boolean() }),
  fc.record({ kind: fc.constant('gap' as const), ms: fc.integer({ min: 100, max: 1200 }) }),
);

const started = (calls: Call[], cls?: CallClass) => calls.filter((c) => c.startedAt !== undefined && (!cls || c.cls === cls));

describe('Redis scheduler, random arrivals from 3 replicas', () => {
  it('when arrivals are random, then no window holds more than N, reads stay out of the sales\' slots and order holds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 2, maxLength: 4 }), async (segments) => {
        const env = await replicas(3);
        const calls: Call[] = [];
        const pending: Promise<void>[] = [];
        const lag = loopLag();
        try {
          for (const seg of segments) {
            if (seg.kind === 'gap') await sleep(seg.ms);
            else if (seg.kind === 'burst') {
              for (let i = 0; i < seg.size; i++) pending.push(fire(env.schedulers[(seg.replica + i) % 3] as UpstreamScheduler, i < seg.sales ? 'sale' : 'read', calls));
            } else {
              for (let i = 0; i < seg.count; i++) {
                pending.push(fire(env.schedulers[seg.replica] as UpstreamScheduler, seg.sales ? 'sale' : 'read', calls));
                await sleep(seg.everyMs);
              }
            }
          }
          await Promise.all(pending);
        } finally {
          await env.close();
        }
        // Only "could not start in time" refusals, and only for reads (sales wait up to 9 s).
        expect(calls.filter((c) => c.error && !(c.error instanceof RateLimitExceededError))).toEqual([]);
        expect(calls.filter((c) => c.cls === 'sale' && c.error)).toEqual([]);
        const all = started(calls).map((c) => c.startedAt as number);
        expect(maxInAnyWindow(all, W + M / 2)).toBeLessThanOrEqual(N);
        expect(maxInAnyWindow(started(calls, 'read').map((c) => c.startedAt as number), W + M / 2)).toBeLessThanOrEqual(N - R);
        const lateWakes = ((await env.registry.getSingleMetric('tokengate_limiter_late_wakes_total')?.get())?.values ?? []).reduce((n, v) => n + v.value, 0);
        for (const cls of ['sale', 'read'] as const) {
          const served = started(calls, cls).map((c) => ({ arrivedAt: c.arrivedAt, startedAt: c.startedAt as number }));
          expect(orderViolations(served, 3, 40)).toBeLessThanOrEqual(lateWakes);
        }
        // A sale waits for the sales ahead of it at R per window (plus the window in progress), never for reads; its
        // timer may fire late by what this process's stalls cost on a busy box (issue 41: 150 ms flat before).
        const stalls = 150 + 2 * lag.maxMs();
        lag.stop();
        for (const sale of started(calls, 'sale')) {
          const ahead = started(calls, 'sale').filter((o) => o.arrivedAt < sale.arrivedAt && (o.startedAt as number) > sale.arrivedAt).length;
          expect((sale.startedAt as number) - sale.arrivedAt).toBeLessThanOrEqual((Math.ceil((ahead + 1) / R) + 1) * SPAN + stalls);
        }
      }),
      { numRuns: 3, endOnFailure: true },
    );
  });

  // Reads may never use the R slots kept for sales, so a read-only saturation can use at most (N - R) / N.
  it.each([
    ['sales', 'sale' as const, 1],
    ['reads', 'read' as const, (N - R) / N],
  ])('when 3 replicas are saturated with a burst of %s, then the budget they may use is used at 85 %% or more', async (_name, cls, usable) => {
    const env = await replicas(3);
    const calls: Call[] = [];
    const count = Math.round(3 * N * usable);
    const lag = loopLag();
    try {
      // Each may wait a minute: how long the last ones queue is no subject here, a busy box only lengthens it.
      await Promise.all(Array.from({ length: count }, (_, i) => fire(env.schedulers[i % 3] as UpstreamScheduler, cls, calls, 60_000)));
    } finally {
      await env.close();
    }
    const starts = started(calls).map((c) => c.startedAt as number);
    expect(starts).toHaveLength(count);
    expect(maxInAnyWindow(starts, W + M / 2)).toBeLessThanOrEqual(N);
    // N per W + M is the most an any-window-exact scheduler can do: W / (W + M) over a long saturation. A busy
    // box's stalls stretch the span without the scheduler leaving a slot unused, so what this process's timers
    // lost is taken off the span (issue 41; the 0.85 target on its own is bench/budget.js's, on a box of its own).
    const stalled = lag.totalMs();
    lag.stop();
    const span = Math.max(...starts) - Math.min(...starts);
    // utilisation()'s formula over the span less the stalls: starts / (what the budget allowed over that span).
    const used = starts.length / (N * usable * (1 + Math.max(0, span - stalled) / W));
    if (process.env.LIMITER_REPORT) process.stdout.write(`${cls} utilisation ${utilisation(starts, N * usable, W).toFixed(3)} (${used.toFixed(3)} less ${Math.round(stalled)} ms of stalls) over ${starts.length} starts\n`);
    expect(used).toBeGreaterThanOrEqual(0.85);
  });
});
