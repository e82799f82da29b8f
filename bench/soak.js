'use strict';
/**
 * `npm run soak`: a day of faults in a few minutes (issue 28). Three production replicas (the Docker image's node
 * flags) share Redis with AOF (or, with `--mode sentinel`, a master, a replica and a Sentinel), the sandbox
 * gateway injects faults on a schedule, a load generator runs a merchant's mix at the budget's pace (scaled), and
 * at the end the run is judged from the sandbox's ledger and tokengate's own answers:
 *
 *   npm run soak -- [--duration 10m] [--mode aof|sentinel] [--scale 10] [--out <dir>] [--faults off] [--clock off]
 *
 * `--faults off` runs the load alone (a memory baseline). The mix has bank payments (issue 38), some from return
 * test accounts: their lifecycle waits on dates, so the soak moves the ACH clock (the sandbox's and tokengate's,
 * soak/bank.js) 12 hours at a time during the load and five days when it stops, and the judge checks every return.
 * tokengate's clock moves only outside production (contract: `/test/clock` answers 404 there), so with the clock
 * on the replicas run NODE_ENV=test with every production setting given explicitly (the one runtime difference is
 * that clock; production's start-up checks are what is lost). `--clock off` keeps NODE_ENV=production and leaves
 * the bank payments pending (the return rows are then not judged). SOAK_NODE_OPTIONS is passed to the replicas as
 * NODE_OPTIONS (e.g. `--heapsnapshot-signal=SIGUSR2` to take heap snapshots of a running replica);
 * SOAK_REPLICA_<n>_ENV (space-separated NAME=value) adds settings to replica n alone (e.g. MALLOC_ARENA_MAX=2).
 *
 * Writes `<out>/soak.json`, `<out>/soak-timeline.json`, `<out>/soak.md` and `<out>/soak.svg` (`<out>` is a new
 * folder bench/results/soak-<UTC time>-<mode> unless given, never the committed results); exits 1 when a
 * target fails. Needs `npm run build` first (the npm script does it) and `redis-server` on PATH.
 * Every process's log stays in the run directory (printed at the start) for the card-data scan and for a person.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ROOT, installCleanup, stopAll, pool } = require('./lib/procs');
const { cli, makeCredentials, startRedisTopology, startSandbox, replicaSlot, startIngress, startEventReceiver, rssMb, sleep } = require('./lib/stack');
const { SoakClient } = require('./soak/client');
const { Load, NEW_CARDS } = require('./soak/load');
const { playFaults } = require('./soak/faults');
const { canonical, differing, judgeLedger, judgeMoneyViews, judgeSettlements, cardPattern, scanLogs, scanRedis, memoryGrowth } = require('./soak/judge');
const { AchClock, FINAL_MS, judgeReturns } = require('./soak/bank');
const { writeReport } = require('./soak-report');

/** The soak's choices for tokengate: short timeouts so a stalled gateway and an unknown outcome resolve within a run. */
const RECONCILE = { GATEWAY_TIMEOUT_MS: '3000', RECONCILE_MAX_PROCESSING_MS: '5000', RECONCILE_INTERVAL_MS: '1000', RECONCILE_RETRY_MS: '2000', RECONCILE_DEADLINE_MS: '15000' };
/**
 * The longest a sale and a read wait for a gateway slot: production's defaults, except in a short run (under
 * SHORT_RUN_MS: CI's 60 s). A replica killed mid-write leaves its keys in progress until their write lease ends
 * (src/compose.ts: both waits, two gateway timeouts and 10 s), 56 s with the defaults, which alone kept CI's 60 s
 * soak waiting ~30 s past its load before the judge could ask; with these waits the lease is 24 s. The budget's
 * pace is unchanged (a wait only bounds how long a caller queues: past it, 429 and Retry-After, which the soak's
 * clients honour); the report's notes state the waits used.
 */
const SHORT_RUN_MS = 600_000;
const LIMITER_WAITS = {
  long: { LIMITER_SALE_MAX_WAIT_MS: '30000', LIMITER_READ_MAX_WAIT_MS: '10000' },
  short: { LIMITER_SALE_MAX_WAIT_MS: '5000', LIMITER_READ_MAX_WAIT_MS: '3000' },
};
/**
 * Bounds, stated. Memory is judged on a process that lived 10 minutes past its warm-up, from the floors GC
 * leaves (bench/soak/judge.js): the JS heap in use may grow at most 15 MB an hour (a leak of 300 bytes per
 * request at the soak's ~15 requests a second is ~16 MB/h: what a leak of our objects looks like); RSS at most
 * 60 MB an hour, looser because in a process's first hour it also grows with what is not a leak (V8 sizing its
 * heap up, glibc's malloc arenas: a 30-minute run measured RSS floors rising 23-55 MB/h while a heap snapshot
 * saw the live JS heap grow 0.8 MB in 5 minutes);
 * Redis may take at most 12 KB per approved sale. In this mix a sale comes with ~0.7 other writes (captures,
 * voids, refunds, cards, customers): measured over 5 minutes, ~8 KB per sale, which is each write's idempotency
 * record (~1.7 KB, kept a day), ~2.5 payment events (~0.8 KB each, kept 7 days), the gateway webhooks' marks
 * (~1 KB, 5 days) and the sale's record (~0.65 KB). 12 KB is that with half again for slack: a 5,000-sale day
 * then stays under 60 MB.
 */
const BOUNDS = { heap_growth_mb_per_hour: 15, rss_growth_mb_per_hour: 60, redis_bytes_per_sale: 12_288 };
/** Redis bytes per sale are judged from this many approved sales on (a short run is its fixed costs). */
const REDIS_MIN_SALES = 1000;
/** A process must live this long after its warm-up for its memory growth to be judged. */
const RSS_MIN_SPAN_S = 600;

/**
 * Where a run writes when no `--out` is given: a new folder of its own, bench/results/soak-<UTC time>-<mode>
 * (issue 41: the default was bench/results itself, so a run with the defaults overwrote the committed 30-minute
 * results). `--out bench/results` still writes there when that is meant.
 */
function defaultOut(mode, faults, now = new Date()) {
  const stamp = now.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return path.join(ROOT, 'bench', 'results', `soak-${stamp}-${mode}${faults === 'off' ? '-no-faults' : ''}`);
}

/** A target's pass: within its bound. One not judged has none (the report says "not measured", issue 41), never a pass it did not earn. */
function judgeTarget({ judged = true, ...t }) {
  return judged ? { ...t, pass: t.value !== null && t.value <= t.bound } : t;
}

function parseArgs(argv, now = new Date()) {
  const args = { duration: '10m', mode: 'aof', scale: 10, out: undefined, faults: 'on', clock: 'on' };
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].replace(/^--/, '').split('=');
    const value = inline ?? argv[++i];
    if (!(name in args)) throw new Error(`soak: unknown option --${name} (options: --duration, --mode, --scale, --out, --faults, --clock)`);
    args[name] = value;
  }
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(String(args.duration));
  if (!m) throw new Error('soak: --duration is a number with s, m or h (e.g. 90s, 30m)');
  const durationMs = Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'];
  if (!['aof', 'sentinel'].includes(args.mode)) throw new Error('soak: --mode is aof or sentinel');
  const scale = Number(args.scale);
  if (!(scale > 0)) throw new Error('soak: --scale is a positive number');
  if (!['on', 'off'].includes(args.faults)) throw new Error('soak: --faults is on or off');
  if (!['on', 'off'].includes(args.clock)) throw new Error('soak: --clock is on or off');
  return { durationMs, mode: args.mode, scale, out: args.out === undefined ? defaultOut(args.mode, args.faults, now) : path.resolve(args.out), faults: args.faults === 'on', clock: args.clock === 'on' };
}

const log = (...a) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}]`, ...a);
const build = () => { try { return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim(); } catch { return 'unknown'; } };

/** A replica's event-loop delay p99 since the last scrape (prom-client resets it) and JS heap in use, from /metrics. */
async function metricsOf(slot) {
  try {
    const res = await fetch(`${slot.adminUrl()}/metrics`, { signal: globalThis.AbortSignal.timeout(2000) });
    const text = await res.text();
    const lag = /^tokengate_nodejs_eventloop_lag_p99_seconds\s+([0-9.eE+-]+)/m.exec(text);
    const heap = /^tokengate_nodejs_heap_size_used_bytes\s+([0-9.eE+-]+)/m.exec(text);
    return { elMs: lag ? Number(lag[1]) * 1000 : null, heapMb: heap ? Number(heap[1]) / 1048576 : null };
  } catch {
    return { elMs: null, heapMb: null };
  }
}

function redisUsed(redis) {
  try {
    return Number(/used_memory:(\d+)/.exec(cli(redis.masterPort(), 'INFO', 'memory'))[1]);
  } catch {
    return null;
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  // The commit the replicas run (read now: a commit made during a long run must not be named as its build).
  const builtFrom = build();
  installCleanup();
  const run = Math.random().toString(36).slice(2, 8).replace(/[0-9]/g, 'q');
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokengate-soak-'));
  fs.mkdirSync(path.join(runDir, 'logs'));
  const creds = makeCredentials();
  const waits = LIMITER_WAITS[opts.durationMs < SHORT_RUN_MS ? 'short' : 'long'];
  const perMinute = Math.round(45 * opts.scale);
  const perDay = Math.round(5000 * opts.scale);
  log(`${opts.durationMs / 1000} s, mode ${opts.mode}, budget ${perMinute}/min ${perDay}/day (x${opts.scale}); logs in ${runDir}`);

  const errors = [];
  const onError = (what, err) => {
    if (errors.length < 50) errors.push(`${what}: ${err?.message ?? err}`);
  };

  const redis = await startRedisTopology(runDir, opts.mode);
  const receiver = await startEventReceiver(creds.eventsSecret);
  // SOAK_REPLICA_3_ENV='MALLOC_ARENA_MAX=2' (space-separated NAME=value) adds settings to one replica: an A/B of
  // a setting inside one run, the other replicas its baseline.
  const extraEnvOf = (i) => Object.fromEntries((process.env[`SOAK_REPLICA_${i + 1}_ENV`] ?? '').split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const slots = [0, 1, 2].map((i) => replicaSlot(i, runDir, () => ({ ...envOf(), ...extraEnvOf(i) })));
  const ingress = await startIngress(slots);
  const batchCloseMs = Math.max(60_000, opts.durationMs / 4);
  const sandbox = await startSandbox(runDir, creds, { perMinute, perDay, webhookUrl: `${ingress.url}/v1/webhooks/gateway`, webhookSecret: creds.gatewayWebhookSecret, batchCloseMs });
  // Production looks at the closed batches hourly, 24 times a batch's day; the soak closes a batch every few
  // minutes and looks as often for each (the net under a lost webhook; a replica killed while reading a batch its
  // webhook named leaves the batch due in Redis, which another replica takes within seconds).
  const settlementLookMs = Math.max(10_000, Math.round(batchCloseMs / 24));
  const envOf = () => ({
    PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: opts.clock ? 'test' : 'production', HOST: '127.0.0.1', LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'info',
    ...redis.env, REDIS_KEY_PREFIX: 'tg',
    GATEWAY_BASE_URL: sandbox.baseUrl, GATEWAY_ALLOW_INSECURE: 'true', GATEWAY_API_KEY: creds.apiKey, GATEWAY_API_PIN: creds.apiPin,
    GATEWAY_RATE_PER_MINUTE: String(perMinute), GATEWAY_RATE_PER_DAY: String(perDay), LIMITER_EXPECTED_REPLICAS: '3',
    JWT_SECRET: creds.jwtSecret, JWT_ISSUER: creds.issuer, JWT_AUDIENCE: creds.audience, JWT_ALGORITHMS: 'HS256',
    GATEWAY_WEBHOOK_SECRET: creds.gatewayWebhookSecret,
    EVENTS_WEBHOOK_URLS: receiver.url, EVENTS_WEBHOOK_SECRET: creds.eventsSecret, EVENTS_RETRY_SCHEDULE_MS: '1000,2000,5000,10000,30000,60000',
    ...RECONCILE, ...waits, SETTLEMENTS_LOOK_MS: String(settlementLookMs),
    ...(process.env.SOAK_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SOAK_NODE_OPTIONS } : {}),
  });
  for (const s of slots) await s.start();
  log(`replicas ${slots.map((s) => s.url()).join(' ')}, sandbox ${sandbox.url}`);

  const client = new SoakClient(slots);
  const ttlS = Math.ceil(opts.durationMs / 1000) + 3600;
  const load = new Load({ client, sandbox, creds, ttlS, run });
  await load.setup(Math.round(10 * opts.scale));
  const redisBytesAtStart = redisUsed(redis);

  // Sampling: every interval, the answers since the last one, each replica's RSS and loop delay, Redis memory.
  const intervalS = Math.min(10, Math.max(1, Math.round(opts.durationMs / 1000 / 180)));
  const startedAt = Date.now();
  const timeline = { interval_s: intervalS, samples: [], faults: [] };
  const rssSeries = Object.fromEntries(slots.map((s) => [s.name, new Map()]));
  const heapSeries = Object.fromEntries(slots.map((s) => [s.name, new Map()]));
  const loopP99 = Object.fromEntries(slots.map((s) => [s.name, []]));
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await sleep(intervalS * 1000);
      if (!sampling) break;
      const t = (Date.now() - startedAt) / 1000;
      const tally = client.takeTally();
      const rss = {};
      const el = {};
      const heap = {};
      for (const s of slots) {
        const pid = s.proc?.child.pid;
        const mb = s.up && pid ? rssMb(pid) : null;
        rss[s.name] = mb === null ? null : Math.round(mb * 10) / 10;
        if (mb !== null && Date.now() < loadStopsAt) {
          const series = rssSeries[s.name];
          if (!series.has(s.generation)) series.set(s.generation, []);
          series.get(s.generation).push([t, mb]);
        }
        const m = s.up ? await metricsOf(s) : { elMs: null, heapMb: null };
        el[s.name] = m.elMs;
        heap[s.name] = m.heapMb === null ? null : Math.round(m.heapMb * 10) / 10;
        if (m.elMs !== null) loopP99[s.name].push(m.elMs);
        if (m.heapMb !== null && Date.now() < loadStopsAt) {
          if (!heapSeries[s.name].has(s.generation)) heapSeries[s.name].set(s.generation, []);
          heapSeries[s.name].get(s.generation).push([t, m.heapMb]);
        }
      }
      const used = redisUsed(redis);
      timeline.samples.push({ t: Math.round(t), sales_per_s: Math.round((tally.sales_ok / intervalS) * 100) / 100, answers: tally.answers, rss_mb: rss, heap_mb: heap, redis_mb: used === null ? null : Math.round((used / 1048576) * 100) / 100, el_p99_ms: el });
    }
  })();
  // Sales per second: approved sales and authorizations as they are answered.
  const countSale = client.write.bind(client);
  client.write = async (op, ...rest) => {
    const res = await countSale(op, ...rest);
    if ((op === 'sale' || op === 'authorize') && res.status === 201) client.tally.sales_ok++;
    return res;
  };

  const loadStopsAt = startedAt + opts.durationMs;
  const visitsPerSecond = Math.max(0.5, 0.4 * opts.scale);
  const rounds = opts.faults ? Math.max(1, Math.round(opts.durationMs / 600_000)) : 0;
  const ctx = { sandbox, slots, redis, client, load };
  // The ACH clock: 12 hours a jump, 4 to 8 jumps whatever the run's length (a 60 s run: every 15 s).
  const ach = new AchClock({ sandbox, slots });
  const achDriven = opts.clock ? ach.drive(Math.max(15_000, opts.durationMs / 8), loadStopsAt, onError) : Promise.resolve();
  const faults = playFaults(ctx, {
    startedAt, durationMs: opts.durationMs, loadStopsAt, rounds,
    onFault: (f) => { timeline.faults.push(f); log(`fault ${f.kind}: ${f.detail}`); },
    onError,
  });
  await load.drive(visitsPerSecond, loadStopsAt, onError);
  await faults;
  await achDriven;
  // The timeline is the run's: the judge's own requests (replays, late looks) are not the merchant's traffic.
  sampling = false;
  await sampler;
  log(`load stopped: ${client.keys.size} keys, ${load.skipped} visits skipped (no idle shopper)`);

  // Calm: faults off, then the reconcile deadline after the last fault, so every unknown outcome is due.
  await sandbox.admin('DELETE', 'faults');
  await sandbox.admin('POST', 'settings', { latencyMs: 100, jitterMs: 50 });
  for (const s of slots) if (!s.up) await s.start();
  // Every bank payment of the run to its end (returned on the third morning after its cut-off) while the calm
  // wait below runs anyway: the returns' webhooks and events are delivered within it.
  if (opts.clock) await ach.jump(FINAL_MS, 'when the load stopped').catch((err) => onError('ach clock', err));
  // A replica killed mid-write leaves its keys in progress until their lease ends (src/compose.ts: the read and
  // sale waits, two gateway timeouts and 10 s): only then can the reconciler prove a write that never left absent,
  // so for that fault the deadline counts from the lease's end, as guarantee 6 counts it from the outcome's
  // becoming unknown.
  const writeLeaseMs = Number(waits.LIMITER_READ_MAX_WAIT_MS) + Number(waits.LIMITER_SALE_MAX_WAIT_MS) + 2 * Number(RECONCILE.GATEWAY_TIMEOUT_MS) + 10_000;
  const faultEnd = (f) => Date.parse(f.at) + (f.took_s ?? 0) * 1000 + (f.kind === 'replica_sigkill' ? writeLeaseMs : 0);
  const lastFault = Math.max(startedAt, ...timeline.faults.map(faultEnd));
  await sleep(Math.max(0, lastFault + Number(RECONCILE.RECONCILE_DEADLINE_MS) + 5000 - Date.now()));

  // Every key whose outcome its client never learned is asked again, once the deadline has passed.
  let unknownOpen = 0;
  const stillUnknown = [];
  await pool([...client.keys.values()].filter((rec) => !rec.final), 8, async (rec) => {
    const res = await client.write(rec.op, rec.method, rec.path, { token: rec.token, body: rec.body, key: rec.key, patienceMs: 5000 });
    if (!rec.final) {
      unknownOpen++;
      stillUnknown.push(`${rec.key} (${rec.op}): ${res.status} ${res.body?.error?.code ?? ''}`);
    }
  });

  // Every key that answered 2xx, replayed: the same answer, field for field.
  let replayMismatches = 0;
  const mismatches = [];
  const answered = [...client.keys.values()].filter((rec) => rec.first2xx);
  await pool(answered, 8, async (rec) => {
    const res = await client.send(rec.method, rec.path, { token: rec.token, body: rec.body, key: rec.key });
    if (res.status !== rec.first2xx.status || canonical(res.body) !== canonical(rec.first2xx.body)) {
      replayMismatches++;
      if (mismatches.length < 10) mismatches.push(`${rec.key} (${rec.op}): ${rec.first2xx.status} then ${res.status}; fields ${differing(rec.first2xx.body, res.body).join(', ')}`);
    }
  });
  const replayed = answered.length;

  // Events: every approved sale and authorization heard by the merchant's receiver (at least once).
  // A bank payment the gateway returned: its sale.returned too (the ledger says which were returned).
  const returnedNow = opts.clock ? (await sandbox.admin('GET', 'ledger')).filter((e) => load.bankSales.has(e.key) && e.ach?.status === 'R').map((e) => `sale.returned:${e.key}`) : [];
  const expected = [...[...load.saleKeys.entries()].filter(([, v]) => v.result !== 'D').map(([key, v]) => `${v.capture ? 'sale.succeeded' : 'sale.authorized'}:${key}`), ...returnedNow];
  let missing = expected.filter((k) => !receiver.seen.saleKeys.has(k));
  for (let i = 0; i < 60 && missing.length > 0; i++) {
    await sleep(1000);
    missing = missing.filter((k) => !receiver.seen.saleKeys.has(k));
  }

  // The merchant refunds every returned payment, after the wait for its sale.returned: each must be refused by
  // tokengate (409 sale_not_refundable) and none may reach the gateway (judged from the ledger's operations below;
  // a tokengate that never heard of the return sends it, and the gateway's refusal is still a refund sent).
  const refundOfReturned = {};
  await pool(returnedNow.map((e) => e.slice('sale.returned:'.length)), 8, async (key) => {
    const res = await client.write('refund', 'POST', `/v1/sales/${key}/refunds`, { token: load.internal, body: { amount: '0.50' }, key: load.key('refund-returned'), patienceMs: 5000 });
    const what = `${res.status} ${res.body?.error?.code ?? ''}`.trim();
    refundOfReturned[what] = (refundOfReturned[what] ?? 0) + 1;
  });

  // Settlements (issue 39): the open batch closed now (the sandbox closed others during the run), then each closed
  // batch's settlement waited for (tokengate reads it on the batch's webhook) and read back, lines and all.
  const settlementsStartedAt = Date.now();
  await sandbox.api('POST', 'batches/current/close');
  const finance = load.token({ sub: 'soak-finance', scope: 'settlements:read customers:any' });
  const closedBatches = ((await sandbox.api('GET', 'batches?limit=1000'))?.data ?? []).filter((b) => b.closed).map((b) => b.key);
  const settlements = [];
  const unread = [];
  await pool(closedBatches, 4, async (batch) => {
    for (let i = 0; i < 60; i++) {
      const res = await client.send('GET', `/v1/settlements/${batch}`, { token: finance });
      if (res.status === 200) return void settlements.push(res.body);
      await sleep(1000);
    }
    unread.push(batch);
  });
  const settled = judgeSettlements({ settlements, entries: await sandbox.admin('GET', 'ledger'), saleKeys: load.saleKeys, injected: load.settlementFaults ?? [] });
  const settlementsS = Math.round((Date.now() - settlementsStartedAt) / 100) / 10;

  // The ledger.
  const [entries, transactions, operations, stats] = await Promise.all(['ledger', 'transactions', 'operations', 'stats'].map((r) => sandbox.admin('GET', r)));
  const ledger = judgeLedger({ entries, transactions, operations, keys: client.keys, invoicePrefix: run.slice(0, 3), removed: load.removed });
  // Money views: every sale tokengate answered, read from its own view (no gateway call), against the ledger.
  const standing = new Set(entries.filter((e) => !e.voided && e.state !== 'voided' && e.result_code !== 'D').map((e) => e.key));
  const views = new Map();
  await pool([...load.saleKeys.keys()].filter((k) => standing.has(k)), 8, async (key) => {
    views.set(key, await client.send('GET', `/v1/sales/${key}`, { token: load.internal }));
  });
  const { disagree: moneyViewsDisagree, diffs: viewDiffs, judged: moneyJudged } = judgeMoneyViews(entries, views);
  // A disagreement says what each side heard (issue: a refund voided at the gateway still counted): the view's
  // refunds, the ledger's, and every gateway webhook about the sale or its refunds with its delivery tries, so a
  // failed run (CI keeps only this log) can be read without the run's folder.
  for (const t of ledger.twice ?? []) log(`refunds beyond the keys sent: ${t}`);
  if (viewDiffs.length > 0) try {
    const hooks = await sandbox.admin('GET', 'webhooks').catch(() => ({ events: [], attempts: [] }));
    for (const key of viewDiffs.map((d) => d.split(':')[0])) {
      const view = views.get(key)?.body ?? {};
      const entry = entries.find((e) => e.key === key) ?? {};
      const refundKeys = (view.refunds ?? []).map((r) => r.key).filter(Boolean);
      const about = new Set([key, ...refundKeys]);
      const events = (hooks.events ?? []).filter((e) => { const o = e.payload?.event_body?.object ?? e.payload?.object ?? {}; return about.has(o.key) || about.has(o.original?.key) || about.has(o.original); });
      log(`money view of ${key}: view refunds ${JSON.stringify(view.refunds ?? [])}; ledger ${JSON.stringify({ captured: entry.captured, refunded: entry.refunded, adjusted: entry.adjusted, state: entry.state })}`);
      for (const e of events) {
        const tries = (hooks.attempts ?? []).filter((a) => a.event_id === e.event_id).map((a) => `${a.attempt}${a.duplicate ? 'd' : ''}:${a.status ?? a.outcome}@${new Date(a.at).toISOString().slice(11, 23)}`);
        log(`  webhook ${e.event_type} ${e.event_id.slice(0, 12)} about ${(e.payload?.event_body?.object ?? e.payload?.object ?? {}).key}: tries ${tries.join(' ') || 'none'}${e.held ? ' (held)' : ''}`);
      }
    }
  } catch (err) {
    log(`money views: could not describe the disagreement (${err.message})`);
  }
  const returns = judgeReturns({ entries, operations, bankSales: load.bankSales, seenSaleEvents: receiver.seen.saleKeys });
  const achNote = opts.clock ? `${returns.returned.length} of the ${returns.expectedReturns} payments from return test accounts returned (of ${load.bankSales.size} bank payments; ACH statuses at the end ${JSON.stringify(returns.byStatus)}; clocks moved ${Math.round(ach.movedMs / 3_600_000)} h in ${ach.jumps.length} jumps)` : 'not judged: --clock off';
  const upstream429 = Object.values(stats.endpoints).reduce((s, e) => s + e.rateLimited, 0);
  const injected429 = Object.values(stats.endpoints).reduce((s, e) => s + e.injected429, 0);

  // Card data: every test card number, with or without separators, in every log line and every Redis value.
  const fixtures = JSON.parse(fs.readFileSync(path.join(ROOT, 'config', 'sandbox-fixtures.json'), 'utf8'));
  const numbers = [...NEW_CARDS, ...fixtures.customers.flatMap((c) => c.payment_methods.map((p) => p.number))];
  const pattern = cardPattern(numbers);
  const logs = scanLogs(path.join(runDir, 'logs'), pattern);
  const master = redis.masterPort();
  const redisScan = await scanRedis(`redis://127.0.0.1:${master}`, pattern);
  const redisBytesAtEnd = redisUsed(redis);

  const salesSucceeded = [...client.keys.values()].filter((r) => (r.op === 'sale' || r.op === 'authorize') && r.final?.status === 201).length;
  const salesAttempted = [...client.keys.values()].filter((r) => r.op === 'sale' || r.op === 'authorize').length;
  const durationS = Math.round((loadStopsAt - startedAt) / 1000);
  const perProcess = (series) => Object.fromEntries(Object.entries(series).map(([k, m]) => [k, [...m.values()]]));
  const { growth, spans } = memoryGrowth(perProcess(rssSeries), RSS_MIN_SPAN_S);
  const { growth: heapGrowth } = memoryGrowth(perProcess(heapSeries), RSS_MIN_SPAN_S);
  /** One target per replica: judged only on a process that lived RSS_MIN_SPAN_S past its warm-up. */
  const growthTargets = (kind, byReplica, what) => Object.entries(byReplica).map(([name, v]) => ({
    name: `${kind} ${name}`, value: v, bound: BOUNDS[kind], judged: v !== null,
    how: v === null ? `not judged: no process lived ${RSS_MIN_SPAN_S} s past its warm-up (longest ${spans[name]} s)` : `${what} of its 2-minute floors over the longest process life after warm-up (${spans[name]} s)`,
  }));
  const elBy = Object.fromEntries(Object.entries(loopP99).map(([k, v]) => [k, v.length ? Math.round(v.sort((a, b) => a - b)[Math.floor(v.length * 0.5)] * 10) / 10 : null]));
  const elMax = Object.fromEntries(Object.entries(loopP99).map(([k, v]) => [k, v.length ? Math.round(Math.max(...v) * 10) / 10 : null]));
  const redisBytesPerSale = salesSucceeded > 0 && redisBytesAtEnd && redisBytesAtStart ? Math.round((redisBytesAtEnd - redisBytesAtStart) / salesSucceeded) : null;

  const targets = [
    { name: 'double_charges', value: ledger.doubleCharges, bound: 0, how: 'sandbox ledger: approved sales or authorizations per invoice (one invoice per Idempotency-Key) beyond the first' },
    { name: 'beyond_bounds', value: ledger.beyondBounds, bound: 0, how: 'sandbox ledger: captured over authorized, refunded over captured' },
    { name: 'replay_mismatches', value: replayMismatches, bound: 0, how: `each of ${replayed} keys that answered 2xx sent again at the end: same status and body` },
    { name: 'unknown_open_after_deadline', value: unknownOpen, bound: 0, how: 'keys without a definitive answer, asked again after RECONCILE_DEADLINE_MS past the last fault' },
    { name: 'upstream_429', value: upstream429, bound: 0, how: `sandbox: real rate-limit refusals (${injected429} injected 429s not counted)` },
    { name: 'card_data_found', value: logs.found.length + redisScan.found.length, bound: 0, how: `test card numbers (any separators) in ${(logs.bytes / 1048576).toFixed(1)} MB of replica logs and ${redisScan.keys} Redis keys` },
    { name: 'answers_disagree_with_ledger', value: ledger.disagreements, bound: 0, how: 'a sale key\'s last answer against the ledger: 201 names an approved charge of its invoice; anything else, none' },
    { name: 'followups_sent_twice', value: ledger.followupsTwice, bound: 0, how: 'sandbox operations: approved voids of one transaction beyond the first (concurrent voids on 3 replicas included)' },
    { name: 'refunds_sent_twice', value: ledger.refundsTwice, bound: 0, how: 'sandbox operations: approved refunds of one sale beyond the refund keys sent for it (one Idempotency-Key, one refund; the look-up lists no refunds: SANDBOX_LOOKUP_REFUNDS=none)' },
    { name: 'removed_card_charged', value: ledger.removedCharged, bound: 0, how: 'sandbox ledger: charges on a payment method after its DELETE answered 204 (guarantee 10), both times by the sandbox\'s clock' },
    { name: 'money_views_disagree', value: moneyViewsDisagree, bound: 0, how: `each of ${moneyJudged} standing sales tokengate answered, read from its view at the end: amount_refunded against the ledger's refunded + adjusted (a refund voided at the gateway included)` },
    { name: 'settlement_mismatches', value: settled.wrong.length + unread.length, bound: 0, how: `${closedBatches.length} closed batches (${unread.length} never read): each of ${settled.judged} sales of tokengate's in a batch matched in exactly one settlement (the ${settled.returned} bank payments returned: amount_differs, bank returned), and each of ${settled.injected} injected console changes with its verdict (${settled.lines} lines; ${settlementsS} s to close the last batch and read them all)` },
    { name: 'events_missing', value: missing.length, bound: 0, how: `approved sales and authorizations without their sale.* event at the merchant's receiver (${expected.length} expected, the returns' sale.returned included)` },
    { name: 'returns_not_returned', value: returns.expectedReturns - returns.returned.length, bound: 0, judged: opts.clock, how: `sandbox ledger: bank payments from a return test account not returned after the final jump: the ACH clock moved (${achNote})` },
    { name: 'returned_events_missing', value: returns.eventsMissing.length, bound: 0, judged: opts.clock, how: `returned bank payments (sandbox ledger) without sale.returned at the merchant's receiver` },
    { name: 'refunds_of_returned_sent', value: returns.refundsAfterReturn.length, bound: 0, judged: opts.clock, how: `sandbox operations: refunds of a bank payment at or after its return (the merchant tried each returned one: ${JSON.stringify(refundOfReturned)})` },
    ...growthTargets('heap_growth_mb_per_hour', heapGrowth, 'JS heap in use: slope'),
    ...growthTargets('rss_growth_mb_per_hour', growth, 'slope'),
    { name: 'redis_bytes_per_sale', value: redisBytesPerSale, bound: BOUNDS.redis_bytes_per_sale, judged: salesSucceeded >= REDIS_MIN_SALES, how: salesSucceeded < REDIS_MIN_SALES ? `not judged under ${REDIS_MIN_SALES} sales (fixed costs, the budget's windows and new shoppers' wallets, dominate)` : 'used_memory at the end less at the start, per approved sale or authorization' },
  ].map(judgeTarget);
  const passed = targets.every((t) => t.pass !== false) && errors.filter((e) => !e.startsWith('visit')).length === 0;

  const result = {
    mode: opts.mode, faults_on: opts.faults, build: builtFrom,
    replica_settings: Object.fromEntries([0, 1, 2].map((i) => [`replica-${i + 1}`, extraEnvOf(i)]).filter(([, e]) => Object.keys(e).length > 0)),
    started_at: new Date(startedAt).toISOString(), duration_s: durationS, scale: opts.scale,
    budget: { per_minute: perMinute, per_day: perDay },
    sales_attempted: salesAttempted, sales_succeeded: salesSucceeded,
    double_charges: ledger.doubleCharges, beyond_bounds: ledger.beyondBounds, replay_mismatches: replayMismatches,
    unknown_open_after_deadline: unknownOpen, upstream_429: upstream429, card_data_found: logs.found.length + redisScan.found.length,
    returns_not_returned: returns.expectedReturns - returns.returned.length, returned_events_missing: returns.eventsMissing.length, refunds_of_returned_sent: returns.refundsAfterReturn.length,
    answers_disagree_with_ledger: ledger.disagreements, money_views_disagree: moneyViewsDisagree, followups_sent_twice: ledger.followupsTwice, refunds_sent_twice: ledger.refundsTwice, removed_card_charged: ledger.removedCharged, events_missing: missing.length,
    rss_growth_mb_per_hour: growth, heap_growth_mb_per_hour: heapGrowth, redis_bytes_per_sale: redisBytesPerSale,
    event_loop_delay_p99_ms: Math.max(...Object.values(elBy).filter((v) => v !== null)),
    event_loop_delay_p99_ms_by_replica: elBy, event_loop_delay_p99_ms_worst_interval: elMax,
    bounds: BOUNDS, targets, passed,
    requests: client.totals, operations: load.ops,
    gateway: { calls: Object.values(stats.endpoints).reduce((s, e) => s + e.accepted, 0), by_kind: stats.endpoints.v2?.acceptedByKind, injected_429: injected429, faults_struck: stats.faults, lost_answers: stats.sales.lostAnswers },
    redis_bytes_by_family: Object.fromEntries(Object.entries(redisScan.bytesByFamily).sort((a, b) => b[1] - a[1])),
    redis_keys: redisScan.keys,
    events: { received: receiver.seen.deliveries, distinct: receiver.seen.ids.size, bad_signature: receiver.seen.badSignature, by_type: receiver.seen.byType },
    faults: timeline.faults,
    ach: { clock_moved_hours: Math.round(ach.movedMs / 3_600_000), jumps: ach.jumps, bank_payments: load.bankSales.size, statuses: returns.byStatus, refund_of_returned_answers: refundOfReturned },
    settlements: { batches: closedBatches.length, unread, judged_sales: settled.judged, returned_lines: settled.returned, injected: load.settlementFaults ?? [], lines: settled.lines, seconds: settlementsS },
    details: { settlements: settled.wrong.slice(0, 10), returned_events_missing: returns.eventsMissing.slice(0, 10), refunds_of_returned: returns.refundsAfterReturn.slice(0, 10), doubles: ledger.doubles, refunds_twice: ledger.twice, beyond: ledger.beyond, disagree: ledger.disagree, money_views: viewDiffs, still_unknown: stillUnknown.slice(0, 10), mismatches, events_missing: missing.slice(0, 10), card_data: [...logs.found, ...redisScan.found].slice(0, 10), errors },
    notes: [
      `tokengate: ${RECONCILE.GATEWAY_TIMEOUT_MS} ms gateway timeout, reconcile deadline ${RECONCILE.RECONCILE_DEADLINE_MS} ms, a sale waits at most ${waits.LIMITER_SALE_MAX_WAIT_MS} ms and a read ${waits.LIMITER_READ_MAX_WAIT_MS} ms for a gateway slot (${waits === LIMITER_WAITS.short ? `a run under ${SHORT_RUN_MS / 60_000} minutes: production's 30 s and 10 s would hold a killed replica's keys in progress 56 s, here ${writeLeaseMs / 1000} s` : 'production\'s defaults'}); sandbox answers in 100 +- 50 ms, closes a batch every ${Math.round(batchCloseMs / 1000)} s (each replica looks at the closed batches every ${Math.round(settlementLookMs / 1000)} s), duplicates 5 % of its webhooks and shuffles them within 2 s.`,
      `load: ${visitsPerSecond} visits/s from ${load.shoppers.length} shoppers (${load.skipped} skipped: no idle shopper); the event-loop figure is the median of each replica's per-interval p99, the worst replica.`,
    ],
  };
  fs.mkdirSync(opts.out, { recursive: true });
  fs.writeFileSync(path.join(opts.out, 'soak.json'), `${JSON.stringify(result, null, 2)}\n`);
  fs.writeFileSync(path.join(opts.out, 'soak-timeline.json'), `${JSON.stringify(timeline)}\n`);
  writeReport(result, timeline, opts.out);
  for (const t of targets) log(`${t.pass === undefined ? 'n/m ' : t.pass ? 'ok  ' : 'FAIL'} ${t.name}: ${t.value} (bound ${t.bound})`);
  if (errors.length) log(`errors: ${errors.slice(0, 10).join(' | ')}`);
  log(`${passed ? 'PASSED' : 'FAILED'}: ${salesSucceeded}/${salesAttempted} sales, ${timeline.faults.length} faults; ${path.relative(process.cwd(), path.join(opts.out, 'soak.md'))}`);

  await client.close();
  await ingress.close();
  await receiver.close();
  await Promise.all(slots.map((s) => (s.up ? s.stop() : undefined)));
  await stopAll();
  await redis.stop();
  return passed;
}

module.exports = { parseArgs, defaultOut, judgeTarget };

// Run, not required: a require() (a syntax check, a test) must not start three replicas and a soak.
if (require.main === module) {
  main().then((ok) => process.exit(ok ? 0 : 1), async (err) => {
    console.error(err);
    await stopAll();
    process.exit(2);
  });
}
