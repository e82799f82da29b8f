import request from 'supertest';
import { callSandbox } from '../../src/sandbox/client';
import { startBff, token, type Bff } from '../support/bff';
import { uniquePrefix } from '../support/redis';
import { eventually } from '../support/wait';

/**
 * Issue 27's closing figure, measured at a small scale: a merchant's day (sales, one console refund in fifty, the
 * nightly batch close, a ledger that learns each sale's settlement and the refund), run twice against the sandbox,
 * with and without the gateway's webhooks, counting the gateway reads tokengate makes. Without webhooks the only
 * way to learn what happened at the gateway is to read it: a sale's view goes stale and its next read refreshes
 * it (one read), and a refund sent over a console refund is refused and followed by a read. With them: none.
 */
const SALES = 50;
const SECRET = 'reads-figure-webhook-key';

async function merchantDay(webhooks: boolean): Promise<{ reads: number; settlementReads: number; refusedWrites: number; settled: number; refundSeen: boolean }> {
  const bff: Bff = await startBff({
    env: {
      REDIS_KEY_PREFIX: uniquePrefix('reads').replace(/[^A-Za-z0-9:_-]/g, '_'),
      // The ledger reads each sale hours after it was made: its view is older than the 1 h bound by then.
      VIEW_SALE_FRESH_MS: '1',
      ...(webhooks ? { GATEWAY_WEBHOOK_SECRET: SECRET } : {}),
    },
  });
  try {
    if (webhooks) bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET });
    const customer = bff.sandbox.fixtures.firstCustomer().key;
    const pm = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    const bearer = token({ sub: 'reads-ledger', scope: 'customers:any sales:create sales:read refunds:create' });
    const keys: string[] = [];
    for (let i = 0; i < SALES; i++) {
      const res = await request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer}`).set('Idempotency-Key', `reads-${i}`).set('Content-Type', 'application/json')
        .send(JSON.stringify({ customer, payment_method: pm, amount: '10.00' }));
      keys.push(res.body.key as string);
    }
    // The settlements' own reads of a closed batch (issue 39: background, one per batch and page, behind the
    // batch's webhook) are counted apart: this figure is what reading sales costs.
    const settlementReads = async () => {
      const text = (await request(bff.adminUrl).get('/metrics')).text;
      return [...text.matchAll(/^tokengate_settlement_gateway_calls_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    };
    const allReads = () => Object.values(bff.sandbox.stats().endpoints).reduce((n, e) => n + (e.acceptedByKind.lookup ?? 0) + (e.acceptedByKind.batches ?? 0), 0);
    const reads = async () => allReads() - (await settlementReads());
    const refunds = () => bff.sandbox.ledger.operations().filter((o) => o.command === 'creditvoid' || o.command === 'refund').length;
    await callSandbox(bff.sandbox.baseUrl, 'POST', 'batches/current/close');
    const base = await reads(); // counted from here: the close above is the batch timer's, not tokengate's
    // One sale in fifty is refunded in the merchant's console.
    await callSandbox(bff.sandbox.baseUrl, 'POST', 'transactions', { body: { command: 'refund', trankey: keys[0], amount: '10.00' } });
    const view = (key: string) => request(bff.url).get(`/v1/sales/${key}`).set('Authorization', `Bearer ${bearer}`);
    // With webhooks: wait for the one event this needs, the console refund's, answered by tokengate (it names no
    // sale, so tokengate counts it unlinked: gateway-facts.md, Money webhooks in detail).
    if (webhooks) {
      const refundEvent = () => bff.sandbox.webhooks.events().find((e) => e.event_type === 'transaction.refund.success');
      await eventually(() => bff.sandbox.webhooks.attempts().some((a) => a.event_id === refundEvent()?.event_id && a.outcome === 'delivered'));
    }
    // Support, unaware of the console refund, refunds the same sale in full: tokengate asks the gateway only if its
    // view does not know the console refund yet (then the gateway refuses it, and tokengate reads the sale).
    const before = refunds();
    await request(bff.url).post(`/v1/sales/${keys[0]}/refunds`).set('Authorization', `Bearer ${bearer}`).set('Idempotency-Key', 'reads-refund').send();
    const refusedWrites = refunds() - before;
    // The ledger learns each sale's settlement: it reads each sale until it says settled.
    let settled = 0;
    for (const key of keys) {
      await eventually(async () => (await view(key)).body.status === 'settled', 5000, 20);
      settled += 1;
    }
    const refundSeen = (await view(keys[0] as string)).body.amount_refunded === '10.00';
    if (webhooks) {
      // The settlement of the closed batch is read behind its webhook: wait for it, so its reads are all counted apart.
      const batch = (await view(keys[1] as string)).body.batch?.key as string;
      const finance = token({ sub: 'reads-finance', scope: 'settlements:read customers:any' });
      await eventually(async () => (await request(bff.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${finance}`)).status === 200);
    }
    return { reads: (await reads()) - base, settlementReads: await settlementReads(), refusedWrites, settled, refundSeen };
  } finally {
    await bff.stop();
  }
}

describe('gateway reads a merchant\'s day costs, with and without webhooks', () => {
  it('when the ledger learns every settlement and a console refund, then webhooks spend at most one gateway read where reading costs at least one per sale', async () => {
    const without = await merchantDay(false);
    const withHooks = await merchantDay(true);
    // eslint-disable-next-line no-console -- the figure the issue asks for, printed where CI logs keep it
    console.log(`gateway reads for ${SALES} sales, 1 console refund, 1 batch close: without webhooks ${without.reads} reads + ${without.refusedWrites} refused refund; with webhooks ${withHooks.reads} reads + ${withHooks.refusedWrites} refused refund (and the settlement's own ${withHooks.settlementReads} reads of the closed batch)`);
    expect(without.settled).toBe(SALES);
    expect(withHooks.settled).toBe(SALES);
    expect(without.reads).toBeGreaterThanOrEqual(SALES + 1);
    expect(without.refusedWrites).toBe(1);
    // The console refund names no sale: tokengate does not guess, so support's refund of all goes out with the
    // 10.00 it knows is left and the gateway refuses it, with webhooks or without (issue 36).
    expect(withHooks.reads).toBeLessThanOrEqual(1);
    // The settlement: the batch's totals and one page of its transactions (issue 39: one read per batch and page).
    expect(withHooks.settlementReads).toBeLessThanOrEqual(2);
    expect(withHooks.refusedWrites).toBe(1);
    // Seen only if the gateway's look-up lists refunds (the refused refund's read): the same with webhooks or not.
    expect(withHooks.refundSeen).toBe(without.refundSeen);
  });
});

describe('a stale view whose refresh failed', () => {
  it('when the refresh\'s gateway read fails, then its claim is released and the next stale read refreshes at once (not after the claim\'s 30 s)', async () => {
    const bff = await startBff({ env: { REDIS_KEY_PREFIX: uniquePrefix('refresh-claim').replace(/[^A-Za-z0-9:_-]/g, '_'), VIEW_SALE_FRESH_MS: '1' } });
    try {
      const customer = bff.sandbox.fixtures.firstCustomer().key;
      const pm = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
      const bearer = token({ sub: 'refresh-claim', scope: 'customers:any sales:create sales:read' });
      const made = await request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer}`).set('Idempotency-Key', 'claim-1').set('Content-Type', 'application/json')
        .send(JSON.stringify({ customer, payment_method: pm, amount: '5.00' }));
      const key = made.body.key as string;
      const lookups = () => Object.values(bff.sandbox.stats().endpoints).reduce((n, e) => n + (e.acceptedByKind.lookup ?? 0), 0);
      const view = () => request(bff.url).get(`/v1/sales/${key}`).set('Authorization', `Bearer ${bearer}`);
      // Two: a read is re-sent once after a 5xx, so both tries fail.
      bff.sandbox.faults.next({ kind: '5xx', match: 'lookup', count: 2 });
      await callSandbox(bff.sandbox.baseUrl, 'POST', 'transactions', { body: { command: 'void', trankey: key } });
      const before = lookups();
      expect((await view()).headers['cache-status']).toMatch(/ttl=-/); // stale: answered, refreshed behind
      // The event this needs: the refresh's read reached the sandbox and failed (the fault is spent).
      await eventually(() => bff.sandbox.faults.pending().length === 0);
      // Each stale read starts a refresh; with the claim released, one of them reads the gateway now.
      await eventually(async () => (await view()).body.status === 'voided', 5000, 50);
      expect(lookups()).toBeGreaterThan(before);
    } finally {
      await bff.stop();
    }
  });
});
