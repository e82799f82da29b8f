'use strict';
/**
 * Is the overhead phase's "saturated" throughput saturated? (issue 40, item 1.) bench/run.js measures tokengate
 * and the passthrough at one concurrency (32 connections). A closed loop's throughput is connections / latency:
 * while a target's processes leave the machine's cores idle, more connections would carry more, and the figure
 * is its latency at 32, not its capacity. This sweeps the concurrency, interleaving tokengate and the
 * passthrough at each level in every round, and prints per run the req/s, latency and CPU of every process, so
 * the peak of each (its capacity on this machine) and the ratio at each level come from one run.
 *
 *   node bench/saturation.js [connections=16,32,64,128] [rounds=3] [seconds=6] [out.json]
 */
const { installCleanup, stopAll } = require('./lib/procs');
const { makeCredentials, startRedis, startSandboxProcess, startTokengate, startNaiveProxy, mintJwt } = require('./lib/services');
const { runCannon, summarise, cpuSnapshot, cpuDelta, OVERHEAD_ENDPOINT_KEY } = require('./overhead');
const { authorizationHeader } = require('../dist/gateway/signer');
const { median, round } = require('./lib/stats');

async function main() {
  const levels = (process.argv[2] ?? '16,32,64,128').split(',').map(Number);
  const rounds = Number(process.argv[3] ?? 3);
  const seconds = Number(process.argv[4] ?? 6);
  const outFile = process.argv[5];
  installCleanup();
  const creds = makeCredentials();
  const redis = await startRedis();
  const sandbox = await startSandboxProcess(creds);
  const fixtures = require('../config/sandbox-fixtures.json').customers;
  const customer = fixtures[0].key;
  const pm = fixtures[0].payment_methods[0].key;
  const staticAuth = authorizationHeader(creds.apiKey, 'bench-static-seed-0001', creds.apiPin);
  const { cardref } = await (await fetch(`${sandbox.baseUrl}customers/${customer}/payment_methods/${pm}/cardref`, { headers: { authorization: staticAuth } })).json();
  await sandbox.update({ endpointKeys: [{ key: OVERHEAD_ENDPOINT_KEY, ratePerMinute: 1_000_000, ratePerDay: 100_000_000 }] });
  const tg = await startTokengate('tokengate', creds, {
    redisUrl: redis.url, keyPrefix: `bench-sat-${Date.now().toString(36)}`, gatewayBaseUrl: `${sandbox.url}/api/${OVERHEAD_ENDPOINT_KEY}/`,
    extraEnv: { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000' },
  });
  const naive = await startNaiveProxy(sandbox.url, staticAuth);
  const bearer = mintJwt(creds, { sub: 'bench', scope: 'sales:create', custkey: customer });
  const targets = {
    tokengate: { url: `${tg.url}/v1/sales`, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify({ customer, payment_method: pm, amount: '10.00' }), pid: tg.proc.child.pid },
    naive: { url: `${naive.url}/v1/sales`, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ command: 'cc:sale', amount: '10.00', UMCardRef: cardref }), pid: naive.proc.child.pid },
  };
  let seq = 0;
  const runId = Math.random().toString(36).slice(2, 8);
  const nextKey = () => `sat-${runId}-k${(seq++).toString(36)}`;
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    for (const connections of levels) {
      for (const name of r % 2 === 0 ? ['tokengate', 'naive'] : ['naive', 'tokengate']) {
        const t = targets[name];
        const base = { url: t.url, method: 'POST', headers: t.headers, body: t.body, connections, timeout: 10 };
        await runCannon({ ...base, duration: 2 }, nextKey);
        const pids = { service: t.pid, sandbox: sandbox.proc.child.pid, redis: redis.proc.child.pid };
        const before = cpuSnapshot(pids);
        const s = summarise(await runCannon({ ...base, duration: seconds }, nextKey));
        s.cpu_s = cpuDelta(before, cpuSnapshot(pids));
        s.machine_busy = round(Object.values(s.cpu_s).reduce((a, b) => a + b, 0) / (seconds * 2), 3);
        s.load_average_1m = round(require('node:os').loadavg()[0], 2);
        runs.push({ round: r + 1, connections, target: name, ...s });
        process.stderr.write(`round ${r + 1} c=${connections} ${name}: ${s.rps} req/s p50 ${s.p50_ms} p99 ${s.p99_ms} non2xx ${s.non2xx} cpu ${JSON.stringify(s.cpu_s)} busy ${s.machine_busy}\n`);
      }
    }
  }
  const byLevel = levels.map((connections) => {
    const of = (name) => runs.filter((x) => x.connections === connections && x.target === name);
    const ratios = [];
    for (let r = 1; r <= rounds; r++) {
      const t = runs.find((x) => x.round === r && x.connections === connections && x.target === 'tokengate');
      const n = runs.find((x) => x.round === r && x.connections === connections && x.target === 'naive');
      ratios.push(round(t.rps / n.rps, 3));
    }
    return {
      connections,
      tokengate_rps_median: median(of('tokengate').map((x) => x.rps)), naive_rps_median: median(of('naive').map((x) => x.rps)),
      tokengate_p99_ms_median: median(of('tokengate').map((x) => x.p99_ms)), naive_p99_ms_median: median(of('naive').map((x) => x.p99_ms)),
      tokengate_busy_median: median(of('tokengate').map((x) => x.machine_busy)), naive_busy_median: median(of('naive').map((x) => x.machine_busy)),
      ratio_per_round: ratios, ratio_median: median(ratios),
    };
  });
  const peak = (name) => Math.max(...byLevel.map((l) => l[`${name}_rps_median`]));
  const out = { levels: byLevel, peak: { tokengate: peak('tokengate'), naive: peak('naive'), ratio: round(peak('tokengate') / peak('naive'), 3) }, rounds, seconds, runs };
  process.stdout.write(`${JSON.stringify({ levels: byLevel, peak: out.peak }, null, 2)}\n`);
  if (outFile) require('node:fs').writeFileSync(outFile, `${JSON.stringify(out, null, 2)}\n`);
  redis.client.disconnect();
  await stopAll();
  process.exit(0);
}

main().catch(async (err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  await stopAll();
  process.exit(1);
});
