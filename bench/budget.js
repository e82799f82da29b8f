'use strict';
/**
 * Budget (issue 4, item 7): the same burst from 3 processes sharing one Redis, through tokengate's scheduler,
 * rate-limiter-flexible (RateLimiterRedis + RateLimiterQueue) and a plain Redis token bucket, against the
 * sandbox in sliding mode with latency jitter, at a scaled window (N per W, tokengate's margin M).
 */
const path = require('node:path');
const { authorizationHeader } = require('../dist/gateway/signer');
const { maxInAnyWindow, utilisation, orderViolations } = require('../dist/limiter/measure');
const { ROOT, forkChild } = require('./lib/procs');
const { percentile, round } = require('./lib/stats');

const KINDS = [
  { kind: 'tokengate', endpointKey: 'benchtg' },
  { kind: 'ratelimiter_flexible', endpointKey: 'benchrlf' },
  { kind: 'token_bucket', endpointKey: 'benchtb' },
];

/** Per worker: a burst at 0, then a steady flood (one call every floodEveryMs). */
function arrivalOffsets({ burstPerWorker, floodPerWorker, floodEveryMs }, worker) {
  const offsets = Array.from({ length: burstPerWorker }, () => 0);
  // Workers' flood calls are staggered by a third of the period, so the three together arrive evenly.
  for (let i = 1; i <= floodPerWorker; i++) offsets.push(i * floodEveryMs + Math.round((worker * floodEveryMs) / 3));
  return offsets;
}

function runWorkers(ctx, kind, endpointKey, cardref) {
  const { creds, redis, sandbox, opts } = ctx;
  const env = {
    PATH: process.env.PATH ?? '',
    KIND: kind,
    REDIS_URL: redis.url,
    KEY_PREFIX: `bench-budget-${kind}-${Date.now().toString(36)}`,
    BASE_URL: `${sandbox.url}/api/${endpointKey}/`,
    LIMIT_N: String(opts.limitN),
    WINDOW_MS: String(opts.windowMs),
    MARGIN_MS: String(opts.marginMs),
    GATEWAY_API_KEY: creds.apiKey,
    GATEWAY_API_PIN: creds.apiPin,
    CARDREF: cardref,
  };
  const workers = [0, 1, 2].map((w) => forkChild(`budget-${kind}-${w}`, path.join(ROOT, 'bench', 'budget-worker.js'), [], { ...env, WORKER: String(w) }));
  const ready = workers.map((w) => new Promise((resolve, reject) => {
    w.child.on('message', (m) => m?.ready && resolve());
    w.exited.then(() => reject(new Error(`${w.name} exited before ready:\n${w.output().slice(-2000)}`)));
  }));
  const done = workers.map((w) => new Promise((resolve, reject) => {
    w.child.on('message', (m) => m?.done && resolve(m.done));
    w.exited.then(() => setTimeout(() => reject(new Error(`${w.name} exited without results:\n${w.output().slice(-2000)}`)), 200));
  }));
  return { workers, ready: Promise.all(ready), done: Promise.all(done) };
}

async function runOne(ctx, kind, endpointKey, cardref) {
  const { opts, log, sandbox } = ctx;
  const { workers, ready, done } = runWorkers(ctx, kind, endpointKey, cardref);
  try {
    await ready;
    const go = Date.now() + 500;
    workers.forEach((w, i) => w.child.send({ go, offsets: arrivalOffsets(opts, i) }));
    let timer;
    const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${kind}: burst did not finish in ${opts.budgetTimeoutMs} ms`)), opts.budgetTimeoutMs)));
    const perWorker = await Promise.race([done, timeout]).finally(() => clearTimeout(timer));
    const calls = perWorker.flat();
    const stats = (await sandbox.stats()).endpoints[endpointKey] ?? { calls: 0, accepted: 0, rateLimited: 0, maxInWindow: 0 };
    const started = calls.filter((c) => Number.isFinite(c.startedAt));
    const accepted = calls.filter((c) => c.status === 200);
    const waits = started.map((c) => c.startedAt - c.arrivedAt);
    const firstArrival = Math.min(...calls.map((c) => c.arrivedAt));
    const lastStart = Math.max(...started.map((c) => c.startedAt));
    const outcomes = {};
    for (const c of calls) outcomes[c.outcome] = (outcomes[c.outcome] ?? 0) + 1;
    const result = {
      upstream_429: stats.rateLimited,
      peak_in_window: stats.maxInWindow,
      limit: opts.limitN,
      utilisation: round(utilisation(accepted.map((c) => c.startedAt), opts.limitN, opts.windowMs), 3),
      calls: calls.length,
      sandbox_calls: stats.calls,
      sandbox_accepted: stats.accepted,
      calls_answered_ok: accepted.length,
      outcomes,
      peak_in_window_client_starts: maxInAnyWindow(started.map((c) => c.startedAt), opts.windowMs),
      queue_wait_p50_ms: round(percentile(waits, 50), 1),
      queue_wait_p99_ms: round(percentile(waits, 99), 1),
      queue_wait_max_ms: round(Math.max(...waits), 1),
      order_violations: orderViolations(started, opts.orderToleranceMs, opts.orderToleranceMs),
      makespan_ms: Math.round(lastStart - firstArrival),
      endpoint_key: endpointKey,
    };
    log(`budget ${kind}: 429s ${result.upstream_429}, peak ${result.peak_in_window}/${result.limit}, utilisation ${result.utilisation}, wait p50 ${result.queue_wait_p50_ms} p99 ${result.queue_wait_p99_ms} ms, order violations ${result.order_violations}, makespan ${result.makespan_ms} ms`);
    return result;
  } finally {
    await Promise.all(workers.map((w) => w.stop('SIGTERM', 2000)));
  }
}

async function runBudget(ctx) {
  const { opts, sandbox, creds } = ctx;
  const fixtures = require('../config/sandbox-fixtures.json').customers;
  const staticAuth = authorizationHeader(creds.apiKey, 'bench-static-seed-0002', creds.apiPin);
  const r = await fetch(`${sandbox.baseUrl}customers/${fixtures[1].key}/payment_methods/${fixtures[1].payment_methods[0].key}/cardref`, { headers: { authorization: staticAuth } });
  if (!r.ok) throw new Error(`budget cardref: ${r.status}`);
  const { cardref } = await r.json();
  await sandbox.update({
    rateMode: 'sliding',
    rateWindowMs: opts.windowMs,
    latencyMs: opts.latencyMs,
    jitterMs: opts.jitterMs,
    endpointKeys: KINDS.map((k) => ({ key: k.endpointKey, ratePerMinute: opts.limitN, ratePerDay: 100_000 })),
  });
  await sandbox.reset();
  const out = {};
  for (const { kind, endpointKey } of KINDS) out[kind] = await runOne(ctx, kind, endpointKey, cardref);
  return out;
}

module.exports = { runBudget, arrivalOffsets, KINDS };
