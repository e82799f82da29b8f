import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Registry } from 'prom-client';
import { createRedisEventLog } from '../../src/events';
import { createLogger } from '../../src/observability/logger';
import { createMemorySaleRecords, createRedisSaleRecords } from '../../src/sale-records';
import { createBankReview, createMissingSweep, createRedisSettlementStore, createSettlementMetrics, type Settlement, type SettlementLine } from '../../src/settlements';
import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/**
 * Bank payments in settlements (issue 39; contract, "Settlements"; guarantee 14): a bank payment's line stays open
 * (`bank: open`, `open_until`) until the return window ends (`final`) or the bank returns it; a return after the
 * batch changes the line (`bank: returned`, `amount_returned`, `amount_differs`) and is reported again, once, in a
 * settlement.mismatch, whatever the webhook's redeliveries or the replicas that hear it. And the sale → settlement
 * index: a sale its batch lost that any later batch holds is not `missing`, however many settlements came between.
 */
const SECRET = 'gateway-webhook-signature-key-for-settlement-bank';
const FINANCE = 'settlements:read customers:any';
const OFFICE = 'customers:any sales:create events:read';
const DAY = 86_400_000;
const WINDOW_MS = 10 * DAY;
const run = randomBytes(3).toString('hex');
/** A sale's answer, as the record keeps it. */
const answer = (amount: string) => ({ refnum: '1', result_code: 'A', result: 'Approved', authcode: '123456', amount });
let n = 0;

describe('settlements: bank payments stay open until settled for good or returned', () => {
  const { prefix } = suiteRedis('settle-bank');
  let bff: Bff;
  const bearer = (scope: string) => token({ sub: `settle-bank-${run}`, scope });
  const customer = () => bff.sandbox.fixtures.firstCustomer().key;
  const pay = async (account: string): Promise<string> => {
    const payment_key = bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account });
    const res = await request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer(OFFICE)}`).set('Idempotency-Key', `sb-${run}-${++n}`)
      .set('Content-Type', 'application/json').send({ customer: customer(), amount: '30.00', payment_key, authorization: { text: 'I agree (v1)' } });
    expect(res.status).toBe(201);
    return res.body.key as string;
  };
  const settlement = async (batch: string) => request(bff.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${bearer(FINANCE)}`);
  const line = async (batch: string, key: string) => ((await settlement(batch)).body.lines as SettlementLine[] | undefined)?.find((l) => l.transaction === key);
  const mismatches = async (key: string) => ((await request(bff.url).get('/v1/events?limit=1000').set('Authorization', `Bearer ${bearer(OFFICE)}`)).body.data as { type: string; data: { batch?: string; line?: SettlementLine } }[])
    .filter((e) => e.type === 'settlement.mismatch' && e.data.line?.transaction === key);
  // tokengate's clock and the gateway's (an external sandbox: it follows no /test/clock of tokengate's).
  const advance = async (ms: number) => {
    const res = await fetch(`${bff.adminUrl}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: ms }) });
    expect(res.status).toBe(200);
    bff.sandbox.clock.advance(ms);
  };
  const clockNow = async () => Date.parse(((await (await fetch(`${bff.adminUrl}/test/clock`)).json()) as { now: string }).now);
  const delivered = (type: string) => bff.sandbox.webhooks.attempts().filter((a) => a.outcome === 'delivered' && a.event_type === type).length;

  beforeAll(async () => {
    bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, GATEWAY_WEBHOOK_SECRET: SECRET, SETTLEMENTS_LOOK_MS: '200', SETTLEMENTS_BANK_RETURN_WINDOW_MS: String(WINDOW_MS) } });
    bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
  });
  afterAll(() => bff?.stop());

  let batch = '';
  let kept = '';
  let returned = '';
  it('when a batch holding bank payments closes, then each bank line is matched and open until the return window ends', async () => {
    kept = await pay('000111222333');
    returned = await pay('10178102');
    batch = bff.sandbox.ledger.closeBatch();
    await eventually(async () => (await settlement(batch)).status === 200, 10_000);
    const res = await settlement(batch);
    expect(res.body.counts).toEqual({ matched: 2, amount_differs: 0, not_ours: 0, missing: 0 });
    for (const key of [kept, returned]) {
      const l = await line(batch, key);
      expect(l).toMatchObject({ transaction: key, sale: key, amount: '30.00', gateway_amount: '30.00', kind: 'sale', verdict: 'matched', bank: 'open' });
      // open_until is stamped on tokengate's clock, not the wall clock (they differ once a test moved it).
      const openFor = Date.parse(l?.open_until ?? '') - (await clockNow());
      expect(openFor).toBeGreaterThan(WINDOW_MS - 60_000);
      expect(openFor).toBeLessThanOrEqual(WINDOW_MS);
    }
  });

  it('when the bank returns one after the batch, then its line becomes returned (amount_differs, amount_returned) and one settlement.mismatch says so, however often the return is delivered', async () => {
    await advance(5 * DAY);
    await eventually(async () => (await line(batch, returned))?.bank === 'returned', 15_000);
    const l = await line(batch, returned);
    expect(l).toEqual({ transaction: returned, sale: returned, amount: '0.00', gateway_amount: '30.00', kind: 'sale', verdict: 'amount_differs', bank: 'returned', return_code: 'R02', returned_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), amount_returned: '30.00' });
    expect((await settlement(batch)).body.counts).toEqual({ matched: 1, amount_differs: 1, not_ours: 0, missing: 0 });
    await eventually(async () => (await mismatches(returned)).length === 1);
    expect((await mismatches(returned))[0]?.data).toEqual({ batch, closed_at: (await settlement(batch)).body.closed_at, line: l });
    expect((await line(batch, kept))?.bank).toBe('open');

    const [event] = bff.sandbox.webhooks.events().filter((e) => e.event_type === 'ach.returned' && (e.payload.event_body as { object: { key: string } }).object.key === returned);
    const before = delivered('ach.returned');
    await bff.sandbox.webhooks.redeliver(event?.event_id as string);
    await bff.sandbox.webhooks.redeliver(event?.event_id as string);
    await eventually(() => delivered('ach.returned') >= before + 2);
    expect(await mismatches(returned)).toHaveLength(1);
    expect(await line(batch, returned)).toEqual(l);
    const csv = await request(bff.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${bearer(FINANCE)}`).set('Accept', 'text/csv');
    expect(csv.text).toContain(`,${returned},${returned},sale,0.00,30.00,amount_differs,returned,,30.00,R02,${l?.returned_at}\r\n`);
  });

  it('when the return window ends with no return, then the other line is settled for good (final), with no event; the returned one stays returned', async () => {
    await advance(WINDOW_MS);
    await eventually(async () => (await line(batch, kept))?.bank === 'final', 15_000);
    expect(await line(batch, kept)).toEqual({ transaction: kept, sale: kept, amount: '30.00', gateway_amount: '30.00', kind: 'sale', verdict: 'matched', bank: 'final' });
    expect((await line(batch, returned))?.bank).toBe('returned');
    expect(await mismatches(kept)).toHaveLength(0);
  });
});

describe('settlements on one Redis, several replicas', () => {
  const { prefix, redis } = suiteRedis('settle-bank-store');
  const logger = createLogger({ level: 'error' });
  const settlementOf = (batch: string, lines: SettlementLine[], closed = '2026-01-01 20:00:00'): Settlement => ({
    type: 'settlement', batch, closed_at: closed, totals: { sales: '0.00', credits: '0.00', count: lines.length },
    counts: { matched: lines.filter((l) => l.verdict === 'matched').length, amount_differs: 0, not_ours: 0, missing: 0 }, lines,
  });
  const matched = (sale: string, extra: Partial<SettlementLine> = {}): SettlementLine => ({ transaction: sale, sale, amount: '30.00', gateway_amount: '30.00', kind: 'sale', verdict: 'matched', ...extra });

  it('when two replicas hear the same return twice each at once, then the line changes once and one settlement.mismatch is appended', async () => {
    const now = Date.now();
    const store = createRedisSettlementStore({ redis, keyPrefix: prefix });
    const events = createRedisEventLog({ redis, keyPrefix: prefix, retentionMs: 600_000 });
    const records = createMemorySaleRecords();
    const sale = `bank${run}`;
    await records.create(sale, { customer: 'c1', state: 'captured', authorizedCents: 3000, capturedCents: 3000, refundedCents: 0, pendingRefundCents: 0, fields: { ...answer('30.00'), bank: { authorization: 'I agree', sec: 'WEB', ach_status: 'S' } } });
    expect(await store.save(settlementOf('b-bank', [matched(sale, { bank: 'open', open_until: new Date(now + DAY).toISOString() })]), 'o', now)).toBe(true);
    await records.advanceAch(sale, 'R', { code: 'R01', date: '2026-01-04' });
    const replica = () => createBankReview({ store, records, events, metrics: createSettlementMetrics(new Registry()), logger, now: () => now, windowMs: DAY });
    const [a, b] = [replica(), replica()];
    await Promise.all([a.returned(sale), b.returned(sale), a.returned(sale), b.returned(sale)]);
    const kept = await store.get('b-bank');
    expect(kept?.lines).toEqual([{ ...matched(sale), amount: '0.00', verdict: 'amount_differs', bank: 'returned', return_code: 'R01', returned_at: '2026-01-04', amount_returned: '30.00' }]);
    expect(kept?.counts).toEqual({ matched: 0, amount_differs: 1, not_ours: 0, missing: 0 });
    const appended = (await events.list(undefined, 100)).filter((e) => e.type === 'settlement.mismatch');
    expect(appended).toHaveLength(1);
    // No longer open: the daily review has nothing left to look at.
    expect(await store.openBankLines(now + 2 * DAY, 10)).toEqual([]);
  });

  it('when a batch lost a sale that the next batch held, nine settlements ago, then the sweep does not call it missing', async () => {
    let clock = Date.now();
    const store = createRedisSettlementStore({ redis, keyPrefix: `${prefix}-held` });
    const events = createRedisEventLog({ redis, keyPrefix: `${prefix}-held`, retentionMs: 600_000 });
    const records = createMemorySaleRecords({ now: () => clock });
    const batch = (i: number) => ({ type: 'batch' as const, key: `b${i}-${run}`, sequence: String(i) });
    const held = `held${run}`;
    const lost = `lost${run}`;
    for (const sale of [held, lost]) await records.create(sale, { customer: 'c1', state: 'captured', authorizedCents: 1000, capturedCents: 1000, refundedCents: 0, pendingRefundCents: 0, fields: { ...answer('10.00'), batch: batch(0) } });
    // Batch 0 closed with `held` only; the next batch holds `lost`, late; nine more batches close after it.
    await store.save(settlementOf(batch(0).key, [matched(held, { amount: '10.00', gateway_amount: '10.00' })]), 'o', clock);
    await store.save(settlementOf(batch(1).key, [matched(lost, { amount: '10.00', gateway_amount: '10.00' })]), 'o', clock + 1000);
    // Batch 1's settlement was kept before the index existed: its sales join it at the release's first start.
    await redis.del(`{${prefix}-held:settlements}:of:${lost}`);
    expect(await store.heldIn([lost])).toEqual(new Map());
    expect(await store.backfillHeld()).toBe(2);
    expect(await store.backfillHeld()).toBe(0);
    expect(await store.heldIn([lost])).toEqual(new Map([[lost, batch(1).key]]));
    for (let i = 2; i <= 10; i++) await store.save(settlementOf(batch(i).key, [matched(`other${i}${run}`)]), 'o', clock + i * 1000);
    clock += 3 * DAY;
    const sweep = createMissingSweep({
      store, records, events, metrics: createSettlementMetrics(new Registry()), logger, now: async () => clock,
      settler: { settle: async () => 'kept' }, missingAfterMs: 2 * DAY, everyMs: DAY,
    });
    expect(await sweep.sweep()).toBe(0);
    expect((await store.get(batch(0).key))?.counts.missing).toBe(0);
    expect(await records.dueBatches(clock, 10)).toEqual([]);
  });

  it('when a batch was indexed before the due index existed (a sale of the release before), then once it has joined the index its lost sale is found missing', async () => {
    let clock = Date.now();
    const p = `${prefix}-old`;
    const records = createRedisSaleRecords({ redis, keyPrefix: p, now: () => clock });
    const store = createRedisSettlementStore({ redis, keyPrefix: p });
    const events = createRedisEventLog({ redis, keyPrefix: p, retentionMs: 600_000 });
    const old = `old-${run}`;
    const [held, lost] = [`oheld${run}`, `olost${run}`];
    for (const sale of [held, lost]) await records.create(sale, { customer: 'c1', state: 'captured', authorizedCents: 1000, capturedCents: 1000, refundedCents: 0, pendingRefundCents: 0, fields: answer('10.00') });
    // As the release before wrote it: the batch's set, and no due index.
    await redis.sadd(`{${p}:batch:${old}}`, held, lost);
    await redis.pexpire(`{${p}:batch:${old}}`, 14 * DAY);
    await store.save(settlementOf(old, [matched(held, { amount: '10.00', gateway_amount: '10.00' })]), 'o', clock);
    expect(await records.backfillDue()).toBe(1);
    expect(await records.backfillDue()).toBe(0);
    clock += 3 * DAY;
    const sweep = createMissingSweep({
      store, records, events, metrics: createSettlementMetrics(new Registry()), logger, now: async () => clock,
      settler: { settle: async () => 'kept' }, missingAfterMs: 2 * DAY, everyMs: DAY,
    });
    expect(await sweep.sweep()).toBe(1);
    expect((await store.get(old))?.lines.find((l) => l.transaction === lost)?.verdict).toBe('missing');
  });
});
