'use strict';
/**
 * The soak's faults, on a schedule spread over the middle of the run (10 % to 75 % of it, so the end is calm
 * and every unknown outcome has its deadline before the judge looks), each logged with its time. The list is
 * played in rounds (one per 10 minutes of run): the first plays every fault; later rounds leave out the two that
 * restart replicas (a deploy and a crash), so each replica then lives long enough to measure its memory growth.
 * A fault that takes a while (a rolling deploy) delays the next one; none starts after the load has stopped.
 */
const { sleep } = require('./client');

/** What each kind does; `ctx` = { sandbox, slots, redis, client, windowMs }. Resolves with a detail line. */
const FAULTS = {
  async gateway_slow({ sandbox, windowMs }) {
    await sandbox.admin('POST', 'settings', { latencyMs: 1500, jitterMs: 500 });
    await sleep(windowMs);
    await sandbox.admin('POST', 'settings', { latencyMs: 100, jitterMs: 50 });
    return `answers in 1.5 +- 0.5 s for ${Math.round(windowMs / 1000)} s`;
  },
  async gateway_stall({ sandbox }) {
    await sandbox.admin('POST', 'faults', { kind: 'hang', match: 'sale', count: 2, when: 'after' });
    return 'next 2 sales processed, then never answered (past GATEWAY_TIMEOUT_MS)';
  },
  async gateway_reset_after({ sandbox }) {
    await sandbox.admin('POST', 'faults', { kind: 'reset', match: 'any', count: 2, when: 'after' });
    return 'next 2 calls processed, then the connection reset';
  },
  async gateway_reset_before({ sandbox }) {
    await sandbox.admin('POST', 'faults', { kind: 'reset', match: 'any', count: 2, when: 'before' });
    return 'next 2 calls reset before processing';
  },
  async gateway_5xx({ sandbox, windowMs }) {
    await sandbox.admin('POST', 'faults', { errorRate: 0.3, match: 'any' });
    await sleep(windowMs);
    await sandbox.admin('DELETE', 'faults');
    return `30 % of calls answered 500/502/503 (before processing) for ${Math.round(windowMs / 1000)} s`;
  },
  async gateway_5xx_after({ sandbox }) {
    await sandbox.admin('POST', 'faults', { kind: '5xx', match: 'sale', count: 2, when: 'after', status: 502 });
    return 'next 2 sales processed, then answered 502';
  },
  async gateway_429({ sandbox }) {
    // One is enough: tokengate then keeps the key closed for a whole window (it cannot know the gateway's).
    await sandbox.admin('POST', 'faults', { kind: '429', match: 'any', count: 1 });
    return 'next call answered 429 (155) though the budget had room';
  },
  async replica_sigkill({ slots, client }) {
    // Mid-sale: the replica with the most requests in flight, waited for up to 3 s.
    let target;
    for (let i = 0; i < 30 && !target; i++) {
      const busy = slots.filter((s) => s.up).sort((a, b) => client.inflight.get(b.name) - client.inflight.get(a.name))[0];
      if (busy && client.inflight.get(busy.name) > 0) target = busy;
      else await sleep(100);
    }
    target ??= slots.find((s) => s.up);
    const inflight = client.inflight.get(target.name);
    await target.kill();
    await sleep(1000);
    await target.start();
    return `${target.name} SIGKILLed with ${inflight} request(s) in flight, restarted`;
  },
  async rolling_deploy({ slots }) {
    const parts = [];
    for (const s of slots) {
      const { ms, code } = await s.stop();
      await s.start();
      parts.push(`${s.name} drained in ${ms} ms (exit ${code})`);
    }
    return `SIGTERM and restart one by one: ${parts.join(', ')}`;
  },
  async redis_restart({ redis }) {
    return redis.mode === 'sentinel' ? `failover: ${await redis.failover()}` : `restart: ${await redis.restart()}`;
  },
  async refund_voided({ sandbox, client, load }) {
    // The merchant voids a refund in the console before its batch closes (issue 36): the money is no longer
    // refunded, and the gateway's transaction.refund.voided names no sale, only the refund. The soak's own refunds
    // are of unsettled sales (no refund transaction of their own), so the fault makes one: it closes the batch,
    // refunds 1.00 of a settled sale through tokengate (as the merchant's service does), then voids that refund
    // at the gateway.
    await sandbox.api('POST', 'batches/current/close');
    const entries = new Map((await sandbox.admin('GET', 'ledger')).map((e) => [e.key, e]));
    const sale = [...load.saleKeys.keys()].find((k) => { const e = entries.get(k); return e?.state === 'settled' && Number(e.captured) - Number(e.refunded) >= 1; });
    if (!sale) return 'no settled sale to refund yet';
    const made = await client.write('refund', 'POST', `/v1/sales/${sale}/refunds`, { token: load.internal, body: { amount: '1.00' }, key: load.key('fault-refund') });
    if (made.status !== 201 || !made.body?.key || made.body.key === sale) return `refund of ${sale} answered ${made.status}: nothing to void`;
    const res = await sandbox.api('POST', 'transactions', { command: 'void', trankey: made.body.key });
    return `refund ${made.body.key} of 1.00 (sale ${sale}), made through tokengate, voided at the gateway: ${res?.result_code ?? 'no answer'}`;
  },
  async settlement_console({ sandbox, client, load }) {
    // What the settlements must say out loud (issue 39): a refund and a sale made in the merchant's console
    // (not_ours), and a sale of tokengate's whose amount the console changed before the close (amount_differs:
    // raised by 1.00, so no refund of it could exceed). That sale is made here and kept out of the load's sales,
    // so no void or refund of the load's changes its verdict; the judge expects each verdict (judgeSettlements).
    const s = load.shoppers.find((x) => !x.busy);
    if (!s) return 'no idle shopper';
    const injected = (load.settlementFaults ??= []);
    const refund = await sandbox.admin('POST', 'batches/current/console', { kind: 'refund', amount: '2.00' });
    injected.push({ transaction: refund.key, verdict: 'not_ours', what: 'console refund 2.00' });
    const made = await sandbox.admin('POST', 'batches/current/console', { kind: 'sale', amount: '3.00' });
    injected.push({ transaction: made.key, verdict: 'not_ours', what: 'console sale 3.00' });
    // A new card that approves in full (the first of NEW_CARDS), through Pay.js: the shopper's stored cards include
    // test cards that decline.
    const res = await client.write('sale', 'POST', '/v1/sales', { token: s.token, body: { customer: s.custkey, payment_key: await load.paymentKey('4000100011112224'), amount: '10.00', invoice: load.invoice() }, key: load.key('fault-sale') });
    if (res?.status !== 201 || res.body?.result_code !== 'A') return `console refund ${refund.key}, console sale ${made.key}; tokengate's sale answered ${res?.status}: no amount changed`;
    await sandbox.admin('POST', 'batches/current/console', { kind: 'amount', transaction: res.body.key, amount: '11.00' });
    injected.push({ transaction: res.body.key, verdict: 'amount_differs', what: 'tokengate sale 10.00 held as 11.00' });
    return `console refund ${refund.key} 2.00, console sale ${made.key} 3.00, tokengate's sale ${res.body.key} 10.00 held as 11.00 in the open batch`;
  },
  async webhook_twice_late({ sandbox, windowMs }) {
    await sandbox.admin('POST', 'webhooks/hold');
    await sleep(windowMs);
    const { events } = await sandbox.admin('GET', 'webhooks');
    const held = events.filter((e) => e.held).map((e) => e.event_id);
    // Late: all held ones now, then each once more (a duplicate: same id, same bytes). Neither is awaited: they
    // answer once every first try has its answer.
    sandbox.admin('POST', 'webhooks/resume').then(() => sandbox.admin('POST', 'webhooks/release', { event_ids: held })).catch(() => undefined);
    return `${held.length} gateway webhooks held ${Math.round(windowMs / 1000)} s, then each delivered twice`;
  },
};

const ORDER = ['gateway_slow', 'replica_sigkill', 'gateway_stall', 'webhook_twice_late', 'gateway_reset_after', 'refund_voided', 'redis_restart', 'gateway_5xx',
  'settlement_console', 'gateway_reset_before', 'rolling_deploy', 'gateway_5xx_after', 'gateway_429'];

const RESTARTS_REPLICAS = new Set(['replica_sigkill', 'rolling_deploy']);

/** Plays the schedule; `onFault` is told of each fault once it is in place, with its start time. */
async function playFaults(ctx, { startedAt, durationMs, loadStopsAt, rounds, onFault, onError }) {
  const plan = [];
  for (let r = 0; r < rounds; r++) plan.push(...(r === 0 ? ORDER : ORDER.filter((k) => !RESTARTS_REPLICAS.has(k))));
  const from = startedAt + durationMs * 0.1;
  const to = startedAt + durationMs * 0.75;
  const gap = (to - from) / plan.length;
  const windowMs = Math.max(3000, Math.min(20_000, gap * 0.5));
  for (let i = 0; i < plan.length; i++) {
    await sleep(Math.max(0, from + i * gap - Date.now()));
    if (Date.now() >= loadStopsAt) break;
    const kind = plan[i];
    const at = Date.now();
    try {
      const detail = await FAULTS[kind]({ ...ctx, windowMs });
      onFault({ t: (at - startedAt) / 1000, at: new Date(at).toISOString(), kind, detail, took_s: (Date.now() - at) / 1000 });
    } catch (err) {
      onError(kind, err);
      onFault({ t: (at - startedAt) / 1000, at: new Date(at).toISOString(), kind, detail: `FAILED to inject: ${err.message}` });
    }
  }
}

module.exports = { playFaults, FAULTS, ORDER };
