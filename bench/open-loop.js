'use strict';
/**
 * An open-loop load generator (issue 15, item 2): request i is due at start + i / rate, whatever earlier answers
 * did, and its latency is measured from when it was DUE, not from when it was sent, so a stall shows in the
 * figures instead of silently lowering the rate (coordinated omission). autocannon's `overallRate` was tried
 * first: it meters each connection in ticks, so requests leave in small bursts, and a burst queued behind a
 * busy event loop reads as latency the service added (31 ms "added" at p99 for 200 sales/s on a quiet box, with
 * tokengate's CPU at 16 %). Requests go over one undici Pool of keep-alive connections, enough for every
 * request in flight.
 */
const { performance } = require('node:perf_hooks');
const { Pool } = require('undici');
const { percentile, round } = require('./lib/stats');

/**
 * Runs `rate` requests per second for `durationSec` against `url` (POST `body` with `headers`, a fresh
 * Idempotency-Key per request). Returns latency percentiles in ms (from the due time), what was achieved, and
 * how late the generator itself sent requests (its own p99: if it is not small, the figures are the bench's).
 */
async function openLoop({ url, headers, body, rate, durationSec, makeKey, connections = 256, pool: given }) {
  const target = new URL(url);
  const pool = given ?? new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const total = Math.round(rate * durationSec);
  const latencies = [];
  const sendLag = [];
  let ok = 0;
  let failed = 0;
  const failures = {};
  const start = performance.now() + 50;
  const inFlight = [];
  const fire = (due) => {
    sendLag.push(performance.now() - due);
    const p = pool.request({ method: 'POST', path: target.pathname, headers: { ...headers, 'idempotency-key': makeKey() }, body })
      .then(async (res) => {
        await res.body.dump();
        latencies.push(performance.now() - due);
        if (res.statusCode >= 200 && res.statusCode < 300) ok++;
        else {
          failed++;
          failures[res.statusCode] = (failures[res.statusCode] ?? 0) + 1;
        }
      }, (err) => {
        latencies.push(performance.now() - due);
        failed++;
        const code = err?.code ?? err?.name ?? 'error';
        failures[code] = (failures[code] ?? 0) + 1;
      });
    inFlight.push(p);
  };
  let next = 0;
  while (next < total) {
    const now = performance.now();
    // Everything due by now leaves now (a late timer catches up rather than skipping requests).
    while (next < total && start + (next * 1000) / rate <= now) fire(start + (next++ * 1000) / rate);
    if (next >= total) break;
    const wait = start + (next * 1000) / rate - performance.now();
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
  }
  await Promise.all(inFlight);
  if (!given) await pool.close();
  const elapsed = (performance.now() - start) / 1000;
  return {
    p50_ms: round(percentile(latencies, 50), 2),
    p99_ms: round(percentile(latencies, 99), 2),
    p99_9_ms: round(percentile(latencies, 99.9), 2),
    max_ms: round(Math.max(...latencies), 2),
    achieved_rps: round(ok / elapsed, 1),
    ok,
    failed,
    failures,
    generator_send_lag_p99_ms: round(percentile(sendLag, 99), 2),
  };
}

/**
 * The same run in a fresh Node process of its own (`node bench/open-loop.js` with OPEN_LOOP set): the bench's
 * main process has run autocannon for minutes and carries its garbage, and its GC pauses would read as latency
 * of whichever target is being measured (seen: generator send lag p99 5.8 ms in-process, 1.2-1.8 ms in a child).
 * It first runs `warmupSec` unmeasured at the same rate (its JIT and the target's keep-alive connections warm
 * up: a fresh process's first requests would otherwise open connections inside the measurement).
 * Idempotency keys are `${keyPrefix}-<n>`. The result adds `waiting_for_cpu_ms_per_s`: per second of the
 * measured run (not the warm-up), how long each process of `watch` ({ name: pid }) and the generator itself
 * sat runnable without a core, read by the child at the run's two ends so every figure covers the same span,
 * and `cpu_ms_per_request`: each one's CPU time over the same span per request answered 2xx (for the service,
 * its CPU per sale at this rate, where two services compared see the same arrivals).
 */
async function openLoopInChild({ url, headers, body, rate, durationSec, keyPrefix, warmupSec = 1, watch = {} }) {
  const { start } = require('./lib/procs');
  const proc = start('open-loop', process.execPath, [__filename], {
    PATH: process.env.PATH ?? '',
    OPEN_LOOP: JSON.stringify({ url, headers, body, rate, durationSec, keyPrefix, warmupSec, watch }),
  });
  const { code } = await proc.exited;
  const out = proc.output();
  const line = out.split('\n').find((l) => l.startsWith('{'));
  if (code !== 0 || !line) throw new Error(`open-loop child failed (exit ${code}): ${out.slice(-2000)}`);
  return JSON.parse(line);
}

if (require.main === module) {
  const params = JSON.parse(process.env.OPEN_LOOP ?? '{}');
  const { runQueueWaitMs, onCpuMs } = require('./lib/procs');
  let n = 0;
  const makeKey = () => `${params.keyPrefix}-${(n++).toString(36)}`;
  // One pool for both runs: the measured one starts on the warm-up's open connections.
  const pool = new Pool(new URL(params.url).origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
  const pids = { ...params.watch, generator: process.pid };
  const waits = () => Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, runQueueWaitMs(pid)]));
  const onCpu = () => Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, onCpuMs(pid)]));
  let before;
  let cpuBefore;
  let startedAt;
  openLoop({ ...params, durationSec: params.warmupSec, makeKey, pool }).then(() => {
    before = waits();
    cpuBefore = onCpu();
    startedAt = performance.now();
    return openLoop({ ...params, makeKey, pool });
  }).then((result) => {
    const after = waits();
    const cpuAfter = onCpu();
    const sec = (performance.now() - startedAt) / 1000;
    const perSecond = Object.fromEntries(Object.keys(pids).map((name) => [name, round((after[name] - before[name]) / sec, 1)]));
    const perRequest = Object.fromEntries(Object.keys(pids).map((name) => [name, round((cpuAfter[name] - cpuBefore[name]) / result.ok, 4)]));
    return { ...result, waiting_for_cpu_ms_per_s: perSecond, cpu_ms_per_request: perRequest };
  }).finally(() => pool.close()).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (err) => {
      process.stderr.write(`${err.stack ?? err}\n`);
      process.exitCode = 1;
    },
  );
}

module.exports = { openLoop, openLoopInChild };
