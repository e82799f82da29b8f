import { performance } from 'node:perf_hooks';
import { createMemoryBackend } from '../../src/limiter/memory-backend';
import { createLimiterMetrics } from '../../src/limiter/metrics';
import { createRunLoop } from '../../src/limiter/run-loop';
import type { LimiterClasses, LimiterLimits } from '../../src/limiter';
import { silentLogger } from '../../src/observability/logger';

/**
 * Issue 15, item 3: after the gateway answers, the budget's reconciliation with its X-Rate-Limit header runs in
 * the background, so the caller's next Redis write (the idempotency completion) travels with it instead of
 * after it: a cached-token sale takes 3 sequential Redis round trips, not 4. It still happens, and close()
 * waits for it.
 */
const LIMITS: LimiterLimits = { perWindow: 45, windowMs: 60_000, perDay: 5000, dayWindowMs: 86_400_000, marginMs: 1000 };
const CLASSES: LimiterClasses = { saleMaxWaitMs: 1000, readMaxWaitMs: 1000, saleReservedSlots: 5 };

function setup() {
  const clock = () => performance.now();
  const memory = createMemoryBackend(LIMITS, CLASSES, clock);
  let release: () => void = () => undefined;
  const reconciled: [number, number][] = [];
  const backend = {
    ...memory,
    reserve: memory.reserve.bind(memory),
    block: memory.block.bind(memory),
    fallbackMode: memory.fallbackMode.bind(memory),
    close: memory.close.bind(memory),
    // A reconciliation that takes as long as the test says (a slow Redis round trip).
    reconcile: (minute: number, day: number) => new Promise<number>((resolve) => {
      release = () => {
        reconciled.push([minute, day]);
        resolve(0);
      };
    }),
  };
  const loop = createRunLoop({ backend, limits: LIMITS, classes: CLASSES, clock, logger: silentLogger(), metrics: createLimiterMetrics(undefined, 'v2') });
  return { loop, reconciled, release: () => release() };
}

const answer = { value: 'ok', rateLimit: { minuteUsed: 7, minuteLimit: 45, dayUsed: 70, dayLimit: 5000 }, host: 'h', status: 200 };

describe('the budget reconciliation after an answer', () => {
  it('when the gateway has answered, then the caller gets the answer without waiting for the reconciliation, which still happens', async () => {
    const { loop, reconciled, release } = setup();
    const result = await Promise.race([loop.run('sale', async () => answer), new Promise((r) => setTimeout(() => r('blocked'), 500))]);
    expect(result).toBe(answer);
    expect(reconciled).toEqual([]);
    release();
    await new Promise((r) => setImmediate(r));
    expect(reconciled).toEqual([[7, 70]]);
    await loop.close();
  });

  it('when the scheduler closes with a reconciliation still running, then close waits for it', async () => {
    const { loop, reconciled, release } = setup();
    await loop.run('read', async () => answer);
    let closed = false;
    const closing = loop.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(reconciled).toEqual([[7, 70]]);
  });

  it('when answers arrive while a reconciliation runs, then only the newest is reconciled after it (one Redis command, not one per sale)', async () => {
    const { loop, reconciled, release } = setup();
    const withUse = (minuteUsed: number) => async () => ({ ...answer, rateLimit: { ...answer.rateLimit, minuteUsed, dayUsed: 60 + minuteUsed } });
    await loop.run('sale', withUse(1));
    // The first reconciliation is running (not released); three more answers come meanwhile.
    for (const used of [2, 3, 4]) await loop.run('sale', withUse(used));
    release();
    await new Promise((r) => setTimeout(r, 10));
    release();
    await new Promise((r) => setTimeout(r, 10));
    expect(reconciled).toEqual([[1, 61], [4, 64]]);
    await loop.close();
  });
});
