'use strict';
/**
 * The budget as the endpoint key grows (issue 40, item 3): at 45/5,000, 600/200,000 and 6,000/2,000,000 per
 * minute/day, 8 replicas (8 schedulers, each on its own Redis connection, one process) share one key against
 * the sandbox in sliding mode with PRODUCTION windows (60 s + 1 s margin, a day). Demand 1.1x the minute's
 * limit for 65 s. Before the run the day log is seeded with 90 % of the day spread over the last day (its
 * full-day shape: a bucket per minute), so both the memory and the Redis time are those of a busy day's end.
 * Reported per point: the sandbox's 429s and its largest count in any 60 s, Redis time per script call and per
 * reservation (the bench's own redis-server: INFO commandstats is ours alone), the day log's memory (MEMORY
 * USAGE), and what the old log (a sorted-set entry per call) took for the same day (measured up to 200,000
 * entries, scaled linearly beyond). `node bench/budget-scale.js [points]` alone, or a phase of `npm run bench`.
 */
const { performance } = require('node:perf_hooks');
const Redis = require('ioredis');
const { Registry } = require('prom-client');
const { createRedisScheduler, limiterKeys, maxInAnyWindow } = require('../dist/limiter');
const { silentLogger } = require('../dist/observability/logger');
const { callSandbox } = require('../dist/sandbox/client');

const POINTS = [
  { perMinute: 45, perDay: 5_000 },
  { perMinute: 600, perDay: 200_000 },
  { perMinute: 6_000, perDay: 2_000_000 },
];
const REPLICAS = 8;
const MINUTE = 60_000;
const DAY = 86_400_000;
const MARGIN = 1_000;
const BUCKETS = 1440;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function commandStats(client) {
  const info = await client.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const m of info.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+),usec=(\d+)/g)) {
    calls += Number(m[1]);
    usec += Number(m[2]);
  }
  return { calls, usec };
}

/** The day log as the scheduler keeps it (scheduler.lua, "The day log"), `used` spread evenly over the last day. */
async function seedDay(client, dayKey, used) {
  const [sec, usec] = await client.time();
  const nowUs = Number(sec) * 1e6 + Number(usec);
  const daySpanUs = (DAY + MARGIN) * 1000;
  const w = Math.ceil(daySpanUs / BUCKETS);
  const last = Math.floor(nowUs / w);
  const first = last - BUCKETS + 2;
  const per = Math.floor(used / (BUCKETS - 1));
  const fields = [];
  for (let b = first; b <= last; b++) fields.push(String(b), String(per));
  const n = per * (BUCKETS - 1);
  await client.hset(dayKey, ...fields, 'n', String(n), 'lo', String(first), 'hi', String(last));
  await client.pexpire(dayKey, DAY + MARGIN + 60_000);
  return n;
}

/** What the old day log (one sorted-set entry per call) took for `entries`: measured, scaled beyond 200,000. */
async function oldLogBytes(client, key, entries) {
  const measured = Math.min(entries, 200_000);
  const [sec] = await client.time();
  const base = Number(sec) * 1e6;
  for (let i = 0; i < measured; i += 10_000) {
    const args = [];
    for (let j = i; j < Math.min(measured, i + 10_000); j++) args.push(String(base + j * 17_280), `r${1_000_000 + j}`);
    await client.zadd(key, ...args);
  }
  const bytes = Number(await client.memory('USAGE', key, 'SAMPLES', '0'));
  await client.del(key);
  return { bytes: Math.round((bytes * entries) / measured), measured_entries: measured };
}

/**
 * Redis time per reservation, A/B in one run: this build's script against main's (a sorted-set entry per call,
 * `git show main:src/limiter/scheduler.lua`), each on a day log seeded with the same calls in its own format
 * (main's: at most 200,000 entries, the most this bench writes into a sorted set), up to 2,000 sequential sale
 * reservations (at most 5 % of the day) with the minute's window wide open, timed by INFO commandstats on the
 * bench's own Redis.
 */
/** The build before issue 40's day buckets (stop 34's main): the A/B's `main` side, named so it stays that build. */
const AB_BASELINE = process.env.BENCH_SCALE_BASELINE ?? '973bf51';

async function scriptAB(client, point) {
  const fs = require('node:fs');
  const path = require('node:path');
  const { execFileSync } = require('node:child_process');
  const ROOT = path.join(__dirname, '..');
  const scripts = {
    this: fs.readFileSync(path.join(ROOT, 'dist', 'limiter', 'scheduler.lua'), 'utf8'),
  };
  // The baseline is the script before issue 40 bucketed the day log (a fixed build: `main` has the buckets now, so
  // its script would meet a day log of the old shape). A clone without that commit reports this build alone.
  try {
    scripts.main = execFileSync('git', ['show', `${AB_BASELINE}:src/limiter/scheduler.lua`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  } catch {
    // no baseline in this clone
  }
  const out = {};
  for (const [name, lua] of Object.entries(scripts)) {
    const sha = await client.script('LOAD', lua);
    const tag = `{ab-${name}-${Date.now().toString(36)}}:limiter`;
    // This build's script takes seven keys (the paced and the callers' day logs as counts too, issue 40); the
    // baseline's six.
    const keys = name === 'this'
      ? [`${tag}:meta`, `${tag}:minute`, `${tag}:day:counts`, `${tag}:day:read:counts`, `${tag}:day:background:counts`, `${tag}:caller:`, `${tag}:caller::day`]
      : [`${tag}:meta`, `${tag}:minute`, `${tag}:day`, `${tag}:day:read`, `${tag}:day:background`, `${tag}:caller:`];
    const used = Math.round(point.perDay * 0.9);
    if (name === 'this') await seedDay(client, keys[2], used);
    else await oldLogSeed(client, keys[2], Math.min(used, 200_000));
    const args = (i) => ['reserve', 'sale', 1_000_000, point.perDay, 0, MINUTE + MARGIN, DAY + MARGIN, 30_000, '', `e${i}`, 1, 0, '', 1, 1, 20];
    const before = await commandStats(client);
    // Below the day's cap throughout (seeded 90 %, then at most 5 % more): the path every reservation takes
    // but on the day's last minutes (measured apart: redis_us_per_reservation_at_day_cap).
    const count = Math.min(2000, Math.floor(point.perDay * 0.05));
    for (let i = 0; i < count; i++) await client.evalsha(sha, keys.length, ...keys, ...args(i).map(String));
    const after = await commandStats(client);
    out[`redis_us_per_reservation_${name}`] = Math.round(((after.usec - before.usec) / (after.calls - before.calls)) * 10) / 10;
    await client.del(...keys);
  }
  return out;
}

async function oldLogSeed(client, key, entries) {
  const [sec] = await client.time();
  const base = Number(sec) * 1e6 - DAY * 1000 + 60e6;
  const step = Math.floor((DAY * 1000 - 120e6) / entries);
  for (let i = 0; i < entries; i += 10_000) {
    const args = [];
    for (let j = i; j < Math.min(entries, i + 10_000); j++) args.push(String(base + j * step), `r${j}`);
    await client.zadd(key, ...args);
  }
}

async function runPoint(ctx, point) {
  const { redisUrl, sandbox, log } = ctx;
  const endpointKey = `scale${point.perMinute}`;
  const prefix = `bench-scale-${Date.now().toString(36)}`;
  const admin = new Redis(redisUrl);
  const connections = Array.from({ length: REPLICAS }, () => new Redis(redisUrl, { maxRetriesPerRequest: 1 }));
  await Promise.all(connections.map((c) => c.ping()));
  const limits = { perWindow: point.perMinute, windowMs: MINUTE, perDay: point.perDay, dayWindowMs: DAY, marginMs: MARGIN };
  const registry = new Registry();
  const replicas = connections.map((redis) => createRedisScheduler({
    redis, keyPrefix: prefix, endpointKey, limits, registry, logger: silentLogger(), expectedReplicas: REPLICAS,
    classes: { saleMaxWaitMs: 30_000, readMaxWaitMs: 10_000, saleReservedSlots: 5 },
  }));
  const dayKey = limiterKeys(prefix, endpointKey)[2];
  const seeded = await seedDay(admin, dayKey, Math.round(point.perDay * 0.9));
  // The sandbox's day counts what it has seen: the seeded 90 % are tokengate's own history, not its.
  await sandbox.update({ rateMode: 'sliding', rateWindowMs: MINUTE, endpointKeys: [{ key: endpointKey, ratePerMinute: point.perMinute, ratePerDay: point.perDay }] });
  const baseUrl = `${sandbox.url}/api/${endpointKey}/`;
  const starts = [];
  let refused = 0;
  let failed = 0;
  const before = await commandStats(admin);
  const durationMs = ctx.durationMs ?? 65_000;
  const everyMs = MINUTE / (point.perMinute * 1.1);
  const t0 = performance.now();
  const pending = [];
  for (let i = 0; ; i++) {
    const due = t0 + i * everyMs;
    if (due - t0 > durationMs) break;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const s = replicas[i % REPLICAS];
    pending.push(s.run('sale', async () => {
      starts.push(performance.now());
      const r = await callSandbox(baseUrl, 'GET', 'customers', { apiKey: ctx.creds.apiKey, apiPin: ctx.creds.apiPin });
      if (r.status !== 200) throw Object.assign(new Error(`status ${r.status}`), { status: r.status });
      return { value: undefined, rateLimit: undefined, host: 'sandbox', status: 200 };
    }).catch((e) => (e.name === 'RateLimitExceededError' ? refused++ : failed++)));
  }
  await Promise.all(pending);
  const after = await commandStats(admin);
  const stats = (await sandbox.stats()).endpoints[endpointKey] ?? {};
  const dayBytes = Number(await admin.memory('USAGE', dayKey, 'SAMPLES', '0'));
  const fields = await admin.hlen(dayKey);
  const reservations = starts.length + refused;
  // The day at its cap: the walk over the buckets (dayTail) is paid only there. Refused at once (no wait).
  await admin.hset(dayKey, 'n', String(point.perDay));
  const capBefore = await commandStats(admin);
  const s0 = replicas[0];
  let capRefused = 0;
  for (let i = 0; i < 200; i++) await s0.run('sale', async () => ({ value: undefined, host: 'x', status: 200 }), { maxWaitMs: 0 }).catch(() => capRefused++);
  const capAfter = await commandStats(admin);
  const old = await oldLogBytes(admin, `${prefix}:old-day-log`, seeded + starts.length);
  // The reads' day log (issue 40, item 3: counts per bucket too) at the most its share lets it hold, half the day,
  // seeded with the day log's spread; beside it, what the sorted set it replaced took for as many reads.
  const readKey = limiterKeys(prefix, endpointKey)[3];
  const readSeeded = await seedDay(admin, readKey, Math.round(point.perDay / 2));
  const readBytes = Number(await admin.memory('USAGE', readKey, 'SAMPLES', '0'));
  const oldRead = await oldLogBytes(admin, `${prefix}:old-read-log`, readSeeded);
  const ab = await scriptAB(admin, point);
  await Promise.all(replicas.map((r) => r.close()));
  const keys = await admin.keys(`{${prefix}:*`);
  if (keys.length) await admin.del(...keys);
  await Promise.all([...connections, admin].map((c) => c.quit()));
  const result = {
    per_minute: point.perMinute,
    per_day: point.perDay,
    replicas: REPLICAS,
    demand_per_minute: Math.round(point.perMinute * 1.1),
    duration_s: durationMs / 1000,
    calls_started: starts.length,
    refused_max_wait: refused,
    failed,
    upstream_429: stats.rateLimited ?? null,
    sandbox_max_in_60s: stats.maxInWindow ?? null,
    client_max_in_60s: maxInAnyWindow(starts, MINUTE),
    redis_us_per_script_call: Math.round(((after.usec - before.usec) / Math.max(1, after.calls - before.calls)) * 10) / 10,
    redis_us_per_reservation: Math.round(((after.usec - before.usec) / Math.max(1, reservations)) * 10) / 10,
    script_calls_per_reservation: Math.round(((after.calls - before.calls) / Math.max(1, reservations)) * 100) / 100,
    redis_us_per_reservation_at_day_cap: Math.round(((capAfter.usec - capBefore.usec) / Math.max(1, capAfter.calls - capBefore.calls)) * 10) / 10,
    at_cap_refused: capRefused,
    day_log_entries: seeded + starts.length,
    day_log_fields: fields,
    day_log_bytes: dayBytes,
    old_day_log_bytes: old.bytes,
    old_day_log_measured_entries: old.measured_entries,
    read_day_log_entries: readSeeded,
    read_day_log_bytes: readBytes,
    old_read_day_log_bytes: oldRead.bytes,
    ...ab,
  };
  log(`budget scale ${point.perMinute}/${point.perDay}: 429s ${result.upstream_429}, peak ${result.sandbox_max_in_60s}/${point.perMinute}, ${result.redis_us_per_reservation} us Redis per reservation (${result.redis_us_per_reservation_at_day_cap} at the day's cap; A/B sequential ${result.redis_us_per_reservation_this} vs ${AB_BASELINE} ${result.redis_us_per_reservation_main}), day log ${result.day_log_bytes} B (old ${result.old_day_log_bytes} B), reads' day log ${result.read_day_log_bytes} B (old ${result.old_read_day_log_bytes} B)`);
  return result;
}

async function runBudgetScale(ctx, points = POINTS) {
  const out = [];
  for (const p of points) out.push(await runPoint(ctx, p));
  return out;
}

module.exports = { runBudgetScale, POINTS };

if (require.main === module) {
  const fs = require('node:fs');
  const path = require('node:path');
  const { execFileSync } = require('node:child_process');
  const { installCleanup, stopAll, ROOT } = require('./lib/procs');
  const { makeCredentials, startRedis, startSandboxProcess } = require('./lib/services');
  (async () => {
    installCleanup();
    const creds = makeCredentials();
    const redis = await startRedis();
    const sandbox = await startSandboxProcess(creds, { rateMode: 'sliding' });
    const only = process.argv[2] ? process.argv[2].split(',').map(Number) : undefined;
    const points = only ? POINTS.filter((p) => only.includes(p.perMinute)) : POINTS;
    const log = (m) => process.stdout.write(`${m}\n`);
    const results = await runBudgetScale({ redisUrl: redis.url, sandbox, creds, log, durationMs: Number(process.env.SCALE_DURATION_MS) || undefined }, points);
    const build = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim();
    const file = path.join(ROOT, 'bench', 'results', `budget-scale-${build}.json`);
    fs.writeFileSync(file, JSON.stringify({ build, measured_at: new Date().toISOString(), points: results }, null, 2) + '\n');
    log(`wrote ${path.relative(ROOT, file)}`);
    await redis.client.quit().catch(() => undefined);
    await stopAll();
  })().catch(async (e) => {
    process.stderr.write(`${e.stack}\n`);
    await stopAll();
    process.exit(1);
  });
}
