import { spawn } from 'node:child_process';
import path from 'node:path';
import fc from 'fast-check';
import { maxInAnyWindow, orderViolations, waves } from '../../src/limiter';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { connectRedis, deletePrefix, redisUrl, uniquePrefix } from '../support/redis';

/**
 * Issue 4, "Done when": 3 PROCESSES, each with its own scheduler and Redis connection, call the sandbox gateway
 * in `sliding` mode with latency jitter; the sandbox itself counts what arrives. 10 per 2 s, margin 250 ms.
 */
const N = 10;
const W = 2000;
const M = 250;
const R = 2;
const ROOT = path.join(__dirname, '..', '..');

/** `answeredMs`: from the start to the sandbox's answer, which it counts the call before sending. */
interface ChildCall { cls: 'sale' | 'read'; arrivedAt: number; startedAt?: number; answeredMs?: number; error?: string }
interface Arrival { at: number; cls: 'sale' | 'read' }

/** The child: transpiles the TypeScript sources on load (no build needed), runs its arrivals, prints JSON. */
const CHILD = `
const ts = require('typescript');
const fs = require('node:fs');
require.extensions['.ts'] = (m, f) => m._compile(ts.transpileModule(fs.readFileSync(f, 'utf8'), {
  compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
}).outputText, f);
const { performance, monitorEventLoopDelay } = require('node:perf_hooks');
const Redis = require('ioredis').default;
const root = process.env.ROOT;
const { createRedisScheduler } = require(root + '/src/limiter');
const { parseRateLimitHeader } = require(root + '/src/gateway/rate-limit-header');
const { GatewayRateLimitedError, GatewayServerError } = require(root + '/src/gateway/errors');
const { silentLogger } = require(root + '/src/observability/logger');
const { callSandbox } = require(root + '/src/sandbox/client');
const { Registry } = require('prom-client');
const cfg = JSON.parse(process.env.LIMITER_CHILD);
const now = () => performance.timeOrigin + performance.now();
(async () => {
  const redis = new Redis(cfg.redisUrl, { maxRetriesPerRequest: 1 });
  await redis.ping();
  // Warm up as a running service is: the first fetch() loads its HTTP stack and stalls the event loop.
  await fetch(cfg.url + '/ping');
  const registry = new Registry();
  const s = createRedisScheduler({ redis, keyPrefix: cfg.prefix, endpointKey: 'v2', limits: cfg.limits, classes: cfg.classes,
    logger: silentLogger(), expectedReplicas: 3, registry });
  const calls = [];
  const gateway = async (c) => {
    c.startedAt = now();
    const r = await callSandbox(cfg.baseUrl, 'GET', 'customers');
    c.answeredMs = now() - c.startedAt;
    const rateLimit = parseRateLimitHeader(r.headers.get('x-rate-limit'));
    if (r.status === 429 && r.json && r.json.errorcode === 155) throw new GatewayRateLimitedError('429', { status: 429, errorcode: 155, rateLimit });
    if (r.status !== 200) throw new GatewayServerError('status ' + r.status, { status: r.status, rateLimit });
    return { value: r.json, rateLimit, host: 'sandbox', status: r.status };
  };
  // Ready: the parent picks one start time for the 3 processes once all are up.
  process.stdout.write('ready\\n');
  cfg.startAt = await new Promise((r) => process.stdin.once('data', (d) => r(Number(String(d).trim()))));
  process.stdin.pause();
  await new Promise((r) => setTimeout(r, Math.max(0, cfg.startAt - now())));
  // A stalled event loop delays a caller between its arrival and its reservation reaching Redis: measured.
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  await Promise.all(cfg.arrivals.map((a) => new Promise((done) => setTimeout(() => {
    const c = { cls: a.cls, arrivedAt: now() };
    calls.push(c);
    s.run(a.cls, () => gateway(c)).then(done, (e) => { c.error = e.code || String(e); done(); });
  }, Math.max(0, cfg.startAt + a.at - now())))));
  await s.close();
  await redis.quit();
  const late = (await registry.getSingleMetric('tokengate_limiter_late_wakes_total').get()).values.reduce((n, v) => n + v.value, 0);
  loop.disable();
  process.stdout.write(JSON.stringify({ calls, late, stallMs: loop.max / 1e6 }));
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
`;

interface ChildResult { calls: ChildCall[]; late: number; stallMs: number }

interface Child { ready: Promise<void>; go(startAt: number): void; result: Promise<ChildResult> }

function startChild(env: Record<string, unknown>): Child {
  const child = spawn(process.execPath, ['-e', CHILD], {
    cwd: ROOT,
    env: { ...process.env, ROOT, LIMITER_CHILD: JSON.stringify(env) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => (onReady = r));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('ready\n')) onReady();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const result = new Promise<ChildResult>((resolve, reject) => {
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.slice('ready\n'.length)) as ChildResult) : reject(new Error(`child failed (${code}): ${err}`))));
  });
  return { ready, go: (startAt) => child.stdin.end(`${startAt}\n`), result };
}

/** Per process: a saturating burst of sales at 0, then random later arrivals of both classes. */
const process3 = fc.array(
  fc.record({ at: fc.integer({ min: 0, max: 4000 }), count: fc.integer({ min: 1, max: 5 }), everyMs: fc.integer({ min: 0, max: 200 }), sale: fc.boolean() }),
  { maxLength: 3 },
).map((groups): Arrival[] => [
  ...Array.from({ length: 10 }, (): Arrival => ({ at: 0, cls: 'sale' })),
  ...groups.flatMap((g) => Array.from({ length: g.count }, (_, i): Arrival => ({ at: g.at + i * g.everyMs, cls: g.sale ? 'sale' : 'read' }))),
]);

describe('scheduler in 3 processes against the sandbox (sliding mode, jitter)', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ settings: { rateMode: 'sliding', ratePerMinute: N, rateWindowMs: W, ratePerDay: 100_000, latencyMs: 10, jitterMs: 40 } });
  });
  afterAll(() => sb.close());

  it('when random arrivals come from 3 processes, then the sandbox sees no 429 and at most N in any window, order holds and the budget is used', async () => {
    await fc.assert(
      fc.asyncProperty(fc.tuple(process3, process3, process3), async (patterns) => {
        const prefix = uniquePrefix('limiter-e2e');
        let results: ChildResult[];
        try {
          const children = patterns.map((arrivals) => startChild({
            redisUrl: redisUrl(), prefix, url: sb.url, baseUrl: sb.baseUrl, arrivals,
            limits: { perWindow: N, windowMs: W, perDay: 100_000, dayWindowMs: 3_600_000, marginMs: M },
            // Waits long enough that no caller is refused, however busy the box (issue 41: sales were, at 10 s, when
            // the stretched queue ran past it): the test is about the sandbox's counts, order and use of the budget.
            // Up to 75 calls at 10 a window wait at most 8 spans (17 s) on a quiet box.
            classes: { saleMaxWaitMs: 60_000, readMaxWaitMs: 60_000, saleReservedSlots: R },
          }));
          await Promise.race([Promise.all(children.map((c) => c.ready)), Promise.all(children.map((c) => c.result))]);
          sb.reset();
          const startAt = Date.now() + 200;
          for (const c of children) c.go(startAt);
          results = await Promise.all(children.map((c) => c.result));
        } finally {
          const redis = connectRedis();
          await deletePrefix(redis, prefix);
          await redis.quit();
        }
        const calls = results.flatMap((r) => r.calls);
        const lateWakes = results.reduce((n, r) => n + r.late, 0);
        const stallMs = Math.max(...results.map((r) => r.stallMs));
        const stats = sb.stats().endpoints.v2;
        const started = (cls?: string) => calls.filter((c) => c.startedAt !== undefined && (!cls || c.cls === cls));
        // Premise of the sandbox's counts. The scheduler spaces the starts of calls N apart by at least W + M / 2;
        // the margin absorbs what happens after a start. The sandbox counts a call at some moment between its
        // start and its answer, so it sees calls i and i + N at least (start[i+N] - start[i] - answered[i]) apart,
        // and can only refuse one if that falls below W: a loaded box (one core for the suite) once stretched a
        // call past the margin this way and the sandbox counted 2 over its limit, with the starts spaced right.
        const timed = started().sort((a, b) => (a.startedAt as number) - (b.startedAt as number));
        let closestMs = Infinity;
        for (let i = 0; i + N < timed.length; i++) {
          const [a, b] = [timed[i] as ChildCall, timed[i + N] as ChildCall];
          closestMs = Math.min(closestMs, (b.startedAt as number) - (a.startedAt as number) - (a.answeredMs ?? Infinity));
        }
        if (closestMs > W) {
          expect(stats?.rateLimited).toBe(0);
          expect(stats?.maxInWindow).toBeLessThanOrEqual(N);
          expect(calls.filter((c) => c.error)).toEqual([]);
        } else {
          process.stdout.write(`limiter-sandbox: calls N apart may have reached the sandbox ${Math.round(closestMs)} ms apart (window ${W}), delayed after their start: its own counts were not checked\n`);
        }
        for (const cls of ['sale', 'read']) {
          // A caller that woke late lost its place by design. Across processes on a loaded box, arrivals within
          // 50 ms race to Redis and the starts of one slot differ by tens of ms; out of order means a slot later.
          // Redis orders callers by when their reservation arrives: a child's measured event-loop stall delays
          // that after the arrival was recorded (a loaded CI box did so once), and delays a wake short of a late
          // one (M / 2) past a later caller's start in the same wave (on one core: 5 such), so it widens both
          // tolerances. A real order fault costs a whole window (2 s), far beyond either.
          expect(orderViolations(started(cls).map((c) => ({ arrivedAt: c.arrivedAt, startedAt: c.startedAt as number })), 50 + stallMs, 50 + stallMs)).toBeLessThanOrEqual(lateWakes);
        }
        const all = started().map((c) => c.startedAt as number);
        // Our side agrees with the sandbox's: consecutive (N+1)-th starts at least W + M / 2 apart.
        expect(maxInAnyWindow(all, W + M / 2)).toBeLessThanOrEqual(N);
        // The budget is used: the opening burst (30 sales at once) keeps the queue full for its first 3 waves, so
        // each is full (N starts; fewer wastes slots) and comes in the window after the one before (less than two
        // spans later; a skipped window puts it two or more). Waves split at half a span of quiet. Judged from the
        // starts' order and grouping, not their speed (issue 41: a utilisation bound failed on a busy box).
        const span = W + M / 2;
        const opening = waves(all, span / 2).slice(0, 3);
        if (process.env.LIMITER_REPORT) process.stdout.write(`sandbox maxInWindow ${stats?.maxInWindow}, 429s ${stats?.rateLimited}, late wakes ${lateWakes}, stall ${Math.round(stallMs)} ms, closest ${Math.round(closestMs)} ms, opening waves ${JSON.stringify(opening)}\n`);
        // Full, that is, as many as were waiting when the wave began, up to N: on a box stalled enough (a load
        // average of 20, issue 41) the three processes' burst arrived spread out (waves of 1, 5 and 9) and a wave
        // cannot send calls not yet asked for. A caller that woke late (counted) keeps its slot used and queues
        // again: each costs its wave one start, never the budget.
        const waitingAt = (t: number) => calls.filter((c) => !c.error && c.arrivedAt < t && !((c.startedAt ?? Infinity) < t)).length;
        expect(opening.filter((w) => w.size > N || w.size < Math.min(N, waitingAt(w.at)) - lateWakes)).toEqual([]);
        // Each in the window after the one before, while calls were still waiting for it; a window goes by empty
        // only when N of its callers woke late.
        for (let i = 1; i < opening.length; i++) {
          const [prev, next] = [opening[i - 1] as { at: number; size: number }, opening[i] as { at: number }];
          if (waitingAt(prev.at + span) > 0) expect(next.at - prev.at).toBeLessThan((2 + Math.floor(lateWakes / N)) * span);
        }
      }),
      { numRuns: 2, endOnFailure: true },
    );
  }, 180_000);
});
