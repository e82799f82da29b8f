'use strict';
/**
 * Correctness side by side (issue 15, item 1): tokengate and the fair peer (bench/peer-bff.js) through the same
 * scenarios against the same sandbox, judged by the sandbox's ledger and counters:
 *   double charges  sales whose gateway answer is lost after it charged (a hang after processing, the BFF
 *                   times out), then retried once with the same Idempotency-Key, as a client does after an
 *                   error: how many invoices were charged twice;
 *   upstream 429s   a burst of sales against a gateway allowing N per window (sliding), each BFF configured
 *                   with the same N per window: how many calls the gateway refused;
 *   card data       a sale whose invoice is a card number: accepted (2xx) or refused.
 */
const { startTokengate, startPeer, mintJwt } = require('./lib/services');
const { sleep } = require('./lib/procs');

const TIMEOUT_MS = 800;

async function post(url, bearer, key, body) {
  try {
    const res = await fetch(`${url}/v1/sales`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: globalThis.AbortSignal.timeout(40_000),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

async function scenario(ctx, kind, start) {
  const { sandbox, opts, log } = ctx;
  const fixtures = require('../config/sandbox-fixtures.json').customers;
  const customer = fixtures[0].key;
  const pm = fixtures[0].payment_methods[0].key;
  const bearer = mintJwt(ctx.creds, { sub: `bench-correct-${kind}`, scope: 'sales:create', custkey: customer });
  const run = `${kind}-${Date.now().toString(36)}`;
  const sale = (i, extra = {}) => ({ customer, payment_method: pm, amount: `${1 + (i % 9)}.${String(i % 100).padStart(2, '0')}`, invoice: `c-${run}-${i}`, ...extra });

  const addKey = async (key, ratePerMinute) => sandbox.update({ endpointKeys: [...(await sandbox.settings()).endpointKeys.filter((e) => e.key !== key), { key, ratePerMinute, ratePerDay: 100_000_000 }] });

  // 1. Answers lost after the gateway charged, then one retry per key.
  await addKey(`bc${kind.slice(0, 4)}a`, 1_000_000);
  const svc = await start({ endpointKey: `bc${kind.slice(0, 4)}a`, rate: 1_000_000, windowMs: 60_000 });
  const warmed = await post(svc.url, bearer, `${run}-warm`, sale(9999));
  if (warmed !== 201) throw new Error(`${kind} warm-up sale answered ${warmed}`);
  const n = opts.correctnessSales;
  await sandbox.fault({ kind: 'hang', match: 'sale', when: 'after', count: n });
  const first = await Promise.all(Array.from({ length: n }, (_, i) => post(svc.url, bearer, `${run}-k${i}`, sale(i))));
  await sandbox.clearFaults();
  await sleep(1000);
  const retried = await Promise.all(Array.from({ length: n }, (_, i) => post(svc.url, bearer, `${run}-k${i}`, sale(i))));
  const ledger = await sandbox.transactions();
  let doubles = 0;
  let charged = 0;
  for (let i = 0; i < n; i++) {
    const c = ledger.filter((t) => t.invoice === `c-${run}-${i}` && (t.result_code === 'A' || t.result_code === 'P')).length;
    charged += c > 0 ? 1 : 0;
    if (c > 1) doubles += c - 1;
  }

  // 3. A card number as the invoice.
  const cardInvoice = await post(svc.url, bearer, `${run}-card`, sale(5000, { invoice: '4000 1000 1111 2224' }));
  await svc.proc.stop();

  // 2. A burst against a gateway allowing N per window.
  const key = `bc${kind.slice(0, 4)}b`;
  await addKey(key, opts.correctnessLimit);
  const limited = await start({ endpointKey: key, rate: opts.correctnessLimit, windowMs: opts.correctnessWindowMs });
  const before = (await sandbox.stats()).endpoints[key]?.rateLimited ?? 0;
  await post(limited.url, bearer, `${run}-bwarm`, sale(7777)); // token cached: the burst is sales only
  await sleep(opts.correctnessWindowMs + 300);
  const burst = await Promise.all(Array.from({ length: opts.correctnessBurst }, (_, i) => post(limited.url, bearer, `${run}-b${i}`, sale(8000 + i))));
  const upstream429 = ((await sandbox.stats()).endpoints[key]?.rateLimited ?? 0) - before;
  await limited.proc.stop();

  const count = (xs) => xs.reduce((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {});
  const out = {
    double_charges: doubles,
    keys_charged: charged,
    first_answers: count(first),
    retry_answers: count(retried),
    upstream_429: upstream429,
    burst_answers: count(burst),
    card_data_accepted: cardInvoice >= 200 && cardInvoice < 300,
    card_invoice_status: cardInvoice,
  };
  log(`correctness ${kind}: double charges ${doubles} of ${n} keys, upstream 429s ${upstream429} in a burst of ${opts.correctnessBurst}, card invoice ${cardInvoice}`);
  return out;
}

async function runCorrectness(ctx) {
  const { creds, redis, sandbox, opts } = ctx;
  const saved = await sandbox.settings();
  await sandbox.update({ rateMode: 'sliding', rateWindowMs: opts.correctnessWindowMs });
  try {
    const tokengate = await scenario(ctx, 'tokengate', ({ endpointKey, rate, windowMs }) => startTokengate(`tokengate-correct-${endpointKey}`, creds, {
      redisUrl: redis.url,
      keyPrefix: `bench-correct-${endpointKey}-${Date.now().toString(36)}`,
      gatewayBaseUrl: `${sandbox.url}/api/${endpointKey}/`,
      extraEnv: {
        GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
        GATEWAY_RATE_PER_MINUTE: String(rate),
        GATEWAY_RATE_WINDOW_MS: String(windowMs),
        GATEWAY_RATE_MARGIN_MS: '200',
        GATEWAY_RATE_PER_DAY: '100000000',
        LIMITER_SALE_RESERVED_SLOTS: '1',
      },
    }));
    const peer = await scenario(ctx, 'peer', ({ endpointKey, rate, windowMs }) => startPeer(creds, {
      redisUrl: redis.url,
      keyPrefix: `bench-correct-${endpointKey}-${Date.now().toString(36)}`,
      baseUrl: `${sandbox.url}/api/${endpointKey}/`,
      ratePerWindow: rate,
      windowMs,
      timeoutMs: TIMEOUT_MS,
    }));
    return {
      setup: { sales_with_lost_answers: opts.correctnessSales, gateway_timeout_ms: TIMEOUT_MS, burst: opts.correctnessBurst, limit_per_window: opts.correctnessLimit, window_ms: opts.correctnessWindowMs, sandbox_mode: 'sliding' },
      tokengate,
      peer,
    };
  } finally {
    await sandbox.update({ rateMode: saved.rateMode, rateWindowMs: saved.rateWindowMs, endpointKeys: saved.endpointKeys });
  }
}

module.exports = { runCorrectness };
