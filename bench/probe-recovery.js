'use strict';
/**
 * Recovery from a 429 the budget did not predict (issue 40, item 2), at PRODUCTION windows (45 per 60 s, a 1 s
 * margin), 3 replicas (3 schedulers on their own Redis connections) against the sandbox, in `fixed` and in
 * `sliding` mode, two incidents each:
 *   - injected: the sandbox answers one 429 (155) though its window has room (the soak's fault);
 *   - full: another client on the key fills the gateway's window (45 calls) just after a fixed-mode boundary,
 *     so the window stays closed for most of a minute.
 * tokengate sends a sale every 1.5 s (40 a minute, under the limit) throughout. Measured: seconds from the first
 * 429 to the next approved sale, from the window's reopening (the sandbox's rule on its clock) to that sale, and
 * the 429s beyond the first. `node bench/probe-recovery.js` writes bench/results/probe-recovery-<build>.json.
 */
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const Redis = require('ioredis');
const { Registry } = require('prom-client');
const { createRedisScheduler, probeTimes } = require('../dist/limiter');
const { GatewayRateLimitedError, GatewayServerError } = require('../dist/gateway/errors');
const { parseRateLimitHeader } = require('../dist/gateway/rate-limit-header');
const { silentLogger } = require('../dist/observability/logger');
const { callSandbox } = require('../dist/sandbox/client');
const { installCleanup, stopAll, ROOT } = require('./lib/procs');
const { makeCredentials, startRedis, startSandboxProcess } = require('./lib/services');

const N = 45;
const W = 60_000;
const LIMITS = { perWindow: N, windowMs: W, perDay: 5000, dayWindowMs: 86_400_000, marginMs: 1000 };
const EVERY_MS = 1500;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function incident(ctx, mode, kind) {
  const { redisUrl, sandbox, creds } = ctx;
  const endpointKey = `probe${mode}${kind}`;
  await sandbox.update({ rateMode: mode, rateWindowMs: W, endpointKeys: [{ key: endpointKey, ratePerMinute: N, ratePerDay: 5000 }] });
  const baseUrl = `${sandbox.url}/api/${endpointKey}/`;
  const call = () => callSandbox(baseUrl, 'GET', 'customers', { apiKey: creds.apiKey, apiPin: creds.apiPin });
  const prefix = `bench-probe-${Date.now().toString(36)}`;
  const connections = [0, 1, 2].map(() => new Redis(redisUrl, { maxRetriesPerRequest: 1 }));
  await Promise.all(connections.map((c) => c.ping()));
  const replicas = connections.map((redis) => createRedisScheduler({
    redis, keyPrefix: prefix, endpointKey, limits: LIMITS, logger: silentLogger(), registry: new Registry(), expectedReplicas: 3,
    classes: { saleMaxWaitMs: 30_000, readMaxWaitMs: 10_000, saleReservedSlots: 5 },
  }));
  let reopensPerf;
  if (kind === 'full') {
    await sleep(W - (Date.now() % W) + 500);
    const sentAt = Date.now();
    const r = await Promise.all(Array.from({ length: N }, call));
    if (!r.every((x) => x.status === 200)) throw new Error('the other client was refused');
    const reopensAt = mode === 'fixed' ? Math.floor(sentAt / W) * W + W : sentAt + W;
    reopensPerf = performance.now() + (reopensAt - Date.now());
  } else {
    await sandbox.fault({ kind: '429', match: 'any', count: 1 });
    reopensPerf = performance.now();
  }
  const attempts = [];
  const gateway = async () => {
    const startedAt = performance.now();
    const r = await call();
    attempts.push({ startedAt, answeredAt: performance.now(), status: r.status });
    const rateLimit = parseRateLimitHeader(r.headers.get('x-rate-limit'));
    if (r.status === 429) throw new GatewayRateLimitedError('429', { status: 429, errorcode: 155, rateLimit });
    if (r.status !== 200) throw new GatewayServerError(`status ${r.status}`, { status: r.status, rateLimit });
    return { value: undefined, rateLimit, host: 'sandbox', status: 200 };
  };
  const until = Math.max(reopensPerf, performance.now()) + 20_000;
  const pending = [];
  for (let i = 0; performance.now() < until; i++) {
    pending.push(replicas[i % 3].run('sale', gateway).catch((e) => e));
    await sleep(EVERY_MS);
  }
  const outcomes = await Promise.all(pending);
  await Promise.all(replicas.map((r) => r.close()));
  const keys = await connections[0].keys(`{${prefix}:*`);
  if (keys.length) await connections[0].del(...keys);
  await Promise.all(connections.map((c) => c.quit()));
  attempts.sort((a, b) => a.startedAt - b.startedAt);
  const first429 = attempts.find((a) => a.status === 429);
  const next = first429 && attempts.find((a) => a.status === 200 && a.startedAt > first429.startedAt);
  const refused = attempts.filter((a) => a.status === 429).length;
  return {
    mode,
    incident: kind,
    seconds_429_to_next_approved: next ? Math.round((next.answeredAt - first429.answeredAt) / 100) / 10 : null,
    seconds_reopening_to_next_approved: next ? Math.round((next.answeredAt - Math.max(reopensPerf, first429.answeredAt)) / 100) / 10 : null,
    upstream_429: refused,
    extra_429: Math.max(0, refused - 1),
    sales_refused_by_budget: outcomes.filter((e) => e && e.name === 'RateLimitExceededError').length,
    sales_approved: attempts.filter((a) => a.status === 200).length,
  };
}

if (require.main === module) {
  (async () => {
    installCleanup();
    const creds = makeCredentials();
    const redis = await startRedis();
    const sandbox = await startSandboxProcess(creds, { rateMode: 'fixed' });
    const ctx = { redisUrl: redis.url, sandbox, creds };
    const results = [];
    for (const mode of ['fixed', 'sliding']) {
      for (const kind of ['injected', 'full']) {
        const r = await incident(ctx, mode, kind);
        process.stdout.write(`${JSON.stringify(r)}\n`);
        results.push(r);
      }
    }
    const build = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim();
    const file = path.join(ROOT, 'bench', 'results', `probe-recovery-${build}.json`);
    const probe = probeTimes(LIMITS);
    fs.writeFileSync(file, JSON.stringify({ build, measured_at: new Date().toISOString(), limits: LIMITS, probe_ms: probe, sale_every_ms: EVERY_MS, replicas: 3, results }, null, 2) + '\n');
    process.stdout.write(`wrote ${path.relative(ROOT, file)}\n`);
    await redis.client.quit().catch(() => undefined);
    await stopAll();
  })().catch(async (e) => {
    process.stderr.write(`${e.stack}\n`);
    await stopAll();
    process.exit(1);
  });
}
