'use strict';
/**
 * Overhead (issue 6, item 1): the same sale at the same concurrency through tokengate, through a naive
 * Express + http-proxy-middleware passthrough, and straight to the sandbox. autocannon runs in this process;
 * tokengate, the proxy, the sandbox and Redis each run in their own process.
 */
const autocannon = require('autocannon');
const { authorizationHeader } = require('../dist/gateway/signer');
const { cpuSeconds } = require('./lib/procs');
const { startTokengate, startNaiveProxy, startPeer, mintJwt } = require('./lib/services');
const { openLoopInChild } = require('./open-loop');
const { parseCommandStats, diffCommandStats, median, round } = require('./lib/stats');

const OVERHEAD_ENDPOINT_KEY = 'benchoverhead';
const PEER_ENDPOINT_KEY = 'benchpeer';

function runCannon(opts, makeKey) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(
      {
        ...opts,
        requests: [
          {
            setupRequest: (req) => {
              req.headers = { ...req.headers, 'idempotency-key': makeKey() };
              return req;
            },
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    inst.on('error', () => undefined);
  });
}

function summarise(res) {
  const ok = res['2xx'];
  return {
    rps: round(ok / res.duration, 1),
    requests: res.requests.total,
    ok,
    non2xx: res.non2xx,
    errors: res.errors,
    timeouts: res.timeouts,
    p50_ms: res.latency.p50,
    p90_ms: res.latency.p90,
    p99_ms: res.latency.p99,
    max_ms: res.latency.max,
    duration_s: round(res.duration, 2),
  };
}

function cpuSnapshot(pids) {
  const out = { bench_autocannon: process.cpuUsage() };
  for (const [name, pid] of Object.entries(pids)) out[name] = cpuSeconds(pid);
  return out;
}

/** CPU seconds used per process between two snapshots. */
function cpuDelta(a, b) {
  const out = {};
  for (const name of Object.keys(a)) {
    out[name] = name === 'bench_autocannon'
      ? round((b[name].user - a[name].user + b[name].system - a[name].system) / 1e6, 2)
      : round(b[name] - a[name], 2);
  }
  return out;
}

/**
 * jsonwebtoken's HS256 verify alone, µs per call, in this process: with the secret as a string (as tokengate
 * passes it today; jsonwebtoken 9 then tries createPublicKey on it first, which throws) and as a KeyObject.
 */
function jwtVerifyMicros(creds, token) {
  const jwt = require('jsonwebtoken');
  const { createSecretKey } = require('node:crypto');
  const opts = { algorithms: ['HS256'], issuer: creds.issuer, audience: creds.audience };
  const time = (key) => {
    for (let i = 0; i < 1000; i++) jwt.verify(token, key, opts);
    const n = 10000;
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) jwt.verify(token, key, opts);
    return round(Number(process.hrtime.bigint() - t) / 1000 / n, 1);
  };
  return { string_secret: time(creds.jwtSecret), key_object: time(createSecretKey(Buffer.from(creds.jwtSecret, 'utf8'))) };
}

/**
 * Redis commands a sale sends (each a round trip unless pipelined; MULTI/EXEC would show), told apart from the
 * commands its Lua scripts run inside Redis: MONITOR marks those with source "lua". Sequential sales, no load.
 */
async function redisClientCommandsPerSale(redis, url, bearer, body, nextKey, n) {
  const monitor = await redis.client.duplicate().monitor();
  const readsBefore = await readsProcessed(redis.client);
  const client = {};
  let script = 0;
  const scriptBy = {};
  // The reconciler's batched removal of finished writes (src/reconcile/pending-writes.ts, forget): a timer's
  // ZREM every 100 ms for all writes finished meanwhile, on no sale's path. Counted apart.
  let flushes = 0;
  monitor.on('monitor', (_time, args, source) => {
    if (source !== 'lua' && String(args[0]).toLowerCase() === 'zrem' && String(args[1]).endsWith(':reconcile}:due')) flushes++;
    if (source === 'lua') {
      script++;
      const cmd = String(args[0]).toLowerCase();
      scriptBy[cmd] = (scriptBy[cmd] ?? 0) + 1;
    } else {
      const cmd = String(args[0]).toLowerCase();
      client[cmd] = (client[cmd] ?? 0) + 1;
    }
  });
  await new Promise((r) => setTimeout(r, 200));
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const res = await fetch(url + '/v1/sales', { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': nextKey() }, body });
    await res.arrayBuffer();
    if (res.status === 201) ok++;
  }
  await new Promise((r) => setTimeout(r, 300));
  // Read events Redis processed: one per client write, however many commands it carried (minus our own INFO).
  const reads = (await readsProcessed(redis.client)) - readsBefore - 1;
  monitor.disconnect();
  // tokengate's readiness probe and any other client work would show too: none runs during this window.
  const total = Object.values(client).reduce((a, b) => a + b, 0);
  return {
    sales: ok,
    client_commands_per_sale: round(total / n, 2),
    sequential_round_trips_per_sale: round(reads / n, 2),
    batched_flushes_per_sale: round(flushes / n, 2),
    client_by_command: Object.fromEntries(Object.entries(client).map(([k, v]) => [k, round(v / n, 2)])),
    script_commands_per_sale: round(script / n, 2),
    script_by_command: Object.fromEntries(Object.entries(scriptBy).map(([k, v]) => [k, round(v / n, 2)])),
  };
}

/** A fresh tokengate on its own key prefix, for a profiled run (node flags and env added). */
function startProfiled(ctx, name, prefix, { nodeArgs, extraEnv = {} }) {
  return startTokengate(name, ctx.creds, {
    redisUrl: ctx.redis.url,
    keyPrefix: `${prefix}-${name}`,
    gatewayBaseUrl: `${ctx.sandbox.url}/api/${OVERHEAD_ENDPOINT_KEY}/`,
    extraEnv: { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000', ...extraEnv },
    nodeArgs,
  });
}

/** A separate short run of a fresh tokengate under --cpu-prof: where its CPU time goes on the sale path. */
async function profileTokengate(ctx, { bearer, tokengateBody, nextKey, prefix }) {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { summariseProfile } = require('./lib/profile');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokengate-bench-prof-'));
  try {
    const tg = await startProfiled(ctx, 'tokengate-profiled', prefix, { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir] });
    const base = { url: `${tg.url}/v1/sales`, method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: tokengateBody, connections: ctx.opts.connections, timeout: 10 };
    await runCannon({ ...base, duration: 1 }, nextKey);
    await runCannon({ ...base, duration: ctx.opts.profileSec }, nextKey);
    await tg.proc.stop('SIGTERM', 15000);
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) return { error: 'no .cpuprofile written' };
    const summary = summariseProfile(path.join(dir, file));
    ctx.log(`profile: ${summary.by_area.slice(0, 6).map((a) => `${a.area} ${a.pct}%`).join(', ')}`);
    return { note: `a separate ${ctx.opts.profileSec} s run under node --cpu-prof (startup and warm-up included); self time by area, % of non-idle`, ...summary };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Another fresh tokengate with V8's sampling heap profiler (bench/lib/alloc-sampler.js) over a fixed number of
 * sales after a warm-up: bytes allocated per sale, garbage included, and which of our functions caused them.
 * The garbage collector is one of the biggest areas of the CPU profile; this says where its work comes from.
 */
async function allocationProfile(ctx, { bearer, tokengateBody, nextKey, prefix }) {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { summariseAllocations } = require('./lib/profile');
  const { sleep } = require('./lib/procs');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokengate-bench-alloc-'));
  const out = path.join(dir, 'sale.heapprofile');
  try {
    const tg = await startProfiled(ctx, 'tokengate-alloc', prefix, {
      nodeArgs: ['-r', path.join(__dirname, 'lib', 'alloc-sampler.js')],
      extraEnv: { ALLOC_PROFILE_OUT: out },
    });
    const base = { url: `${tg.url}/v1/sales`, method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: tokengateBody, connections: 16, timeout: 10 };
    await runCannon({ ...base, duration: 1 }, nextKey);
    tg.proc.child.kill('SIGUSR2');
    await sleep(200);
    const res = await runCannon({ ...base, amount: ctx.opts.allocSales }, nextKey);
    tg.proc.child.kill('SIGUSR2');
    const deadline = Date.now() + 15_000;
    while (!fs.existsSync(out) && Date.now() < deadline) await sleep(100);
    await tg.proc.stop('SIGTERM', 15000);
    if (!fs.existsSync(out)) return { error: 'no heap profile written' };
    if (res['2xx'] !== ctx.opts.allocSales) return { error: `${ctx.opts.allocSales - res['2xx']} of the profiled sales failed` };
    const summary = summariseAllocations(out, res['2xx']);
    if (!summary.error) ctx.log(`allocations: ${summary.bytes_per_sale} bytes per sale; ${summary.by_area.slice(0, 4).map((a) => `${a.area} ${a.bytes_per_sale}`).join(', ')}`);
    return { note: `a separate run, ${res['2xx']} sales after a 1 s warm-up, V8's sampling heap profiler every 8 KiB, collected objects included`, ...summary };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Redis's count of read events (client writes it processed): pipelined commands share one. */
async function readsProcessed(client) {
  const m = /total_reads_processed:(\d+)/.exec(await client.info('stats'));
  return m ? Number(m[1]) : NaN;
}

async function commandStats(redis) {
  return parseCommandStats(await redis.info('commandstats'));
}

/**
 * @param ctx {creds, redis, sandbox, log, opts: {connections, warmupSec, durationSec, rounds}}
 */
/**
 * Open-loop latency (issue 15, item 2): sales arrive at a fixed rate whatever the answers do
 * (bench/open-loop.js: latency from each request's due time), the gateway answering in `gatewayLatencyMs`. Per
 * rate, tokengate and the passthrough alternate twice; each keeps its better run (a shared box only adds
 * latency). The figure is what tokengate adds at p50, p99 and p99.9.
 */
async function runOpenLoop(targets, nextKey, ctx, pids) {
  const { rates, openLoopSec } = ctx.opts;
  const out = [];
  for (const rate of rates) {
    const got = { tokengate: [], naive: [] };
    for (let rep = 0; rep < 2; rep++) {
      for (const name of rep === 0 ? ['tokengate', 'naive'] : ['naive', 'tokengate']) {
        const t = targets[name];
        // From a fresh generator process, which warms up for a second first and reports how long each process
        // sat runnable without a core during the measured run (bench/open-loop.js).
        const watch = { service: pids[name], redis: pids.redis, sandbox: pids.sandbox };
        got[name].push(await openLoopInChild({ url: t.url, headers: t.headers, body: t.body, rate, durationSec: openLoopSec, keyPrefix: nextKey(), watch }));
      }
    }
    const better = (runs) => runs.reduce((a, b) => (b.p99_ms < a.p99_ms ? b : a));
    const tg = better(got.tokengate);
    const nv = better(got.naive);
    // CPU per sale at the same arrival rate, both runs of each: at saturation the faster service also serves
    // more requests per event-loop wake-up, which lowers its CPU per request whatever its code does.
    const cpuPerSale = (runs) => round(runs.reduce((sum, r) => sum + r.cpu_ms_per_request.service, 0) / runs.length, 4);
    const cpu = { tokengate: cpuPerSale(got.tokengate), naive: cpuPerSale(got.naive) };
    const row = {
      rate,
      duration_s: openLoopSec,
      added_p50_ms: round(tg.p50_ms - nv.p50_ms, 2),
      added_p99_ms: round(tg.p99_ms - nv.p99_ms, 2),
      added_p99_9_ms: round(tg.p99_9_ms - nv.p99_9_ms, 2),
      cpu_ms_per_sale: cpu,
      cpu_tokengate_over_naive: round(cpu.tokengate / cpu.naive, 3),
      tokengate: tg,
      naive: nv,
      runs: got,
    };
    const w = tg.waiting_for_cpu_ms_per_s;
    ctx.log(`open loop ${rate}/s: tokengate adds ${row.added_p50_ms} ms p50, ${row.added_p99_ms} ms p99, ${row.added_p99_9_ms} ms p99.9 (tokengate p99 ${tg.p99_ms}, naive ${nv.p99_ms}; CPU ms per sale ${cpu.tokengate} vs ${cpu.naive}, ${row.cpu_tokengate_over_naive}x; generator lag p99 ${tg.generator_send_lag_p99_ms} ms; waiting for a core, ms/s: tokengate ${w.service}, redis ${w.redis}, sandbox ${w.sandbox}, generator ${w.generator})`);
    out.push(row);
  }
  return out;
}

async function runOverhead(ctx) {
  const { creds, redis, sandbox, log } = ctx;
  const { connections, warmupSec, durationSec, rounds } = ctx.opts;
  const fixtures = require('../config/sandbox-fixtures.json').customers;
  const customer = fixtures[0].key;
  const pm = fixtures[0].payment_methods[0].key; // 4000100011112224: approved

  // A valid signed header, made once: the static header the naive proxy adds and the direct caller sends.
  const staticAuth = authorizationHeader(creds.apiKey, 'bench-static-seed-0001', creds.apiPin);
  const tokenRes = await fetch(`${sandbox.baseUrl}customers/${customer}/payment_methods/${pm}/cardref`, { headers: { authorization: staticAuth } });
  if (!tokenRes.ok) throw new Error(`cardref for the direct/naive body: ${tokenRes.status} ${await tokenRes.text()}`);
  const { cardref } = await tokenRes.json();
  const gatewayBody = JSON.stringify({ command: 'cc:sale', amount: '10.00', UMCardRef: cardref });
  const tokengateBody = JSON.stringify({ customer, payment_method: pm, amount: '10.00' });

  const prefix = `bench-oh-${Date.now().toString(36)}`;
  // tokengate gets its own endpoint key at the sandbox: the gateway counts per (endpoint key, client IP), and
  // naive and direct calls on v2 from the same 127.0.0.1 would show in tokengate's X-Rate-Limit answers, which
  // it rightly reads as another client sharing the key (phantom reservations: hundreds of Redis writes a sale).
  await sandbox.update({ endpointKeys: [{ key: OVERHEAD_ENDPOINT_KEY, ratePerMinute: 1_000_000, ratePerDay: 100_000_000 }] });
  const tgBaseUrl = `${sandbox.url}/api/${OVERHEAD_ENDPOINT_KEY}/`;
  const tg = await startTokengate('tokengate', creds, {
    redisUrl: redis.url,
    keyPrefix: prefix,
    gatewayBaseUrl: tgBaseUrl,
    // A budget that never binds (the schema's maxima); the scheduler still reserves every call in Redis.
    extraEnv: { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000' },
  });
  const naive = await startNaiveProxy(sandbox.url, staticAuth);
  // The fair peer (issue 15) on its own endpoint key, for the same reason as tokengate's.
  await sandbox.update({ endpointKeys: [{ key: OVERHEAD_ENDPOINT_KEY, ratePerMinute: 1_000_000, ratePerDay: 100_000_000 }, { key: PEER_ENDPOINT_KEY, ratePerMinute: 1_000_000, ratePerDay: 100_000_000 }] });
  const peer = await startPeer(creds, { redisUrl: redis.url, keyPrefix: `${prefix}-peer`, baseUrl: `${sandbox.url}/api/${PEER_ENDPOINT_KEY}/` });
  const bearer = mintJwt(creds, { sub: 'bench', scope: 'sales:create', custkey: customer });

  // Warm the token cache (one sale) and check each path answers a sale.
  let seq = 0;
  const runId = Math.random().toString(36).slice(2, 8);
  const nextKey = () => `bench-${runId}-k${(seq++).toString(36)}`;
  const warm = await fetch(`${tg.url}/v1/sales`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': nextKey() },
    body: tokengateBody,
  });
  if (warm.status !== 201) throw new Error(`tokengate warm-up sale: ${warm.status} ${await warm.text()}`);
  const warmPeer = await fetch(`${peer.url}/v1/sales`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': nextKey() },
    body: tokengateBody,
  });
  if (warmPeer.status !== 201) throw new Error(`peer warm-up sale: ${warmPeer.status} ${await warmPeer.text()}`);
  for (const [what, url, headers] of [
    ['naive', `${naive.url}/v1/sales`, { 'content-type': 'application/json' }],
    ['direct', `${sandbox.baseUrl}transactions`, { 'content-type': 'application/json', authorization: staticAuth }],
  ]) {
    const r = await fetch(url, { method: 'POST', headers, body: gatewayBody });
    const body = await r.json().catch(() => ({}));
    if (r.status !== 200 || body.result_code !== 'A') throw new Error(`${what} check sale: ${r.status} ${JSON.stringify(body)}`);
  }

  const targets = {
    tokengate: { url: `${tg.url}/v1/sales`, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: tokengateBody },
    peer: { url: `${peer.url}/v1/sales`, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: tokengateBody },
    naive: { url: `${naive.url}/v1/sales`, headers: { 'content-type': 'application/json' }, body: gatewayBody },
    direct: { url: `${sandbox.baseUrl}transactions`, headers: { 'content-type': 'application/json', authorization: staticAuth }, body: gatewayBody },
  };
  const runs = { tokengate: [], peer: [], naive: [], direct: [] };
  let redisCommands = { total: 0, byCommand: {} };
  let tokengateSales = 0;
  // Rounds interleave the three targets, so drift on a shared box (thermal, other tenants) hits all alike.
  for (let round_ = 0; round_ < rounds; round_++) {
    for (const [name, t] of Object.entries(targets)) {
      const base = { url: t.url, method: 'POST', headers: t.headers, body: t.body, connections, timeout: 10 };
      await runCannon({ ...base, duration: warmupSec }, nextKey);
      const before = name === 'tokengate' ? await commandStats(redis.client) : undefined;
      const readsBefore = name === 'tokengate' ? await readsProcessed(redis.client) : undefined;
      const pids = { sandbox: sandbox.proc.child.pid, redis: redis.proc.child.pid };
      if (name === 'tokengate') pids.service = tg.proc.child.pid;
      if (name === 'naive') pids.service = naive.proc.child.pid;
      if (name === 'peer') pids.service = peer.proc.child.pid;
      const cpuBefore = cpuSnapshot(pids);
      const res = await runCannon({ ...base, duration: durationSec }, nextKey);
      const s = summarise(res);
      s.cpu_s = cpuDelta(cpuBefore, cpuSnapshot(pids));
      if (s.cpu_s.service !== undefined) {
        s.service_cpu_ms_per_request = round((s.cpu_s.service * 1000) / Math.max(1, s.requests), 3);
        // The sandbox does the same work per request for every target: its CPU per request is this round's
        // measure of how fast the machine is right now, so service / sandbox is steady when the box is not.
        s.service_cpu_per_sandbox_cpu = round(s.cpu_s.service / s.cpu_s.sandbox, 3);
      }
      if (readsBefore !== undefined) s.redis_reads_per_request = round(((await readsProcessed(redis.client)) - readsBefore - 1) / Math.max(1, s.requests), 2);
      if (before) {
        const d = diffCommandStats(before, await commandStats(redis.client));
        redisCommands = { total: redisCommands.total + d.total, byCommand: Object.fromEntries(Object.keys({ ...redisCommands.byCommand, ...d.byCommand }).map((k) => [k, (redisCommands.byCommand[k] ?? 0) + (d.byCommand[k] ?? 0)])) };
        // Every request counts: a non-2xx one may have used Redis too (there should be none).
        tokengateSales += s.requests;
      }
      s.load_average_1m = round(require('node:os').loadavg()[0], 2);
      runs[name].push(s);
      log(`overhead round ${round_ + 1}/${rounds} ${name}: ${s.rps} req/s, p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms, non-2xx ${s.non2xx}, errors ${s.errors}`);
    }
  }
  // The same sale at a gateway that takes a while to answer, as real ones do: how much latency tokengate adds
  // when the gateway, not the CPU, is what a caller waits for. Same 32 connections, one round each.
  await sandbox.update({ latencyMs: ctx.opts.gatewayLatencyMs });
  const atLatency = {};
  for (const name of ['tokengate', 'naive']) {
    const t = targets[name];
    const base = { url: t.url, method: 'POST', headers: t.headers, body: t.body, connections, timeout: 10 };
    await runCannon({ ...base, duration: Math.min(warmupSec, 2) }, nextKey);
    atLatency[name] = summarise(await runCannon({ ...base, duration: durationSec }, nextKey));
    log(`overhead at ${ctx.opts.gatewayLatencyMs} ms gateway latency, ${name}: ${atLatency[name].rps} req/s, p50 ${atLatency[name].p50_ms} ms, p99 ${atLatency[name].p99_ms} ms`);
  }
  const openLoop = await runOpenLoop(targets, nextKey, ctx, { tokengate: tg.proc.child.pid, naive: naive.proc.child.pid, redis: redis.proc.child.pid, sandbox: sandbox.proc.child.pid });
  await sandbox.update({ latencyMs: 0 });
  const roundTrips = await redisClientCommandsPerSale(redis, tg.url, bearer, tokengateBody, nextKey, 50);
  log(`overhead: ${roundTrips.sequential_round_trips_per_sale} Redis round trips, ${roundTrips.client_commands_per_sale} client commands and ${roundTrips.script_commands_per_sale} script-internal commands per sale, over 50 sequential sales`);
  await tg.proc.stop();
  await naive.proc.stop();
  await peer.proc.stop();
  const profile = ctx.opts.profileSec > 0 ? await profileTokengate(ctx, { bearer, tokengateBody, nextKey, prefix }) : undefined;
  const allocation = ctx.opts.allocSales > 0 ? await allocationProfile(ctx, { bearer, tokengateBody, nextKey, prefix }) : undefined;

  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  // Best round per target (highest req/s, its latencies with it): other tenants of a shared 2-core box only
  // ever slow a round down, so the least disturbed round is the closest to what the code can do.
  const best = (name) => runs[name].reduce((a, b) => (b.rps > a.rps ? b : a));
  const agg = (name) => ({
    rps: best(name).rps,
    p50_ms: best(name).p50_ms,
    p99_ms: best(name).p99_ms,
    mean_rps: round(mean(runs[name].map((r) => r.rps)), 1),
    non2xx: runs[name].reduce((a, r) => a + r.non2xx, 0),
    errors: runs[name].reduce((a, r) => a + r.errors + r.timeouts, 0),
    // The median of rounds, like the normalised figure: one round slowed by another tenant (seen: a round at
    // 0.38x its neighbours' req/s and 2.8x their CPU per request) would move a mean by a third.
    service_cpu_ms_per_request: round(median(runs[name].map((r) => r.service_cpu_ms_per_request ?? NaN)), 3),
    cpu_s_per_run: Object.fromEntries(Object.keys(runs[name][0].cpu_s).map((k) => [k, round(mean(runs[name].map((r) => r.cpu_s[k])), 2)])),
    runs: runs[name],
  });
  const tgA = agg('tokengate');
  const peerA = agg('peer');
  const naiveA = agg('naive');
  const directA = agg('direct');
  const perRound = runs.tokengate.map((r, i) => round(r.rps / runs.naive[i].rps, 3));
  // Medians of an even count average two values: rounded like every other figure of the report.
  const normTg = round(median(runs.tokengate.map((r) => r.service_cpu_per_sandbox_cpu)), 3);
  const normNaive = round(median(runs.naive.map((r) => r.service_cpu_per_sandbox_cpu)), 3);
  const normPeer = round(median(runs.peer.map((r) => r.service_cpu_per_sandbox_cpu)), 3);
  const perSale = Object.fromEntries(Object.entries(redisCommands.byCommand).map(([k, v]) => [k, round(v / tokengateSales, 2)]));
  return {
    tokengate_rps: tgA.rps,
    naive_rps: naiveA.rps,
    direct_rps: directA.rps,
    ratio: round(tgA.rps / naiveA.rps, 3),
    ratio_per_round: perRound,
    ratio_median_of_rounds: round(median(perRound), 3),
    cpu_per_sandbox_cpu: { tokengate: normTg, naive: normNaive, peer: normPeer, naive_over_tokengate: round(normNaive / normTg, 3), tokengate_over_naive: round(normTg / normNaive, 3), tokengate_over_peer: round(normTg / normPeer, 3) },
    peer: { rps: peerA.rps, cpu_ms_per_sale: peerA.service_cpu_ms_per_request, p50_ms: peerA.p50_ms, p99_ms: peerA.p99_ms, cpu_per_sandbox_cpu: normPeer, non2xx: peerA.non2xx, errors: peerA.errors },
    open_loop: openLoop,
    redis_reads_per_sale_under_load: round(median(runs.tokengate.map((r) => r.redis_reads_per_request)), 2),
    at_gateway_latency: {
      latency_ms: ctx.opts.gatewayLatencyMs,
      tokengate: atLatency.tokengate,
      naive: atLatency.naive,
      ratio: round(atLatency.tokengate.rps / atLatency.naive.rps, 3),
      added_p50_ms: atLatency.tokengate.p50_ms - atLatency.naive.p50_ms,
      added_p99_ms: atLatency.tokengate.p99_ms - atLatency.naive.p99_ms,
    },
    aggregation: 'best round per target (highest req/s) of the interleaved rounds; per-round figures in detail',
    p99_ms: tgA.p99_ms,
    p50_ms: tgA.p50_ms,
    naive_p50_ms: naiveA.p50_ms,
    naive_p99_ms: naiveA.p99_ms,
    direct_p50_ms: directA.p50_ms,
    direct_p99_ms: directA.p99_ms,
    tokengate_cpu_ms_per_sale: tgA.service_cpu_ms_per_request,
    naive_cpu_ms_per_request: naiveA.service_cpu_ms_per_request,
    cpu_s_per_run: { tokengate: tgA.cpu_s_per_run, peer: peerA.cpu_s_per_run, naive: naiveA.cpu_s_per_run, direct: directA.cpu_s_per_run },
    jwt_verify_us: jwtVerifyMicros(creds, bearer),
    redis_round_trips_per_sale: roundTrips.sequential_round_trips_per_sale,
    redis_batched_flushes_per_sale: roundTrips.batched_flushes_per_sale,
    redis_client_commands_per_sale: roundTrips.client_commands_per_sale,
    redis_round_trips_by_command: roundTrips.client_by_command,
    redis_script_commands_per_sale: roundTrips.script_commands_per_sale,
    redis_script_commands_by_command: roundTrips.script_by_command,
    profile,
    allocation,
    redis_commands_per_sale: round(redisCommands.total / tokengateSales, 2),
    redis_commands_per_sale_by_command: perSale,
    connections,
    warmup_s: warmupSec,
    duration_s: durationSec,
    rounds,
    tokengate_mode: 'separate process: node dist/main.js, NODE_ENV=production, LOG_LEVEL=warn',
    detail: { tokengate: tgA, peer: peerA, naive: naiveA, direct: directA },
  };
}

module.exports = { runOverhead, runCannon, summarise, cpuSnapshot, cpuDelta, OVERHEAD_ENDPOINT_KEY };
