'use strict';
/**
 * Cache (issue 6): N concurrent sales on one uncached payment method, spread over 3 tokengate replicas on one
 * Redis with a fresh key prefix; how many cardref calls reach the sandbox (target: 1).
 */
const { performance } = require('node:perf_hooks');
const { startTokengate, mintJwt, sumMetric } = require('./lib/services');

async function runCache(ctx) {
  const { creds, redis, sandbox, log } = ctx;
  const n = ctx.opts.cacheSales;
  const fixtures = require('../config/sandbox-fixtures.json').customers;
  const customer = fixtures[2].key;
  const pm = fixtures[2].payment_methods[0].key; // 4000100211112222: approved, not used by the other phases
  const prefix = `bench-cache-${Date.now().toString(36)}`;
  const replicas = await Promise.all(
    [1, 2, 3].map((i) =>
      startTokengate(`tokengate-cache-${i}`, creds, {
        redisUrl: redis.url,
        keyPrefix: prefix,
        gatewayBaseUrl: sandbox.baseUrl,
        extraEnv: { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000' },
      }),
    ),
  );
  try {
    await sandbox.reset();
    const bearer = mintJwt(creds, { sub: 'bench-cache', scope: 'sales:create', custkey: customer });
    const body = JSON.stringify({ customer, payment_method: pm, amount: '3.00' });
    const runId = Math.random().toString(36).slice(2, 8);
    const t0 = performance.now();
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        fetch(`${replicas[i % 3].url}/v1/sales`, {
          method: 'POST',
          headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': `bench-cache-${runId}-${i}` },
          body,
        }).then(async (r) => ({ status: r.status, body: await r.text() })),
      ),
    );
    const wallMs = performance.now() - t0;
    const statuses = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    const stats = await sandbox.stats();
    const v2 = stats.endpoints.v2 ?? { accepted: 0, calls: 0 };
    // The sandbox keeps no per-route count: cardref calls = accepted calls − sale calls (processed + E answers).
    const saleCalls = stats.sales.processed + stats.sales.errors;
    const fromSandbox = v2.accepted - saleCalls;
    let fromMetrics = 0;
    let misses = 0;
    for (const r of replicas) {
      const text = await (await fetch(`${r.adminUrl}/metrics`)).text();
      fromMetrics += sumMetric(text, 'tokengate_upstream_calls_total', { operation: 'cardref' });
      misses += sumMetric(text, 'tokengate_token_cache_lookups_total', { result: 'miss' });
    }
    log(`cache: ${n} concurrent sales over 3 replicas -> ${fromSandbox} cardref calls at the sandbox (metrics say ${fromMetrics}), answers ${JSON.stringify(statuses)}`);
    return {
      concurrent_misses: n,
      upstream_calls: fromSandbox,
      upstream_calls_from_metrics: fromMetrics,
      cache_miss_lookups: misses,
      replicas: 3,
      answers: statuses,
      sandbox_sale_calls: saleCalls,
      sandbox_accepted_calls: v2.accepted,
      wall_ms: Math.round(wallMs),
      counting: 'sandbox accepted calls on v2 minus sale calls (processed + errors); cross-checked with tokengate_upstream_calls_total{operation="cardref"} summed over the replicas',
    };
  } finally {
    await Promise.all(replicas.map((r) => r.proc.stop()));
  }
}

module.exports = { runCache };
