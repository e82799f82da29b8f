'use strict';
/**
 * On-CPU profile of tokengate's sale path (issue 40, item 1): `perf record` on the service process while the
 * cached-token sale runs saturated, after a warm-up long enough that the JIT has settled. Unlike `--cpu-prof`
 * (which samples the main thread's wall time, so a socket write that yields the core to Redis or the sandbox
 * reads as the write's cost) perf samples only what ran: kernel, V8's builtins, the JIT's code (named through
 * --perf-basic-prof), GC.
 *
 *   node bench/perf-sale.js [checkout=.] [seconds=10] [out=/tmp/tokengate.perf.data]
 *   perf report -i <out> --no-children --sort dso,sym -g none
 */
const path = require('node:path');
const { spawn } = require('node:child_process');
const autocannon = require('autocannon');
const { installCleanup, stopAll } = require('./lib/procs');
const { makeCredentials, startRedis, startSandboxProcess, startTokengate, mintJwt } = require('./lib/services');

function fire(url, headers, body, opts, makeKey) {
  return new Promise((resolve, reject) => {
    const inst = autocannon({ url, method: 'POST', headers, body, connections: 16, timeout: 10, ...opts,
      requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': makeKey() } }) }] },
    (err, res) => (err ? reject(err) : resolve(res)));
    inst.on('error', () => undefined);
  });
}

async function main() {
  const root = path.resolve(process.argv[2] ?? '.');
  const seconds = Number(process.argv[3] ?? 10);
  const out = process.argv[4] ?? '/tmp/tokengate.perf.data';
  installCleanup();
  const creds = makeCredentials();
  const redis = await startRedis();
  const sandbox = await startSandboxProcess(creds);
  await sandbox.update({ endpointKeys: [{ key: 'benchperf', ratePerMinute: 1_000_000, ratePerDay: 100_000_000 }] });
  const fixtures = require('../config/sandbox-fixtures.json').customers;
  const customer = fixtures[0].key;
  const body = JSON.stringify({ customer, payment_method: fixtures[0].payment_methods[0].key, amount: '10.00' });
  const bearer = mintJwt(creds, { sub: 'bench', scope: 'sales:create', custkey: customer });
  const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
  const t = await startTokengate('tokengate', creds, {
    root, redisUrl: redis.url, keyPrefix: 'bench-perf', gatewayBaseUrl: `${sandbox.url}/api/benchperf/`,
    extraEnv: { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000' }, nodeArgs: ['--perf-basic-prof-only-functions'],
  });
  let seq = 0;
  const run = Math.random().toString(36).slice(2, 8);
  const nextKey = () => `perf-${run}-${(seq++).toString(36)}`;
  await fire(`${t.url}/v1/sales`, headers, body, { amount: 6000 }, nextKey);
  const perf = spawn('perf', ['record', '-F', '997', '-g', '-p', String(t.proc.child.pid), '-o', out, '--', 'sleep', String(seconds)], { stdio: 'inherit' });
  const perfDone = new Promise((r) => perf.on('exit', r));
  const res = await fire(`${t.url}/v1/sales`, headers, body, { duration: seconds + 2 }, nextKey);
  await perfDone;
  process.stdout.write(`${JSON.stringify({ sales_per_s: Math.round(res.requests.average), non2xx: res.non2xx, out })}\n`);
  redis.client.disconnect();
  await stopAll();
  process.exit(0);
}

main().catch(async (err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  await stopAll();
  process.exit(1);
});
