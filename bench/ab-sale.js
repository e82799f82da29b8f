'use strict';
/**
 * A/B of the sale path's CPU: two builds of tokengate (two checkouts, each built) against one sandbox and one
 * Redis, the same cached-token sale at the same concurrency, rounds alternating A and B so that a shared box's
 * drift hits both alike. Used to answer "is the sale path slower than before this change" with a ratio measured
 * in one run (issues 10, 11, 15).
 *
 *   node bench/ab-sale.js <checkout A> <checkout B> [rounds=6] [sales per round=3000]
 *
 * AB_NODE_ARGS_A / AB_NODE_ARGS_B (space-separated) add node flags to one build, e.g. the same checkout twice
 * with and without --max-semi-space-size. AB_STORES_A / AB_STORES_B=memory runs one build without Redis
 * (development mode, in-memory stores): what all of the sale's Redis work costs, for the same checkout twice.
 * AB_RATE=<sales/s> sends at that fixed rate instead of as fast as answered: both builds then see the same
 * arrivals, so the same work per event-loop wake-up, and a few-percent change shows (A against itself at
 * 600/s: rounds within +-3 % but for an outlier, against +-20 % at saturation on a busy box).
 *
 * Each build has a redis-server of its own (same binary, same settings), so that Redis's own CPU per sale is that
 * process's CPU in the build's rounds (/proc schedstat, nanoseconds: every thread of redis-server), and
 * INFO commandstats deltas give, exactly, the commands per sale (client commands and those Lua runs) and the
 * microseconds Redis timed in them (issue 40: Redis's CPU per sale). AB_SHARED_REDIS=1 puts both on one
 * redis-server again (the older setup; then no Redis figures are printed).
 *
 * Prints one JSON object: per build the CPU ms per sale (service process, /proc) and the same normalised by
 * the sandbox's CPU per sale in that round (the sandbox does identical work for both, so it measures how fast
 * the box is right now); then B/A of the normalised figure per round, its median and a 95 % confidence interval
 * of that median (needs 6 rounds or more), and the same for the raw CPU per sale.
 */
const path = require('node:path');
const autocannon = require('autocannon');
const { cpuSeconds, onCpuMs, syscalls, installCleanup, stopAll } = require('./lib/procs');
const { makeCredentials, startRedis, startSandboxProcess, startTokengate, mintJwt } = require('./lib/services');
const { imageNodeArgsOf } = require('./lib/image');
const { medianCi, round, percentile } = require('./lib/stats');

/** INFO commandstats as { command: { calls, usec } }. */
async function commandstats(client) {
  const out = {};
  for (const line of (await client.info('commandstats')).split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+),/.exec(line.trim());
    if (m) out[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
  }
  return out;
}

/** b - a of two commandstats, per sale; commands whose count did not move are left out. */
function statsPerSale(a, b, sales) {
  const out = {};
  for (const [cmd, v] of Object.entries(b)) {
    const calls = v.calls - (a[cmd]?.calls ?? 0);
    if (calls > 0) out[cmd] = { calls: calls / sales, usec: (v.usec - (a[cmd]?.usec ?? 0)) / sales };
  }
  return out;
}

const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall', 'fcall_ro']);

function fire(url, headers, body, amount, connections, makeKey, overallRate = 0) {
  return new Promise((resolve, reject) => {
    const inst = autocannon({ url, method: 'POST', headers, body, amount, connections, ...(overallRate > 0 ? { overallRate } : {}), timeout: 10,
      requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': makeKey() } }) }] },
    (err, res) => (err ? reject(err) : resolve(res)));
    inst.on('error', () => undefined);
  });
}

async function main() {
  const [a, b] = process.argv.slice(2, 4).map((p) => path.resolve(p));
  const rounds = Number(process.argv[4] ?? 6);
  const perRound = Number(process.argv[5] ?? 3000);
  const rate = Number(process.env.AB_RATE ?? 0);
  if (!a || !b) throw new Error('usage: node bench/ab-sale.js <checkout A> <checkout B> [rounds] [sales per round]');
  installCleanup();
  const creds = makeCredentials();
  const shared = process.env.AB_SHARED_REDIS === '1';
  const redisOf = { A: await startRedis() };
  redisOf.B = shared ? redisOf.A : await startRedis();
  const sandbox = await startSandboxProcess(creds);
  await sandbox.update({ endpointKeys: [{ key: 'benchab', ratePerMinute: 1_000_000, ratePerDay: 100_000_000 }] });
  const fixtures = require('../config/sandbox-fixtures.json').customers;
  const customer = fixtures[0].key;
  const pm = fixtures[0].payment_methods[0].key;
  const body = JSON.stringify({ customer, payment_method: pm, amount: '10.00' });
  const bearer = mintJwt(creds, { sub: 'bench', scope: 'sales:create', custkey: customer });
  const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
  const builds = {};
  const stores = (name) => (process.env[`AB_STORES_${name}`] === 'memory' ? 'memory' : 'redis');
  for (const [name, root] of [['A', a], ['B', b]]) {
    const memory = stores(name) === 'memory';
    builds[name] = await startTokengate(`tokengate-${name}`, creds, {
      root, redisUrl: memory ? undefined : redisOf[name].url, keyPrefix: `bench-ab-${name}`, gatewayBaseUrl: `${sandbox.url}/api/benchab/`,
      extraEnv: { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000', ...(memory ? { NODE_ENV: 'development' } : {}) },
      nodeArgs: (process.env[`AB_NODE_ARGS_${name}`] ?? '').split(' ').filter(Boolean),
    });
  }
  let seq = 0;
  const run = Math.random().toString(36).slice(2, 8);
  const nextKey = () => `ab-${run}-${(seq++).toString(36)}`;
  // Warm each: token cache, JIT. At the run's rate when one is set: a saturated warm-up on a box at load 24 met
  // 503s (Redis answering the budget later than its 1 s limit), which the measured rounds at that rate do not.
  for (const t of Object.values(builds)) {
    const r = await fire(`${t.url}/v1/sales`, headers, body, 1500, 16, nextKey, rate);
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`warm-up: ${r.non2xx} non-2xx, ${r.errors} errors`);
  }
  const per = { A: [], B: [] };
  for (let i = 0; i < rounds; i++) {
    for (const name of i % 2 === 0 ? ['A', 'B'] : ['B', 'A']) {
      const t = builds[name];
      const s0 = cpuSeconds(t.proc.child.pid);
      const g0 = cpuSeconds(sandbox.proc.child.pid);
      const io0 = syscalls(t.proc.child.pid);
      const rd = redisOf[name];
      const rc0 = onCpuMs(rd.proc.child.pid);
      const cs0 = shared ? {} : await commandstats(rd.client);
      const r = await fire(`${t.url}/v1/sales`, headers, body, perRound, 16, nextKey, rate);
      const rc = onCpuMs(rd.proc.child.pid) - rc0;
      const cs = shared ? {} : statsPerSale(cs0, await commandstats(rd.client), perRound);
      const s = cpuSeconds(t.proc.child.pid) - s0;
      const g = cpuSeconds(sandbox.proc.child.pid) - g0;
      const io = syscalls(t.proc.child.pid);
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      per[name].push({ cpu_ms_per_sale: (s * 1000) / perRound, per_sandbox_cpu: s / g, writes_per_sale: (io.writes - io0.writes) / perRound, reads_per_sale: (io.reads - io0.reads) / perRound, p50_ms: r.latency.p50, p99_ms: r.latency.p99,
        // Less the commandstats reads (2 INFO calls: a few usec of 3000 sales).
        redis_cpu_us_per_sale: shared ? NaN : (rc * 1000) / perRound,
        redis_commands: cs });
    }
  }
  const med = (xs) => percentile(xs, 50);
  const ratios = per.A.map((x, i) => per.B[i].per_sandbox_cpu / x.per_sandbox_cpu);
  const rawRatios = per.A.map((x, i) => per.B[i].cpu_ms_per_sale / x.cpu_ms_per_sale);
  const out = {
    A: a, B: b, node_args: { A: process.env.AB_NODE_ARGS_A ?? '', B: process.env.AB_NODE_ARGS_B ?? '' }, stores: { A: stores('A'), B: stores('B') }, image_node_args: { A: imageNodeArgsOf(a).join(' '), B: imageNodeArgsOf(b).join(' ') }, rounds, sales_per_round: perRound, connections: 16, rate_per_s: rate || 'saturation',
    cpu_ms_per_sale: { A: round(med(per.A.map((x) => x.cpu_ms_per_sale)), 3), B: round(med(per.B.map((x) => x.cpu_ms_per_sale)), 3) },
    normalised: { A: round(med(per.A.map((x) => x.per_sandbox_cpu)), 3), B: round(med(per.B.map((x) => x.per_sandbox_cpu)), 3) },
    // System calls per sale (/proc/<pid>/io): exact, whatever the box is doing. A socket write on loopback costs
    // the sender the receiver's TCP work too, so each one is a visible share of a sale's CPU.
    write_syscalls_per_sale: { A: round(med(per.A.map((x) => x.writes_per_sale)), 2), B: round(med(per.B.map((x) => x.writes_per_sale)), 2) },
    read_syscalls_per_sale: { A: round(med(per.A.map((x) => x.reads_per_sale)), 2), B: round(med(per.B.map((x) => x.reads_per_sale)), 2) },
    ...(shared ? {} : redisFigures(per)),
    b_over_a_per_round: ratios.map((x) => round(x, 3)),
    b_over_a_median: round(med(ratios), 3),
    // Where the median ratio lies with 95 % confidence, whatever the rounds' distribution (sign test).
    b_over_a_median_ci95: medianCi(ratios)?.map((x) => round(x, 3)),
    // The same for the raw CPU per sale: steadier than the normalised figure at a fixed rate (AB_RATE), where
    // both builds see the same arrivals and so the same batching per wake-up.
    raw_b_over_a_median: round(med(rawRatios), 3),
    raw_b_over_a_median_ci95: medianCi(rawRatios)?.map((x) => round(x, 3)),
    loadavg: require('node:os').loadavg().map((x) => round(x, 2)),
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  redisOf.A.client.disconnect();
  if (!shared) redisOf.B.client.disconnect();
  await stopAll();
  process.exit(0); // autocannon's agents keep sockets open
}

/**
 * Redis's own figures: CPU us per sale (its process, /proc), the usec commandstats timed in scripts and the
 * commands per sale, client and in scripts, per build (medians over rounds; counts are the same every round but for background work), and B/A of the CPU
 * per round with its median and 95 % CI.
 */
function redisFigures(per) {
  const med = (xs) => percentile(xs, 50);
  const figures = (rounds) => {
    const commands = {};
    for (const cmd of new Set(rounds.flatMap((x) => Object.keys(x.redis_commands)))) {
      commands[cmd] = round(med(rounds.map((x) => x.redis_commands[cmd]?.calls ?? 0)), 3);
    }
    return {
      cpu_us_per_sale: round(med(rounds.map((x) => x.redis_cpu_us_per_sale)), 1),
      // Time Redis measured in the scripts it ran (their inner commands included). Inner commands are counted
      // in commandstats under their own names too, so by_command counts client and script commands together.
      script_usec_per_sale: round(med(rounds.map((x) => Object.entries(x.redis_commands).filter(([c]) => SCRIPT_COMMANDS.has(c)).reduce((n, [, v]) => n + v.usec, 0))), 1),
      scripts_per_sale: round(med(rounds.map((x) => Object.entries(x.redis_commands).filter(([c]) => SCRIPT_COMMANDS.has(c)).reduce((n, [, v]) => n + v.calls, 0))), 2),
      commands_per_sale: round(med(rounds.map((x) => Object.values(x.redis_commands).reduce((n, v) => n + v.calls, 0))), 2),
      by_command: commands,
    };
  };
  const ratios = per.A.map((x, i) => per.B[i].redis_cpu_us_per_sale / x.redis_cpu_us_per_sale);
  return {
    redis: {
      A: figures(per.A), B: figures(per.B),
      cpu_b_over_a_per_round: ratios.map((x) => round(x, 3)),
      cpu_b_over_a_median: round(med(ratios), 3),
      cpu_b_over_a_median_ci95: medianCi(ratios)?.map((x) => round(x, 3)),
    },
  };
}

main().catch(async (err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  await stopAll();
  process.exit(1);
});
