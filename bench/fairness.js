'use strict';
/**
 * Per-caller fairness (issue 30, item 1; contract guarantee 11): one caller looping on unknown sale keys beside
 * normal traffic, with the per-caller share of the read budget and without it (LIMITER_CALLER_SHARE=1), in one
 * run. The budget is the production one scaled ten times faster (45 calls per 6 s, 5 kept for sales), so a
 * looping run of a few windows takes seconds, not minutes.
 *
 * Normal traffic: shoppers reading their cards with the gateway's word (`Cache-Control: no-cache`: a read that
 * really needs the budget, the case a looper could starve) and paying. Reported: the others' p99 wait and
 * refusals, the looper's refusals and the gateway calls it cost.
 */
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { ROOT, sleep } = require('./lib/procs');
const { mintJwt, startTokengate } = require('./lib/services');
const { percentile, round } = require('./lib/stats');

const APPROVED = new Set(['4000100011112224', '4000100111112223', '4000100211112222', '4000200111112221', '371122223332225', '5555444433332226', '6011222233332224']);
const BUDGET = { GATEWAY_RATE_PER_MINUTE: '45', GATEWAY_RATE_WINDOW_MS: '6000', GATEWAY_RATE_MARGIN_MS: '200', GATEWAY_RATE_PER_DAY: '100000', LIMITER_SALE_RESERVED_SLOTS: '5' };
const UNFAIR = { LIMITER_CALLER_SHARE: '1', LIMITER_CALLER_DAY_SHARE: '1' };

function acceptedCalls(stats) {
  return Object.values(stats.endpoints).reduce((n, e) => n + e.accepted, 0);
}

/** A sale key no one made: letters only, so no run of digits is ever taken for a card number. */
function unknownKey() {
  return Array.from({ length: 15 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
}

async function get(url, pathname, token, headers = {}) {
  const t = performance.now();
  const res = await fetch(`${url}${pathname}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t };
}

/** `looping`: whether the looper runs; `fair`: whether the per-caller share is on. */
async function runVariant(ctx, { looping, fair }, shoppers) {
  const { creds, redis, sandbox, opts } = ctx;
  const name = `fairness-${looping ? (fair ? 'share' : 'noshare') : 'baseline'}`;
  const keyPrefix = `${name}-${Date.now().toString(36)}`;
  const tg = await startTokengate(name, creds, { redisUrl: redis.url, keyPrefix, gatewayBaseUrl: sandbox.baseUrl, extraEnv: { ...BUDGET, ...(fair ? {} : UNFAIR) } });
  const looper = mintJwt(creds, { sub: 'fairness-looper', scope: 'customers:any sales:read' });
  const before = acceptedCalls(await sandbox.stats());
  const until = Date.now() + opts.fairnessLoopSec * 1000;
  const looped = {};
  const loop = async () => {
    while (Date.now() < until) {
      const r = await get(tg.url, `/v1/sales/${unknownKey()}`, looper);
      looped[r.status] = (looped[r.status] ?? 0) + 1;
    }
  };
  const reads = [];
  const sales = [];
  const refused = { read: 0, sale: 0 };
  const shop = async (s, n) => {
    const token = mintJwt(creds, { sub: `fairness-shopper-${n}`, custkey: s.key, scope: 'sales:create payment_methods:read' });
    let i = 0;
    await sleep(n * 150);
    while (Date.now() < until) {
      const read = await get(tg.url, `/v1/customers/${s.key}/payment_methods`, token, { 'cache-control': 'no-cache' });
      reads.push(read.ms);
      if (read.status !== 200) refused.read++;
      const t = performance.now();
      const res = await fetch(`${tg.url}/v1/sales`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `${keyPrefix}-${n}-${i++}` },
        body: JSON.stringify({ customer: s.key, payment_method: s.pm, amount: '3.00' }),
      });
      await res.arrayBuffer();
      sales.push(performance.now() - t);
      if (res.status !== 201) refused.sale++;
      await sleep(opts.fairnessThinkMs);
    }
  };
  await Promise.all([...(looping ? [loop(), loop(), loop(), loop()] : []), ...shoppers.map(shop)]);
  const calls = acceptedCalls(await sandbox.stats()) - before;
  await tg.proc.stop();
  return {
    others_reads: reads.length,
    others_read_p50_ms: round(percentile(reads, 50), 1),
    others_read_p99_ms: round(percentile(reads, 99), 1),
    others_read_refused: refused.read,
    others_sales: sales.length,
    others_sale_p99_ms: round(percentile(sales, 99), 1),
    others_sale_refused: refused.sale,
    looper_requests: Object.values(looped).reduce((a, b) => a + b, 0),
    looper_answers: looped,
    gateway_calls: calls,
    upstream_429: (await sandbox.stats()).endpoints.v2?.rateLimited ?? 0,
  };
}

/** The variants against one sandbox (latency 20 ms): `fairness.baseline` (no looper), `.with_share`, `.without_share`. */
async function runFairness(ctx) {
  const { sandbox, log, opts } = ctx;
  const fixtures = JSON.parse(fs.readFileSync(path.join(ROOT, 'config', 'sandbox-fixtures.json'), 'utf8')).customers;
  const shoppers = fixtures
    .map((c) => ({ key: c.key, pm: c.payment_methods.find((m) => APPROVED.has(m.number))?.key }))
    .filter((s) => s.pm)
    .slice(0, opts.fairnessShoppers);
  // The gateway scaled as tokengate's budget is (its X-Rate-Limit counts then mean the same window), sliding.
  const scaled = { latencyMs: 20, jitterMs: 0, ratePerMinute: 45, rateWindowMs: 6000, rateMode: 'sliding' };
  await sandbox.update(scaled);
  try {
    // The same traffic alone, then beside the looper with the share and without it (each on fresh keys).
    const baseline = await runVariant(ctx, { looping: false, fair: true }, shoppers);
    await sandbox.reset();
    await sleep(6500); // the sandbox's window empties between variants
    const withShare = await runVariant(ctx, { looping: true, fair: true }, shoppers);
    await sandbox.reset();
    await sleep(6500);
    const withoutShare = await runVariant(ctx, { looping: true, fair: false }, shoppers);
    for (const [name, r] of [['alone', baseline], ['with the share', withShare], ['without', withoutShare]]) {
      log(`fairness ${name}: others' reads p99 ${r.others_read_p99_ms} ms, refused ${r.others_read_refused}/${r.others_reads}; sales refused ${r.others_sale_refused}/${r.others_sales}; looper ${JSON.stringify(r.looper_answers)}`);
    }
    return {
      budget: '45 calls per 6 s window (production scaled x10), 5 kept for sales',
      loop_s: opts.fairnessLoopSec,
      looping_connections: 4,
      shoppers: shoppers.length,
      baseline,
      with_share: withShare,
      without_share: withoutShare,
    };
  } finally {
    await sandbox.update({ latencyMs: 0, jitterMs: 0, ratePerMinute: 1_000_000, rateWindowMs: 60_000, rateMode: 'fixed' });
    await sandbox.reset();
  }
}

module.exports = { runFairness };
