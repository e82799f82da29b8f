'use strict';
/**
 * The merchant's journey (issue 25, item 7): what the gateway's budget buys in checkouts, with tokengate's view
 * and without it, in one run against one sandbox answering in 100 ms.
 *
 * Returning shoppers (8 x 5 visits, two production replicas, visits alternating between them): open the
 * checkout page (list the customer's cards), pay with a stored card, read the sale on the confirmation page.
 * Then the rest of a merchant's day, counted per operation: shoppers paying with a new card and keeping it,
 * back-office refunds. "Without the view" is the same tokengate with every page read asking for the gateway's
 * word (`Cache-Control: no-cache`), which is what it did before the view: one gateway call per page.
 *
 * Gateway calls are counted by the sandbox (accepted calls), never by tokengate.
 */
const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const path = require('node:path');
const { ROOT } = require('./lib/procs');
const { mintJwt, startTokengate } = require('./lib/services');
const { percentile, round } = require('./lib/stats');

/** The sandbox's test cards that approve in full (gateway-facts.md, Sandbox test cards). */
const APPROVED = new Set(['4000100011112224', '4000100111112223', '4000100211112222', '4000200111112221', '371122223332225', '5555444433332226', '6011222233332224']);
const NEW_CARD = '4000100011112224';
/**
 * A budget no journey reaches: calls are counted, never queued, and a checkout's cost at 45/min is derived. No
 * settlement looks while the checkouts are counted (the settlement's calls are measured on their own, below).
 */
const UNLIMITED = { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000', SETTLEMENTS_LOOK_MS: '0' };
/** The settlement's day (issue 39): a batch of this many lines, the budget it is judged against. */
const SETTLEMENT_DAY = { sales: 1000, budget: 5000, looksPerDay: 24 };

function acceptedCalls(stats) {
  return Object.values(stats.endpoints).reduce((n, e) => n + e.accepted, 0);
}

async function call(url, method, path, token, { body, key, fresh } = {}) {
  const headers = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (key) headers['idempotency-key'] = key;
  if (fresh) headers['cache-control'] = 'no-cache';
  const t = performance.now();
  const res = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const ms = performance.now() - t;
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, ms, cacheStatus: res.headers.get('cache-status') };
}

/** The sandbox mints a payment key as its Pay.js iframe would (the card never reaches tokengate). */
async function mintPaymentKey(sandboxUrl, publicKey) {
  const res = await fetch(`${sandboxUrl}/js/v2/payment_key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ public_key: publicKey, card: { number: NEW_CARD, expiration: '1230', cvc: '123' } }),
  });
  const body = await res.json();
  if (res.status !== 200 || !body.payment_key) throw new Error(`journey: payment key not minted (${res.status})`);
  return body.payment_key;
}

/** One variant: fresh replicas and key prefix, the returning shoppers' phase, then the rest of the day. */
async function runVariant(ctx, variant, shoppers) {
  const { creds, redis, sandbox, log, opts } = ctx;
  const fresh = variant === 'without_view';
  const keyPrefix = `journey-${variant}-${Date.now().toString(36)}`;
  const replicas = [];
  for (let i = 0; i < 2; i++) {
    replicas.push(await startTokengate(`journey-${variant}-${i}`, creds, { redisUrl: redis.url, keyPrefix, gatewayBaseUrl: sandbox.baseUrl, extraEnv: UNLIMITED }));
  }
  const back = mintJwt(creds, { sub: 'journey-backoffice', scope: 'customers:any sales:read refunds:create' });
  const tokens = shoppers.map((s) => mintJwt(creds, {
    sub: `journey-${s.key}`, custkey: s.key, scope: 'sales:create sales:read payment_methods:read payment_methods:write',
  }));
  const at = (i) => replicas[i % replicas.length].url;
  // Latencies of the warm round (the goal's "warm checkout page load"); the first round's are kept apart.
  const latencies = { cold: { page: [], confirmation: [] }, warm: { page: [], confirmation: [] } };
  const statuses = {};
  const count = (label, res) => {
    const k = `${label} ${res.status}`;
    statuses[k] = (statuses[k] ?? 0) + 1;
  };

  // Phase 1: returning shoppers (the measurement), gateway calls counted over it alone; then the same
  // shoppers come back once more (steady state: their views warm), counted apart.
  const sales = [];
  const round1 = async (first, visits, { page, confirmation }) => {
    const before = acceptedCalls(await sandbox.stats());
    let checkouts = 0;
    await Promise.all(shoppers.map(async (s, n) => {
      for (let v = first; v < first + visits; v++) {
        const url = at(n + v);
        const list = await call(url, 'GET', `/v1/customers/${s.key}/payment_methods`, tokens[n], { fresh });
        count('page', list);
        page.push(list.ms);
        const paid = await call(url, 'POST', '/v1/sales', tokens[n], { body: { customer: s.key, payment_method: s.pm, amount: `${10 + v}.${String(n).padStart(2, '0')}` }, key: `${keyPrefix}-${n}-${v}` });
        count('pay', paid);
        if (paid.status !== 201) continue;
        checkouts++;
        sales.push(paid.body.key);
        const read = await call(at(n + v + 1), 'GET', `/v1/sales/${paid.body.key}`, tokens[n], { fresh });
        count('confirmation', read);
        confirmation.push(read.ms);
      }
    }));
    return { checkouts, calls: acceptedCalls(await sandbox.stats()) - before };
  };
  const { checkouts, calls: journeyCalls } = await round1(0, opts.journeyVisits, latencies.cold);
  const warm = await round1(opts.journeyVisits, opts.journeyVisits, latencies.warm);
  const { page, confirmation } = latencies.warm;

  // Phase 2: the rest of the day, each operation's calls counted on its own.
  const extra = {};
  const measure = async (name, fn) => {
    const b = acceptedCalls(await sandbox.stats());
    const n = await fn();
    extra[name] = { operations: n, gateway_calls: acceptedCalls(await sandbox.stats()) - b };
  };
  await measure('pay_with_new_card_and_keep_it', async () => {
    let n = 0;
    for (const [i, s] of shoppers.slice(0, 4).entries()) {
      const config = await call(at(i), 'GET', '/v1/payment-config', tokens[i]);
      if (config.status !== 200) throw new Error(`journey: payment-config answered ${config.status} ${JSON.stringify(config.body)}; answers so far ${JSON.stringify(statuses)}`);
      const paymentKey = await mintPaymentKey(sandbox.url, config.body.public_key);
      const paid = await call(at(i), 'POST', '/v1/sales', tokens[i], { body: { customer: s.key, payment_key: paymentKey, save_payment_method: true, amount: '21.00' }, key: `${keyPrefix}-new-${i}` });
      count('pay with a new card', paid);
      if (paid.status === 201) n++;
    }
    return n;
  });
  await measure('back_office_refund', async () => {
    let n = 0;
    for (const [i, key] of sales.filter((_, i) => i % 5 === 0).entries()) {
      const refund = await call(at(i), 'POST', `/v1/sales/${key}/refunds`, back, { body: { amount: '1.00' }, key: `${keyPrefix}-refund-${i}` });
      count('refund', refund);
      if (refund.status === 201) n++;
    }
    return n;
  });

  const settlement = variant === 'with_view' ? await measureSettlement(ctx, keyPrefix, sales.length) : undefined;
  await Promise.all(replicas.map((r) => r.proc.stop()));
  const callsPerCheckout = checkouts > 0 ? journeyCalls / checkouts : Infinity;
  const result = {
    shoppers: shoppers.length,
    visits_per_shopper: opts.journeyVisits,
    checkouts,
    gateway_calls: journeyCalls,
    calls_per_checkout: round(callsPerCheckout, 3),
    checkouts_per_minute_at_45: round(45 / callsPerCheckout, 1),
    checkouts_per_day_at_5000: Math.floor(5000 / callsPerCheckout),
    steady_state: {
      checkouts: warm.checkouts,
      gateway_calls: warm.calls,
      calls_per_checkout: round(warm.calls / Math.max(1, warm.checkouts), 3),
      checkouts_per_day_at_5000: Math.floor((5000 * Math.max(1, warm.checkouts)) / Math.max(1, warm.calls)),
    },
    /** The warm round: shoppers coming back (the goal's "warm checkout page load"). */
    page_p50_ms: round(percentile(page, 50), 1),
    page_p95_ms: round(percentile(page, 95), 1),
    confirmation_p50_ms: round(percentile(confirmation, 50), 1),
    confirmation_p95_ms: round(percentile(confirmation, 95), 1),
    first_visit_round: { page_p50_ms: round(percentile(latencies.cold.page, 50), 1), confirmation_p50_ms: round(percentile(latencies.cold.confirmation, 50), 1) },
    rest_of_the_day: extra,
    ...(settlement ? { settlement } : {}),
    answers: statuses,
  };
  log(`journey ${variant}: ${checkouts} checkouts, ${journeyCalls} gateway calls (${result.calls_per_checkout}/checkout), page p50 ${result.page_p50_ms} ms, confirmation p50 ${result.confirmation_p50_ms} ms`);
  return result;
}

/**
 * The settlement's gateway calls for a day of 1,000 sales (issue 39: one read per batch and page; target at most
 * 1 % of a 5,000 day). The day's batch is filled to 1,000 lines (the journey's sales, then sales made in the
 * console: the same lines to page through), closed, and read by a replica of the same Redis with webhooks off, as
 * its hourly look finds it (SETTLEMENTS_LOOK_MS, here 1 s so the bench does not wait an hour): the sandbox counts
 * every call from the close until the settlement is kept, the looks made meanwhile included. A day adds its other
 * looks (23 more, one call each when nothing closed); with the gateway's webhook instead of the look, one call to
 * read the batch's totals replaces the look.
 */
async function measureSettlement(ctx, keyPrefix, journeySales) {
  const { creds, redis, sandbox } = ctx;
  for (let i = journeySales; i < SETTLEMENT_DAY.sales; i++) await sandbox.console({ kind: 'sale', amount: `${1 + (i % 50)}.00` });
  const before = acceptedCalls(await sandbox.stats());
  const { key: batch } = await sandbox.closeBatch();
  const reader = await startTokengate('journey-settlement', creds, { redisUrl: redis.url, keyPrefix, gatewayBaseUrl: sandbox.baseUrl, extraEnv: { ...UNLIMITED, SETTLEMENTS_LOOK_MS: '1000' } });
  const finance = mintJwt(creds, { sub: 'journey-finance', scope: 'settlements:read customers:any' });
  const t = performance.now();
  let kept;
  try {
    for (let i = 0; i < 120 && !kept; i++) {
      const res = await call(reader.url, 'GET', `/v1/settlements/${batch}`, finance);
      if (res.status === 200) kept = res.body;
      else await new Promise((r) => setTimeout(r, 250));
    }
    if (!kept) throw new Error(`journey: the settlement of ${batch} was not kept within 30 s`);
    const calls = acceptedCalls(await sandbox.stats()) - before;
    const metrics = await (await fetch(`${reader.adminUrl}/metrics`)).text();
    const byCall = Object.fromEntries([...metrics.matchAll(/^tokengate_settlement_gateway_calls_total\{call="(\w+)"\} (\d+)/gm)].map((m) => [m[1], Number(m[2])]));
    const looks = byCall.batches ?? 0;
    const read = calls - looks;
    const perDay = read + SETTLEMENT_DAY.looksPerDay;
    return {
      batch_lines: kept.lines.length,
      gateway_calls: calls,
      by_call: byCall,
      read_calls: read,
      seconds_to_kept: round((performance.now() - t) / 1000, 1),
      calls_per_day_at_1000_sales: perDay,
      share_of_day_budget_pct: round((100 * perDay) / SETTLEMENT_DAY.budget, 2),
    };
  } finally {
    await reader.proc.stop();
  }
}

/** Runs both variants against one sandbox at 100 ms; `journey.*` and `journey.without_view.*` in latest.json. */
async function runJourney(ctx) {
  const { sandbox, opts } = ctx;
  // The sandbox process loads this file (test cards only): which stored method of each customer approves.
  const fixtures = JSON.parse(fs.readFileSync(path.join(ROOT, 'config', 'sandbox-fixtures.json'), 'utf8')).customers;
  const shoppers = fixtures
    .map((c) => ({ key: c.key, pm: c.payment_methods.find((m) => APPROVED.has(m.number))?.key }))
    .filter((s) => s.pm)
    .slice(0, opts.journeyShoppers);
  if (shoppers.length < opts.journeyShoppers) throw new Error(`journey: only ${shoppers.length} fixture customers have an approved card`);
  await sandbox.update({ latencyMs: opts.journeyLatencyMs, jitterMs: 0 });
  try {
    const withView = await runVariant(ctx, 'with_view', shoppers);
    await sandbox.reset();
    await sandbox.update({ latencyMs: opts.journeyLatencyMs, jitterMs: 0 });
    const withoutView = await runVariant(ctx, 'without_view', shoppers);
    return { gateway_latency_ms: opts.journeyLatencyMs, ...withView, without_view: withoutView };
  } finally {
    await sandbox.update({ latencyMs: 0, jitterMs: 0 });
    await sandbox.reset();
  }
}

module.exports = { runJourney };
