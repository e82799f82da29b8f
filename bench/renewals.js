'use strict';
/**
 * `npm run bench:renewals`: a month of a subscription merchant's life in minutes (issue 37, "Proof"). Two
 * merchants on one sandbox gateway, each with its own endpoint key, budget, three development replicas (the test
 * clock exists only outside production) and Redis prefix: A has the subscriptions, B has none, and both get the
 * same shoppers' checkouts at the same moments: the A/B of what renewals cost checkouts, in one run, on one box.
 *
 *   npm run bench:renewals -- [--quick] [--subs 10000] [--day 120] [--scale 1] [--out <dir>]
 *
 * Time: a day lasts `--day` seconds: tokengate's clock (POST /test/clock) and the sandbox's (POST
 * /_sandbox/clock) are moved together, and the gateway's day window (GATEWAY_RATE_DAY_WINDOW_MS, the sandbox's)
 * is that day. The budget is the gateway's 5,000 calls a day times `--scale` (the soak's scaling: calls and the
 * merchant's traffic together), its short window keeps the real ratio of window to day (45 a minute is 13 times
 * a day's average pace): ceil(13 × day's calls × 1 s / day) a second. The month: the last day of the month
 * before (setup's calls leave the day window) and the month's first 31 days. Subscriptions are monthly, their
 * anchors 45 % on the 1st, the rest
 * spread over the month; each customer has one card and `--subs / --customers` subscriptions on it. 4 % of cards
 * decline softly (10251) for their first attempts and then approve (the sandbox's scripted declines), 2 % hard
 * (10262) for good, 4 % are removed (half the day before, half during the 1st's renewals), 2 % of
 * subscriptions are canceled (the same), a replica is SIGKILLed on the 1st mid-renewals and Redis restarted
 * (AOF) on the 2nd while the 1st's spill drains. Judged from the sandbox's ledger (bench/renewals/judge.js).
 *
 * Writes renewals.json, renewals.md and renewals.svg into `--out` (a new bench/results/renewals-<UTC time>
 * folder unless given); exits 1 when a zero-target fails. Needs `npm run build` (the npm script does it).
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ROOT, installCleanup, stopAll, sleep, pool, cpuSeconds, waitFor } = require('./lib/procs');
const { cli, makeCredentials, startRedisTopology, startSandbox, replicaSlot } = require('./lib/stack');
const { SoakClient } = require('./soak/client');
const { tokenMaker, anchorDay, customerWithCard, Clocks } = require('./renewals/merchant');
const { judgeRenewals, judgeCheckouts, DAY_MS } = require('./renewals/judge');
const { writeReport } = require('./renewals/report');

/** The soak's reconciler settings with a longer gateway timeout: a box at load 30 answered setup calls past 3 s. */
const RECONCILE = { GATEWAY_TIMEOUT_MS: '8000', RECONCILE_MAX_PROCESSING_MS: '10000', RECONCILE_INTERVAL_MS: '1000', RECONCILE_RETRY_MS: '2000', RECONCILE_DEADLINE_MS: '30000' };
/** Real checkouts a day per 5,000 calls of budget: a merchant whose shoppers use a sixth of its day. */
const CHECKOUTS_PER_DAY = 800;
/** A sale's write lease with the replicas' settings (src/compose.ts: read wait + sale wait + 2 gateway timeouts + 10 s,
 * the limiter's defaults 10 s and 30 s): a checkout in flight on a killed replica waits it out before another answers. */
const WRITE_LEASE_MS = 10_000 + 30_000 + 2 * Number(RECONCILE.GATEWAY_TIMEOUT_MS) + 10_000;
const ON_FIRST = 0.45;

function parseArgs(argv) {
  const quick = argv.includes('--quick');
  const args = quick
    ? { subs: 1000, customers: 100, day: 60, scale: 0.1, spread: 6, out: undefined }
    : { subs: 10_000, customers: 1000, day: 120, scale: 1, spread: 30, out: undefined };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--quick') continue;
    const [name, inline] = argv[i].replace(/^--/, '').split('=');
    const value = inline ?? argv[++i];
    if (!(name in args)) throw new Error(`renewals: unknown option --${name} (options: --quick, --subs, --customers, --day, --scale, --spread, --out)`);
    args[name] = name === 'out' ? value : Number(value);
  }
  for (const k of ['subs', 'customers', 'day', 'scale', 'spread']) if (!(args[k] > 0)) throw new Error(`renewals: --${k} must be a positive number`);
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return { ...args, quick, out: args.out ? path.resolve(args.out) : path.join(ROOT, 'bench', 'results', `renewals-${stamp}${quick ? '-quick' : ''}`) };
}

const log = (...a) => console.log(`[renewals ${new Date().toISOString().slice(11, 19)}]`, ...a);
const build = () => { try { return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim(); } catch { return 'unknown'; } };
const iso = (ms) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

/** The 1st of a month at least two days ahead (UTC): subscriptions start after today, and the day before is the warm-up. */
function firstOfNextMonth(now = Date.now()) {
  const d = new Date(now + 2 * DAY_MS);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const builtFrom = build();
  installCleanup();
  const t0 = Date.now();
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokengate-renewals-'));
  fs.mkdirSync(path.join(runDir, 'logs'));
  const creds = makeCredentials();
  const dayMs = Math.round(opts.day * 1000);
  const perDay = Math.round(5000 * opts.scale);
  const perWindow = Math.ceil((13 * perDay * 1000) / dayMs);
  const checkoutsPerDay = Math.round(CHECKOUTS_PER_DAY * opts.scale);
  const run = Math.random().toString(36).slice(2, 4).replace(/[0-9]/g, 'q');
  log(`${opts.subs} subscriptions on ${opts.customers} cards; a day is ${opts.day} s; budget ${perDay}/day, ${perWindow}/s; ${checkoutsPerDay} checkouts a day each side; logs in ${runDir}`);

  const redis = await startRedisTopology(runDir, 'aof');
  const sandbox = await startSandbox(runDir, creds, {
    perMinute: perWindow, perDay, batchCloseMs: DAY_MS,
    env: { SANDBOX_RATE_WINDOW_MS: '1000', SANDBOX_RATE_DAY_WINDOW_MS: String(dayMs), SANDBOX_LATENCY_MS: '30', SANDBOX_JITTER_MS: '10' },
  });
  await sandbox.admin('POST', 'settings', { endpointKeys: [{ key: 'nosubs' }] });
  const envOf = (prefix, endpoint) => () => ({
    PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'development', HOST: '127.0.0.1', LOG_LEVEL: 'warn',
    ...redis.env, REDIS_KEY_PREFIX: prefix,
    GATEWAY_BASE_URL: `${sandbox.url}/api/${endpoint}/`, GATEWAY_ALLOW_INSECURE: 'true', GATEWAY_API_KEY: creds.apiKey, GATEWAY_API_PIN: creds.apiPin,
    GATEWAY_RATE_PER_MINUTE: String(perWindow), GATEWAY_RATE_WINDOW_MS: '1000', GATEWAY_RATE_PER_DAY: String(perDay), GATEWAY_RATE_DAY_WINDOW_MS: String(dayMs),
    LIMITER_EXPECTED_REPLICAS: '3', SUBSCRIPTION_POLL_MS: '500',
    JWT_SECRET: creds.jwtSecret, JWT_ISSUER: creds.issuer, JWT_AUDIENCE: creds.audience, JWT_ALGORITHMS: 'HS256',
    ...RECONCILE,
  });
  const a = [0, 1, 2].map((i) => replicaSlot(i, runDir, envOf('tga', 'v2')));
  const b = [3, 4, 5].map((i) => replicaSlot(i, runDir, envOf('tgb', 'nosubs')));
  for (const s of [...a, ...b]) await s.start();
  const clientA = new SoakClient(a);
  const clientB = new SoakClient(b);
  const token = tokenMaker(creds, 6 * 3600);
  const internal = token({ sub: 'renewals-merchant', scope: 'customers:write customers:any customers:read payment_methods:read payment_methods:write subscriptions:read subscriptions:write sales:read' });
  const publicKey = (await clientA.send('GET', '/v1/payment-config', { token: internal })).body?.public_key;

  // Setup, on the wall clock: the customers, their cards, the subscriptions (none charged now: they start later).
  const m1 = firstOfNextMonth();
  const simStart = m1 - DAY_MS;
  const spanDays = opts.spread + 1;
  const endMs = m1 + (opts.quick ? spanDays + 1 : 31) * DAY_MS;
  const customers = new Array(opts.customers);
  await pool([...customers.keys()], 8, async (j) => { customers[j] = await customerWithCard(clientA, sandbox.url, publicKey, internal, `${run}c${j}`, token); });
  const shoppers = [];
  for (let j = 0; j < 20; j++) shoppers.push(await customerWithCard(clientA, sandbox.url, publicKey, internal, `${run}s${j}`, token));
  // B knows the shoppers too: its view reads each wallet once now, as a warm merchant's would hold it.
  for (const s of shoppers) await clientB.send('GET', `/v1/customers/${s.custkey}/payment_methods`, { token: internal });
  const kindOf = (j) => ({ 0: 'soft', 1: 'soft', 2: 'hard', 3: 'removed_before', 4: 'removed_during' })[j % 50] ?? 'plain';
  const per = Math.ceil(opts.subs / opts.customers);
  for (const [j, c] of customers.entries()) {
    if (kindOf(j) === 'soft') await sandbox.admin('POST', 'declines', { pmkey: c.pmkey, attempts: 2 * per, error_code: '10251' });
    if (kindOf(j) === 'hard') await sandbox.admin('POST', 'declines', { pmkey: c.pmkey, attempts: 1000, error_code: '10262' });
  }
  log(`setup: ${opts.customers + shoppers.length} customers with cards in ${Math.round((Date.now() - t0) / 1000)} s`);
  const subs = new Map(); // invoice prefix -> { key, anchorMs, pmkey, kind, cancel }
  const list = [...Array(opts.subs).keys()];
  const spreadAnchor = (i) => {
    const d = anchorDay(i, opts.subs, ON_FIRST);
    return d === 1 ? 1 : 2 + ((d - 2) % opts.spread);
  };
  await pool(list, 12, async (i) => {
    const c = customers[i % opts.customers];
    const anchorMs = m1 + (spreadAnchor(i) - 1) * DAY_MS;
    const prefix = `${run}${i.toString(36)}`;
    const body = { amount: '9.99', interval: 'month', payment_method: c.pmkey, invoice_prefix: prefix, start: new Date(anchorMs).toISOString().slice(0, 10), consent: { text: 'Monthly plan, terms v3' } };
    const res = await clientA.write('subscription', 'POST', `/v1/customers/${c.custkey}/subscriptions`, { token: internal, body, key: `sub-${prefix}`, patienceMs: 300_000 });
    if (res.status !== 201) throw new Error(`renewals: creating a subscription answered ${res.status} ${JSON.stringify(res.body?.error ?? {})}`);
    subs.set(prefix, { key: res.body.key, anchorMs, pmkey: c.pmkey, custkey: c.custkey, kind: kindOf(i % opts.customers), cancel: i % 100 === 7 ? 'before' : i % 100 === 8 ? 'during' : undefined });
  });
  const setupS = Math.round((Date.now() - t0) / 1000);
  log(`setup: ${subs.size} subscriptions (${[...subs.values()].filter((s) => s.anchorMs === m1).length} on the 1st) after ${setupS} s`);

  // The month: both clocks at the day before the 1st, then moving a day every `--day` seconds.
  const clocks = new Clocks({ slots: a, sandbox, simStartMs: simStart, rate: DAY_MS / dayMs });
  await clocks.jumpTo(simStart);
  const removed = new Map();
  const samples = [];
  const faults = [];
  const checkoutTimes = [];
  for (let t = simStart; t < endMs; t += DAY_MS) {
    for (let k = 0; k < checkoutsPerDay; k++) checkoutTimes.push(t + Math.random() * DAY_MS);
  }
  checkoutTimes.sort((x, y) => x - y);
  let nextCheckout = 0;
  let seq = 0;
  const inflight = new Set();
  const checkout = (shopper, side, client, invoice) => {
    const started = Date.now();
    const p = client.write('sale', 'POST', '/v1/sales', {
      token: token({ sub: `shopper-${shopper.custkey}`, custkey: shopper.custkey, scope: 'sales:create' }),
      body: { customer: shopper.custkey, payment_method: shopper.pmkey, amount: (1 + Math.random() * 99).toFixed(2), invoice },
      key: `${side}-${invoice}`, patienceMs: 120_000,
    }).then((res) => {
      const answeredAt = Date.now();
      samples.push({ side, ms: answeredAt - started, status: res.status, at: clocks.sandboxNow(), startedAt: started, answeredAt });
    });
    inflight.add(p);
    p.finally(() => inflight.delete(p));
  };
  const cancelOrRemove = async (when) => {
    const jobs = [];
    for (const [j, c] of customers.entries()) if (kindOf(j) === `removed_${when}`) jobs.push(async () => {
      const res = await clientA.send('DELETE', `/v1/customers/${c.custkey}/payment_methods/${c.pmkey}`, { token: internal });
      if (res.status === 204) removed.set(c.pmkey, clocks.sandboxNow());
    });
    for (const s of subs.values()) if (s.cancel === when) jobs.push(async () => {
      const res = await clientA.write('cancel', 'POST', `/v1/subscriptions/${s.key}/cancel`, { token: internal, body: {}, key: `cancel-${s.key}`, patienceMs: 300_000 });
      if (res.status === 200) s.canceledAtMs = clocks.sandboxNow();
    });
    await pool(jobs, 8, (job) => job());
    log(`${when}: ${jobs.length} removals and cancels answered`);
  };
  /** A replica back, however long a busy box takes: a start that timed out is stopped and tried again. */
  const restart = async (slot) => {
    for (;;) {
      try {
        await slot.start();
        return;
      } catch (e) {
        log(`${slot.name} not ready in time, again: ${String(e.message).split('\n')[0]}`);
        await slot.proc.stop('SIGKILL', 1000);
      }
    }
  };
  let restarting = Promise.resolve();
  const schedule = [
    { at: simStart + DAY_MS / 2, run: () => cancelOrRemove('before') },
    { at: m1 + DAY_MS / 3, run: () => cancelOrRemove('during') },
    { at: m1 + DAY_MS / 4, run: async () => {
      const t = Date.now();
      await a[1].kill();
      const fault = { kind: 'replica_sigkill', sim: iso(clocks.sandboxNow()), detail: `${a[1].name} SIGKILLed mid-renewals`, wall_from: t };
      faults.push(fault);
      // The kill's window for the checkouts' A/B: from the kill to the replica back plus the write lease.
      restarting = sleep(3000).then(() => restart(a[1])).then(() => {
        const back = Date.now();
        Object.assign(fault, { back_after_ms: back - t, wall_to: back + WRITE_LEASE_MS, detail: `${fault.detail}, back after ${back - t} ms; checkouts in flight from the kill to ${WRITE_LEASE_MS / 1000} s (the write lease) after it was back are outside the A/B's "outside the kill" figures` });
        log(`${a[1].name} back after ${back - t} ms`);
      });
    } },
    { at: m1 + DAY_MS + DAY_MS / 8, run: async () => {
      const t = Date.now();
      // A busy box may take longer than the topology's 10 s to reload the AOF: the fault is what happened, the
      // wait is for PING, however long.
      const detail = await redis.restart().catch((e) => `restarted; not ready within 10 s (${String(e.message).split('\n')[0]})`);
      await waitFor(async () => cli(redis.masterPort(), 'PING') === 'PONG', 120_000, 'redis after its restart');
      faults.push({ kind: 'redis_restart', sim: iso(clocks.sandboxNow()), detail: `${detail}; answering PING after ${Date.now() - t} ms` });
    } },
  ];
  const tickOf = async (simNow) => {
    while (nextCheckout < checkoutTimes.length && checkoutTimes[nextCheckout] <= simNow) {
      nextCheckout++;
      const shopper = shoppers[seq % shoppers.length];
      const invoice = `k${run}${(seq++).toString(36)}`;
      const delay = Math.random() * clocks.tickMs;
      setTimeout(() => { checkout(shopper, 'with_renewals', clientA, `a${invoice}`.slice(0, 10)); checkout(shopper, 'without_renewals', clientB, `b${invoice}`.slice(0, 10)); }, delay);
    }
    while (schedule.length > 0 && schedule[0].at <= simNow) {
      const job = schedule.shift();
      await job.run().catch((e) => log(`scheduled job failed: ${e.message}`));
    }
    if (Math.floor(simNow / DAY_MS) !== lastDay) {
      lastDay = Math.floor(simNow / DAY_MS);
      log(`day ${iso(lastDay * DAY_MS).slice(0, 10)}: ${samples.length} checkouts answered`);
    }
  };
  let lastDay;
  schedule.sort((x, y) => x.at - y.at);
  const monthStarted = Date.now();
  clocks.start(async (simNow) => {
    if (simNow >= endMs) { clocks.running = false; return; }
    await tickOf(simNow);
  });
  await clocks.loop;
  const monthS = Math.round((Date.now() - monthStarted) / 1000);
  // CPU seconds of each side's replicas that lived through the month (the killed one's first life is not counted).
  const cpuOf = (slots) => Math.round(slots.filter((s) => s.up).reduce((sum, s) => sum + cpuSeconds(s.proc.child.pid), 0));
  const cpu = { with_renewals_s: cpuOf(a), without_renewals_s: cpuOf(b), sandbox_s: Math.round(cpuSeconds(sandbox.proc.child.pid)) };
  await Promise.all(inflight);
  await restarting;
  // Calm: every unknown outcome reconciled and every renewal's answer in before the ledger is read.
  await sleep(Number(RECONCILE.RECONCILE_DEADLINE_MS) + 5000);

  const transactions = await sandbox.admin('GET', 'transactions');
  const stats = await sandbox.admin('GET', 'stats');
  const verdict = judgeRenewals({ transactions, endpointKey: 'v2', subs: new Map([...subs].map(([p, s]) => [p, { ...s, kind: s.kind.startsWith('removed') ? 'plain' : s.kind }])), removed, endMs });
  // The raw material, before anything is judged: a verdict lost later can be judged again from it.
  try {
    fs.writeFileSync(path.join(runDir, 'raw.json'), JSON.stringify({ transactions, subs: [...subs], removed: [...removed], endMs, samples, faults }));
    log(`raw ledger and samples in ${path.join(runDir, 'raw.json')}`);
  } catch (err) {
    log(`raw data not written: ${err.message}`);
  }
  const killWindows = faults.filter((f) => f.kind === 'replica_sigkill').map((f) => ({ from: f.wall_from, to: f.wall_to ?? Date.now() }));
  const checkouts = judgeCheckouts(samples, killWindows);
  let spilledByTokengate = {};
  try {
    const spillKeys = cli(redis.masterPort(), '--scan', '--pattern', '{tga:subs}:spill:*').split('\n').filter(Boolean);
    spilledByTokengate = Object.fromEntries(spillKeys.map((k) => [k.slice(k.lastIndexOf(':') + 1), Number(cli(redis.masterPort(), 'GET', k))]).filter(([, v]) => v > 0).sort());
  } catch (err) {
    log(`tokengate's spill count not read: ${String(err.message).split('\n')[0]}`);
  }
  const upstream429 = Object.values(stats.endpoints).reduce((s, e) => s + e.rateLimited, 0);
  // What one hash tag holds (docs/subscriptions.md, "one hash tag"): every subscription's record and the due set.
  // A measure, never a reason to lose the verdict (a full run once died here, on a redis-cli option, after its month).
  let hashTag = null;
  try {
    const port = redis.masterPort();
    const recordKeys = cli(port, '--scan', '--pattern', '{tga:subs}:s:*').split('\n').filter(Boolean);
    const sample = recordKeys.slice(0, 200).map((k) => Number(cli(port, 'MEMORY', 'USAGE', k)));
    hashTag = {
      subscriptions: recordKeys.length,
      bytes_per_subscription: sample.length ? Math.round(sample.reduce((x, y) => x + y, 0) / sample.length) : null,
      due_set_bytes: Number(cli(port, 'MEMORY', 'USAGE', '{tga:subs}:due')) || null,
    };
  } catch (err) {
    log(`the hash tag's size not measured: ${String(err.message).split('\n')[0]}`);
  }
  const targets = [
    { name: 'periods_charged_twice', value: verdict.periods_charged_twice, bound: 0 },
    { name: 'charges_on_removed_cards', value: verdict.charges_on_removed_cards, bound: 0 },
    { name: 'charges_after_cancel', value: verdict.charges_after_cancel, bound: 0 },
    { name: 'hard_declines_retried_on_same_card', value: verdict.hard_declines_retried_on_same_card, bound: 0 },
    { name: 'upstream_429', value: upstream429, bound: 0 },
  ].map((t) => ({ ...t, pass: t.value <= t.bound }));
  const result = {
    build: builtFrom, quick: opts.quick, started_at: new Date(t0).toISOString(), wall_s: Math.round((Date.now() - t0) / 1000), setup_s: setupS, month_s: monthS,
    machine: { cores: os.cpus().length, load_avg_at_end: os.loadavg().map((x) => Math.round(x * 10) / 10), node: process.version },
    month: { from: iso(simStart), to: iso(endMs), day_s: opts.day },
    budget: { per_day: perDay, per_second_window: perWindow, scale: opts.scale },
    merchant: { subscriptions: subs.size, customers: opts.customers, on_the_first: [...subs.values()].filter((s) => s.anchorMs === m1).length, checkouts_per_day_each_side: checkoutsPerDay, shoppers: shoppers.length },
    targets, passed: targets.every((t) => t.pass),
    renewals: verdict, spilled_by_tokengate: spilledByTokengate, checkouts, checkouts_kill_windows: killWindows.map((w) => ({ from: new Date(w.from).toISOString(), seconds: Math.round((w.to - w.from) / 100) / 10 })), faults, cpu_s: cpu, subscriptions_hash_tag: hashTag,
    gateway: { accepted_by_endpoint: Object.fromEntries(Object.entries(stats.endpoints).map(([k, e]) => [k, e.accepted])), rate_limited: upstream429 },
  };
  writeReport(result, opts.out);
  for (const t of targets) log(`${t.pass ? 'ok  ' : 'FAIL'} ${t.name}: ${t.value}`);
  log(`late p50 ${verdict.late_hours.p50} h, p99 ${verdict.late_hours.p99} h; spilled days ${Object.keys(verdict.spilled_days).join(', ') || 'none'}; checkouts p99 ${checkouts.with_renewals.p99_ms} ms with renewals, ${checkouts.without_renewals.p99_ms} ms without; outside the kill ${checkouts.with_renewals.outside_faults.p99_ms} ms and ${checkouts.without_renewals.outside_faults.p99_ms} ms`);
  log(`${result.passed ? 'PASSED' : 'FAILED'} in ${result.wall_s} s (setup ${setupS} s, month ${monthS} s): ${path.relative(process.cwd(), path.join(opts.out, 'renewals.md'))}`);
  await clientA.close();
  await clientB.close();
  await Promise.all([...a, ...b].map((s) => (s.up ? s.stop() : undefined)));
  await stopAll();
  await redis.stop();
  return result.passed;
}

module.exports = { parseArgs, firstOfNextMonth };

if (require.main === module) {
  main().then((ok) => process.exit(ok ? 0 : 1), async (err) => {
    console.error(err);
    await stopAll();
    process.exit(2);
  });
}
