'use strict';
/**
 * One cached-token sale, every Redis command it sends printed in order (MONITOR): client commands and, indented,
 * the commands its Lua scripts run. For finding what a change adds to the sale path.
 *
 *   node bench/trace-sale.js [sales=1]          (`npm run build` first)
 *   TRACE_ROOT=<checkout> node bench/trace-sale.js   another build's sale (e.g. a worktree of an older commit, built)
 */
const { installCleanup, stopAll } = require('./lib/procs');
const { makeCredentials, startRedis, startSandboxProcess, startTokengate, mintJwt } = require('./lib/services');

async function main() {
  const n = Number(process.argv[2] ?? 1);
  installCleanup();
  const creds = makeCredentials();
  const redis = await startRedis();
  const sandbox = await startSandboxProcess(creds);
  await sandbox.update({ endpointKeys: [{ key: 'benchtrace', ratePerMinute: 1_000_000, ratePerDay: 100_000_000 }] });
  const t = await startTokengate('tokengate', creds, {
    root: process.env.TRACE_ROOT ? require('node:path').resolve(process.env.TRACE_ROOT) : undefined, redisUrl: redis.url, keyPrefix: 'trace', gatewayBaseUrl: `${sandbox.url}/api/benchtrace/`,
    extraEnv: { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000' },
  });
  const fixtures = require('../config/sandbox-fixtures.json').customers;
  const customer = fixtures[0].key;
  const body = JSON.stringify({ customer, payment_method: fixtures[0].payment_methods[0].key, amount: '10.00' });
  const bearer = mintJwt(creds, { sub: 'bench', scope: 'sales:create', custkey: customer });
  const sale = async (key) => {
    const res = await fetch(`${t.url}/v1/sales`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': key }, body });
    await res.arrayBuffer();
    return res.status;
  };
  await sale('warm-1');
  await sale('warm-2');
  await new Promise((r) => setTimeout(r, 300));
  const monitor = await redis.client.duplicate().monitor();
  const lines = [];
  monitor.on('monitor', (time, args, source) => {
    const shown = args.map((a) => (String(a).length > 60 ? String(a).slice(0, 57) + '...' : String(a))).join(' ');
    lines.push(`${source === 'lua' ? '    ' : ''}${time} ${shown}`);
  });
  await new Promise((r) => setTimeout(r, 100));
  for (let i = 0; i < n; i++) lines.push(`--- sale ${i}: ${await sale(`traced-${i}`)}`);
  await new Promise((r) => setTimeout(r, 300));
  monitor.disconnect();
  console.log(lines.join('\n'));
  redis.client.disconnect();
  await stopAll();
  process.exit(0); // the MONITOR connection and undici's keep-alive sockets would hold the process open
}

main().catch(async (err) => { console.error(err); await stopAll(); process.exit(1); });
