'use strict';
/**
 * Redis commands per cached-token sale, per build: INFO commandstats around a saturated run (16 connections), the
 * client's commands and those its scripts run. Shows whether a change shares commands between sales (issue 40,
 * item 1: the batch index and the event append of one turn's sales), which trace-sale.js (one sale) cannot.
 *
 *   node bench/commands-per-sale.js <checkout A> <checkout B> [sales=3000]     (each checkout built)
 *   RATE=<sales/s> sends at that fixed rate instead.
 */
const path = require('node:path');
const autocannon = require('autocannon');
const { installCleanup, stopAll } = require('./lib/procs');
const { makeCredentials, startRedis, startSandboxProcess, startTokengate, mintJwt } = require('./lib/services');

const stats = async (c) => Object.fromEntries((await c.info('commandstats')).split('\n').filter((l) => l.startsWith('cmdstat_'))
  .map((l) => [l.split(':')[0].slice(8), Number(/calls=(\d+)/.exec(l)[1])]));

async function main() {
  const roots = process.argv.slice(2, 4).map((p) => path.resolve(p));
  const n = Number(process.argv[4] ?? 3000);
  if (roots.length < 2) throw new Error('usage: node bench/commands-per-sale.js <checkout A> <checkout B> [sales]');
  installCleanup();
  const creds = makeCredentials();
  const redis = await startRedis();
  const sandbox = await startSandboxProcess(creds);
  await sandbox.update({ endpointKeys: [{ key: 'benchab', ratePerMinute: 1_000_000, ratePerDay: 100_000_000 }] });
  const fx = require('../config/sandbox-fixtures.json').customers;
  const body = JSON.stringify({ customer: fx[0].key, payment_method: fx[0].payment_methods[0].key, amount: '10.00' });
  const headers = { authorization: `Bearer ${mintJwt(creds, { sub: 'bench', scope: 'sales:create', custkey: fx[0].key })}`, 'content-type': 'application/json' };
  const run = Math.random().toString(36).slice(2, 8);
  let seq = 0;
  const out = {};
  for (const [name, root] of [['A', roots[0]], ['B', roots[1]]]) {
    const t = await startTokengate(`tokengate-${name}`, creds, { root, redisUrl: redis.url, keyPrefix: `bench-cps-${name}`, gatewayBaseUrl: `${sandbox.url}/api/benchab/`, extraEnv: { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000' } });
    const fire = (amount) => new Promise((resolve, reject) => autocannon({ url: `${t.url}/v1/sales`, method: 'POST', headers, body, amount, connections: 16, ...(process.env.RATE ? { overallRate: Number(process.env.RATE) } : {}),
      requests: [{ setupRequest: (r) => ({ ...r, headers: { ...r.headers, 'idempotency-key': `cps-${run}-${name}-${seq++}` } }) }] }, (e, r) => (e ? reject(e) : resolve(r))));
    await fire(1000); // warm-up: token cache, JIT
    const s0 = await stats(redis.client);
    const r = await fire(n);
    const s1 = await stats(redis.client);
    const per = Object.fromEntries(Object.keys(s1).filter((k) => k !== 'info').map((k) => [k, +((s1[k] - (s0[k] ?? 0)) / n).toFixed(3)]).filter(([, v]) => v > 0.001));
    out[name] = { root, rps: r.requests.average, non2xx: r.non2xx, per_sale: per, total: +Object.values(per).reduce((a, b) => a + b, 0).toFixed(2) };
  }
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  redis.client.disconnect();
  await stopAll();
  process.exit(0);
}

main().catch(async (err) => { process.stderr.write(`${err.stack ?? err}\n`); await stopAll(); process.exit(1); });
