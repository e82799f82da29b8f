'use strict';
/**
 * Where the passthrough's CPU floor lies for a BFF that must read the body (issue 15): CPU per request of
 * bench/reading-proxy.js (express.json(), one undici call, the answer parsed and re-sent) against the naive
 * passthrough (bench/naive-proxy.js, which streams), same sandbox, same gateway call, rounds alternating.
 *
 *   node bench/floor.js [rounds=8] [requests per round=2500]
 *
 * Prints one JSON object: CPU ms per request of each (service process, /proc) per round, the reading/naive
 * ratio per round, its median and a 95 % confidence interval of that median.
 */
const autocannon = require('autocannon');
const { cpuSeconds, installCleanup, stopAll } = require('./lib/procs');
const { makeCredentials, startSandboxProcess, startNaiveProxy, startReadingProxy } = require('./lib/services');
const { medianCi, round, percentile } = require('./lib/stats');
const { authorizationHeader } = require('../dist/gateway/signer');

function fire(url, body, amount) {
  return new Promise((resolve, reject) => {
    const inst = autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body, amount, connections: 16, timeout: 10 },
      (err, res) => (err ? reject(err) : resolve(res)));
    inst.on('error', () => undefined);
  });
}

async function main() {
  const rounds = Number(process.argv[2] ?? 8);
  const perRound = Number(process.argv[3] ?? 2500);
  installCleanup();
  const creds = makeCredentials();
  const sandbox = await startSandboxProcess(creds);
  const fixtures = require('../config/sandbox-fixtures.json').customers;
  const customer = fixtures[0].key;
  const pm = fixtures[0].payment_methods[0].key;
  const auth = authorizationHeader(creds.apiKey, 'bench-static-seed-0001', creds.apiPin);
  const tokenRes = await fetch(`${sandbox.baseUrl}customers/${customer}/payment_methods/${pm}/cardref`, { headers: { authorization: auth } });
  if (!tokenRes.ok) throw new Error(`cardref: ${tokenRes.status}`);
  const { cardref } = await tokenRes.json();

  const naive = await startNaiveProxy(sandbox.url, auth);
  const reading = await startReadingProxy(sandbox.url, auth, cardref);

  const targets = {
    naive: { url: `${naive.url}/v1/sales`, pid: naive.proc.child.pid, body: JSON.stringify({ command: 'cc:sale', amount: '10.00', UMCardRef: cardref }) },
    reading: { url: `${reading.url}/v1/sales`, pid: reading.proc.child.pid, body: JSON.stringify({ customer, payment_method: pm, amount: '10.00' }) },
  };
  for (const [name, t] of Object.entries(targets)) {
    const r = await fire(t.url, t.body, 1500); // warm-up: JIT, keep-alive pools
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name} warm-up: ${r.non2xx} non-2xx, ${r.errors} errors`);
  }
  const per = { naive: [], reading: [] };
  const ratios = [];
  for (let i = 0; i < rounds; i++) {
    const got = {};
    for (const name of i % 2 === 0 ? ['naive', 'reading'] : ['reading', 'naive']) {
      const t = targets[name];
      const c0 = cpuSeconds(t.pid);
      const r = await fire(t.url, t.body, perRound);
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      got[name] = ((cpuSeconds(t.pid) - c0) * 1000) / r.requests.total;
      per[name].push(round(got[name], 3));
    }
    ratios.push(got.reading / got.naive);
  }
  process.stdout.write(`${JSON.stringify({
    rounds, requests_per_round: perRound, connections: 16,
    cpu_ms_per_request: per,
    reading_over_naive_per_round: ratios.map((x) => round(x, 3)),
    reading_over_naive_median: round(percentile(ratios, 50), 3),
    // Where the median ratio lies with 95 % confidence, whatever the rounds' distribution (sign test).
    reading_over_naive_median_ci95: medianCi(ratios)?.map((x) => round(x, 3)),
  }, null, 2)}\n`);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => stopAll().then(() => process.exit()));
