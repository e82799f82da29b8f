import { performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { GatewayRateLimitedError, GatewayServerError } from '../../src/gateway/errors';
import { parseRateLimitHeader } from '../../src/gateway/rate-limit-header';
import type { GatewayResult } from '../../src/gateway/types';
import { createRedisScheduler, maxInAnyWindow, probeTimes, type UpstreamScheduler } from '../../src/limiter';
import { silentLogger } from '../../src/observability/logger';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';
import type Redis from 'ioredis';
import { connectRedis, deletePrefix, uniquePrefix } from '../support/redis';
import { loopLag } from '../support/wait';

/**
 * Issue 40, item 2: something else on the endpoint key (the merchant's console, another integration) fills the
 * gateway's window, so tokengate meets a 429 its budget did not predict. Two replicas (two Redis connections, one
 * key) then send a steady stream of sales against the sandbox in `fixed` and in `sliding` mode. Measured: from
 * the window's reopening (the sandbox's rule, on the clock it uses) to the next approved call, and the 429s it cost.
 * Scaled down: 30 per 2 s, margin 250 ms (the probe's times scale with the span: probeTimes()); 30, so that the
 * refused probes, which stay in the budget's log, cannot fill a window on their own (at 45 per minute: 16 at most).
 */
const N = 30;
const W = 2000;
const M = 250;
const LIMITS = { perWindow: N, windowMs: W, perDay: 100_000, dayWindowMs: 3_600_000, marginMs: M };
const CLASSES = { saleMaxWaitMs: 10_000, readMaxWaitMs: 5000, saleReservedSlots: 0 };
const PROBE = probeTimes(LIMITS);

interface Attempt { startedAt: number; answeredAt: number; status: number }

async function sandboxCall(baseUrl: string, attempts: Attempt[]): Promise<GatewayResult<unknown>> {
  const startedAt = performance.now();
  const r = await callSandbox(baseUrl, 'GET', 'customers');
  attempts.push({ startedAt, answeredAt: performance.now(), status: r.status });
  const rateLimit = parseRateLimitHeader(r.headers.get('x-rate-limit'));
  if (r.status === 429) throw new GatewayRateLimitedError('429', { status: 429, errorcode: 155, rateLimit });
  if (r.status !== 200) throw new GatewayServerError(`status ${r.status}`, { status: r.status, rateLimit });
  return { value: r.json, rateLimit, host: 'sandbox', status: r.status };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(['fixed', 'sliding'] as const)('a 429 the budget did not predict, against the sandbox (%s mode)', (mode) => {
  let sb: RunningSandbox;
  let prefix: string;
  let connections: Redis[];
  let replicas: UpstreamScheduler[];
  beforeAll(async () => {
    sb = await startSandbox({ settings: { rateMode: mode, ratePerMinute: N, rateWindowMs: W, ratePerDay: 100_000, latencyMs: 5 } });
  });
  beforeEach(async () => {
    prefix = uniquePrefix('limiter-probe');
    connections = [connectRedis(), connectRedis()];
    await Promise.all(connections.map((c) => c.ping()));
    replicas = connections.map((redis) => createRedisScheduler({
      redis, keyPrefix: prefix, endpointKey: 'v2', limits: LIMITS, classes: CLASSES, logger: silentLogger(), expectedReplicas: 2, registry: new Registry(),
    }));
  });
  afterEach(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await deletePrefix(connections[0] as Redis, prefix);
    await Promise.all(connections.map((c) => c.quit()));
  });
  afterAll(() => sb.close());

  it('when another client fills the window, then tokengate recovers within a margin of its reopening at the cost of at most one refused probe, one call out at a time, and at most N in any window', async () => {
    // The other client: N calls on the key, none through tokengate. Fixed mode: sent just after a window's
    // boundary, so the window stays closed long after the 429. On a busy box, in either mode, they can take so
    // long that half the window is gone before tokengate sends anything (then there may be no incident at all:
    // sliding mode met none under four CPU burners): the sandbox is reset and they go again (issue 41).
    const sendForeign = async (): Promise<{ foreignSentAt: number; foreignSentPerf: number }> => {
      sb.reset();
      if (mode === 'fixed') await sleep(W - (Date.now() % W) + 20);
      const sent = { foreignSentAt: Date.now(), foreignSentPerf: performance.now() };
      const foreign = await Promise.all(Array.from({ length: N }, () => callSandbox(sb.baseUrl, 'GET', 'customers')));
      expect(foreign.every((r) => r.status === 200)).toBe(true);
      return sent;
    };
    // When the sandbox takes calls again, on its own clock (Date.now): the next boundary, or the first call's leaving.
    const reopening = (sentAt: number) => (mode === 'fixed' ? Math.floor(sentAt / W) * W + W : sentAt + W);
    const lag = loopLag();
    let sent = await sendForeign();
    for (let tries = 1; Date.now() >= reopening(sent.foreignSentAt) - W / 2 && tries < 5; tries++) sent = await sendForeign();
    const { foreignSentAt, foreignSentPerf } = sent;
    const reopensAt = reopening(foreignSentAt);
    const reopensPerf = performance.now() + (reopensAt - Date.now());

    // tokengate: a sale every 50 ms, alternating replicas, until a window past the reopening.
    const attempts: Attempt[] = [];
    const pending: Promise<unknown>[] = [];
    const until = reopensPerf + W / 2;
    for (let i = 0; performance.now() < until; i++) {
      pending.push((replicas[i % 2] as UpstreamScheduler).run('sale', () => sandboxCall(sb.baseUrl, attempts)).catch((e: unknown) => e));
      await sleep(50);
    }
    await Promise.all(pending);
    const stalls = 2 * lag.maxMs();
    lag.stop();

    attempts.sort((a, b) => a.startedAt - b.startedAt);
    const first429 = attempts.find((a) => a.status === 429);
    expect(first429).toBeDefined();
    const approved = attempts.filter((a) => a.status === 200);
    const firstApproved = approved.find((a) => a.startedAt > (first429 as Attempt).startedAt) as Attempt;
    expect(firstApproved).toBeDefined();
    const refused = attempts.filter((a) => a.status === 429).length;
    const recoveryMs = firstApproved.answeredAt - reopensPerf;
    if (process.env.LIMITER_REPORT) {
      process.stdout.write(`${mode}: 429 at ${Math.round(reopensPerf - (first429 as Attempt).answeredAt)} ms before reopening; first approved ${Math.round(recoveryMs)} ms after it; 429s ${refused} (extra ${refused - 1}); approved after ${approved.length}; stalls ${Math.round(stalls)} ms\n`);
    }
    // Recovery (issue 40's target: within 5 s of the reopening at production, where the key used to stay closed
    // a full span after the 429): the window's calls are placed no later than the incident's first 429, so the
    // probe goes at most a span after it: within the margin (plus the time the other client's calls took to
    // reach that 429, a poll and a call) of the reopening. The margin is relative to the box (issue 41): it adds
    // what this process's stalls cost (its timers ran that late; the sandbox answers in this process), twice: the
    // probe's timer and its call. Without the probe the key stayed closed a full span (2.25 s) past the 429.
    expect(recoveryMs).toBeLessThan(M + ((first429 as Attempt).answeredAt - foreignSentPerf) + PROBE.pollMs + 250 + stalls);
    // While unsure (from the first 429's answer), one call out at a time: none starts before the previous one's answer.
    const unsure = attempts.filter((a) => a.startedAt >= (first429 as Attempt).answeredAt && a.startedAt <= firstApproved.startedAt);
    for (let i = 1; i < unsure.length; i++) expect((unsure[i] as Attempt).startedAt).toBeGreaterThanOrEqual((unsure[i - 1] as Attempt).answeredAt);
    // At most one refused probe after the first 429 (the target): the 429 says the window is full, so the next
    // probe goes where it can have room, not every few hundred ms until it reopens (6-9 did before). Calls that
    // were already on their way when the first 429 came back (a sale every 50 ms here, on a busy box) are not the
    // probe's: they started before the key was unsure; so are those the other replica released before it learnt
    // of the 429 (through Redis), which a busy box's stalls delay: counted from the answer plus those stalls (a
    // box at a load average of 12 saw 2; issue 41).
    const probesRefused = attempts.filter((a) => a.status === 429 && a.startedAt >= (first429 as Attempt).answeredAt + stalls).length;
    expect(probesRefused).toBeLessThanOrEqual(1);
    // And the any-window rule holds for all tokengate sent, refused calls included (guarantee 3).
    expect(maxInAnyWindow(attempts.map((a) => a.startedAt), W + M / 2)).toBeLessThanOrEqual(N);
    // Back to full pace: the sandbox approves every later call in the reopened window.
    expect(attempts.filter((a) => a.startedAt > firstApproved.answeredAt && a.status === 429)).toHaveLength(0);
  });
});
