import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Registry } from 'prom-client';
import { createRedisEventLog } from '../../src/events';
import { createLogger } from '../../src/observability/logger';
import { createMemorySaleRecords } from '../../src/sale-records';
import { createBankReview, createRedisSettlementStore, createSettlementMetrics, type Settlement, type SettlementLine } from '../../src/settlements';
import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/**
 * A bank payment's settlement line after its batch was kept (guarantee 14; docs/settlements.md, "Bank payments"):
 * a payment that fails after its batch closed (`ach.failed`, some processors only: the sandbox sends one on
 * request), and a credit (a refund to the bank account) that the shopper's bank sends back, which the gateway's
 * documents do not describe: the sandbox's SANDBOX_CREDIT_RETURNS has it come back as `ach.returned` or as
 * `ach.failed` about the credit. Finance must see each line as returned, its counts with it, reported once however
 * often the webhook comes and whichever replica hears it.
 */
jest.setTimeout(120_000);
const SECRET = 'gateway-webhook-signature-key-for-settlement-bank-late';
const FINANCE = 'settlements:read customers:any';
const OFFICE = 'customers:any sales:create sales:read refunds:create events:read';
const DAY = 86_400_000;
const run = randomBytes(3).toString('hex');
let n = 0;

describe('settlements: bank lines that change after their batch', () => {
  const { prefix } = suiteRedis('settle-bank-late');
  let bff: Bff;
  const bearer = (scope: string) => token({ sub: `settle-late-${run}`, scope });
  const pay = async (account: string): Promise<string> => {
    const payment_key = bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account });
    const res = await request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer(OFFICE)}`).set('Idempotency-Key', `sl-${run}-${++n}`)
      .set('Content-Type', 'application/json').send({ customer: bff.sandbox.fixtures.firstCustomer().key, amount: '30.00', payment_key, authorization: { text: 'I agree (v1)' } });
    expect(res.status).toBe(201);
    return res.body.key as string;
  };
  const refund = async (sale: string, amount: string): Promise<string> => {
    const res = await request(bff.url).post(`/v1/sales/${sale}/refunds`).set('Authorization', `Bearer ${bearer(OFFICE)}`).set('Idempotency-Key', `sl-${run}-${++n}`)
      .set('Content-Type', 'application/json').send({ amount });
    expect(res.status).toBe(201);
    return res.body.key as string;
  };
  const settlement = async (batch: string) => request(bff.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${bearer(FINANCE)}`);
  const line = async (batch: string, key: string) => ((await settlement(batch)).body.lines as SettlementLine[] | undefined)?.find((l) => l.transaction === key);
  const mismatches = async (key: string) => ((await request(bff.url).get('/v1/events?limit=1000').set('Authorization', `Bearer ${bearer(OFFICE)}`)).body.data as { type: string; data: { line?: SettlementLine } }[])
    .filter((e) => e.type === 'settlement.mismatch' && e.data.line?.transaction === key);
  const delivered = (type: string) => bff.sandbox.webhooks.attempts().filter((a) => a.outcome === 'delivered' && a.event_type === type).length;
  /** The webhook of `type` about `key`, delivered twice more: the line and its one event stay as they were. */
  async function redeliverTwice(type: string, key: string): Promise<void> {
    const [event] = bff.sandbox.webhooks.events().filter((e) => e.event_type === type && (e.payload.event_body as { object: { key: string } }).object.key === key);
    expect(event).toBeDefined();
    const before = delivered(type);
    await bff.sandbox.webhooks.redeliver(event?.event_id as string);
    await bff.sandbox.webhooks.redeliver(event?.event_id as string);
    await eventually(() => delivered(type) >= before + 2);
  }
  const kept = async (batch: string) => eventually(async () => (await settlement(batch)).status === 200);

  beforeAll(async () => {
    bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, GATEWAY_WEBHOOK_SECRET: SECRET, SETTLEMENTS_LOOK_MS: '200' } });
    bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
  });
  afterAll(() => bff?.stop());

  it('when a bank payment fails (ach.failed) after its batch was kept, then its line reads returned (0.00 kept of 30.00, amount_differs) and one settlement.mismatch says so, however often the failure is delivered', async () => {
    const sale = await pay('000111222444');
    bff.sandbox.clock.advance(DAY); // submitted to the bank
    const batch = bff.sandbox.ledger.closeBatch();
    await kept(batch);
    expect(await line(batch, sale)).toMatchObject({ verdict: 'matched', bank: 'open' });

    bff.sandbox.achFail(sale);
    await eventually(async () => (await line(batch, sale))?.bank === 'returned');
    const l = await line(batch, sale);
    expect(l).toEqual({ transaction: sale, sale, amount: '0.00', gateway_amount: '30.00', kind: 'sale', verdict: 'amount_differs', bank: 'returned', amount_returned: '30.00' });
    expect((await settlement(batch)).body.counts).toEqual({ matched: 0, amount_differs: 1, not_ours: 0, missing: 0 });
    await eventually(async () => (await mismatches(sale)).length === 1);
    await redeliverTwice('ach.failed', sale);
    expect(await mismatches(sale)).toHaveLength(1);
    expect(await line(batch, sale)).toEqual(l);
  });

  for (const how of ['returned', 'failed'] as const) {
    it(`when a credit to a bank account comes back after its batch was kept (SANDBOX_CREDIT_RETURNS ${how}), then the credit's line reads returned (0.00 of 10.00, amount_differs) and is reported once`, async () => {
      bff.sandbox.update({ creditReturns: how });
      // 10178102 returns R02 (account closed): the debit on the third day, and the credit sent to it later.
      const sale = await pay('10178102');
      bff.sandbox.clock.advance(DAY);
      const credit = await refund(sale, '10.00');
      const batch = bff.sandbox.ledger.closeBatch();
      await kept(batch);
      expect(await line(batch, credit)).toEqual({ transaction: credit, sale, gateway_amount: '10.00', kind: 'refund', verdict: 'matched' });

      bff.sandbox.clock.advance(6 * DAY);
      await eventually(async () => (await line(batch, credit))?.bank === 'returned');
      const l = await line(batch, credit);
      const returnFields = how === 'returned' ? { return_code: 'R02', returned_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) } : {};
      expect(l).toEqual({ transaction: credit, sale, amount: '0.00', gateway_amount: '10.00', kind: 'refund', verdict: 'amount_differs', bank: 'returned', amount_returned: '10.00', ...returnFields });
      // The debit came back too (the same closed account): both lines differ now.
      await eventually(async () => (await line(batch, sale))?.bank === 'returned');
      expect((await settlement(batch)).body.counts).toEqual({ matched: 0, amount_differs: 2, not_ours: 0, missing: 0 });
      await eventually(async () => (await mismatches(credit)).length === 1);
      await redeliverTwice(how === 'returned' ? 'ach.returned' : 'ach.failed', credit);
      expect(await mismatches(credit)).toHaveLength(1);
      expect(await line(batch, credit)).toEqual(l);
      const csv = await request(bff.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${bearer(FINANCE)}`).set('Accept', 'text/csv');
      expect(csv.text).toContain(`,${credit},${sale},refund,0.00,10.00,amount_differs,returned,,10.00,`);
    });
  }

  it('when a credit came back before its batch was read, then the batch\'s read matches its line as returned', async () => {
    bff.sandbox.update({ creditReturns: 'returned' });
    const sale = await pay('10178102');
    bff.sandbox.clock.advance(DAY);
    const credit = await refund(sale, '5.00');
    bff.sandbox.clock.advance(6 * DAY);
    const returnOf = bff.sandbox.webhooks.events().find((e) => e.event_type === 'ach.returned' && (e.payload.event_body as { object: { key: string } }).object.key === credit);
    expect(returnOf).toBeDefined();
    await eventually(() => bff.sandbox.webhooks.attempts().some((a) => a.outcome === 'delivered' && a.event_id === returnOf?.event_id));
    const batch = bff.sandbox.ledger.closeBatch();
    await kept(batch);
    expect(await line(batch, credit)).toMatchObject({ amount: '0.00', gateway_amount: '5.00', verdict: 'amount_differs', bank: 'returned', amount_returned: '5.00', return_code: 'R02' });
  });
});

describe('a credit\'s return on one Redis, several replicas', () => {
  const { prefix, redis } = suiteRedis('settle-bank-late-store');
  const logger = createLogger({ level: 'error' });

  it('when two replicas hear a credit\'s return and its failure twice each at once, then its line changes once (the first heard) and one settlement.mismatch is appended', async () => {
    const store = createRedisSettlementStore({ redis, keyPrefix: prefix });
    const events = createRedisEventLog({ redis, keyPrefix: prefix, retentionMs: 600_000 });
    const credit = `cr${run}`;
    const line: SettlementLine = { transaction: credit, sale: `s${run}`, gateway_amount: '10.00', kind: 'refund', verdict: 'matched' };
    const settlement: Settlement = { type: 'settlement', batch: `b-${run}`, closed_at: '2026-01-01 20:00:00', totals: { sales: '0.00', credits: '10.00', count: 1 }, counts: { matched: 1, amount_differs: 0, not_ours: 0, missing: 0 }, lines: [line] };
    expect(await store.save(settlement, 'o', Date.now())).toBe(true);
    const replica = () => createBankReview({ store, records: createMemorySaleRecords(), events, metrics: createSettlementMetrics(new Registry()), logger, now: Date.now, windowMs: DAY });
    const [a, b] = [replica(), replica()];
    await a.creditReturned(credit, { how: 'returned', code: 'R02', date: '2026-01-05' });
    await Promise.all([b.creditReturned(credit, { how: 'failed' }), a.creditReturned(credit, { how: 'returned', code: 'R02', date: '2026-01-05' }), b.creditReturned(credit, { how: 'failed' })]);
    const after = await store.get(settlement.batch);
    expect(after?.lines).toEqual([{ ...line, amount: '0.00', verdict: 'amount_differs', bank: 'returned', amount_returned: '10.00', return_code: 'R02', returned_at: '2026-01-05' }]);
    expect(after?.counts).toEqual({ matched: 0, amount_differs: 1, not_ours: 0, missing: 0 });
    expect((await events.list(undefined, 100)).filter((e) => e.type === 'settlement.mismatch')).toHaveLength(1);
  });
});

describe('credits kept before they joined the held index (c1c84fd)', () => {
  const { prefix, redis } = suiteRedis('settle-credit-backfill');
  const FINANCE_AND_EVENTS = 'settlements:read customers:any events:read';
  const credit = `oldcr${run}`;
  const sale = `olds${run}`;
  const line: SettlementLine = { transaction: credit, sale, gateway_amount: '10.00', kind: 'refund', verdict: 'matched' };
  const saleLine: SettlementLine = { transaction: sale, sale, amount: '30.00', gateway_amount: '30.00', kind: 'sale', verdict: 'matched' };
  const settlementOf = (batch: string): Settlement => ({
    type: 'settlement', batch, closed_at: '2026-01-01 20:00:00', totals: { sales: '30.00', credits: '10.00', count: 2 },
    counts: { matched: 2, amount_differs: 0, not_ours: 0, missing: 0 }, lines: [saleLine, line],
  });
  /** A settlement kept by a release before c1c84fd: its credit not in the held index; `swept`: that release's sales-only backfill ran. */
  async function keptBeforeCredits(keyPrefix: string, batch: string, swept: boolean) {
    const store = createRedisSettlementStore({ redis, keyPrefix });
    expect(await store.save(settlementOf(batch), 'o', Date.now())).toBe(true);
    await redis.del(`{${keyPrefix}:settlements}:of:${credit}`);
    if (swept) await redis.set(`{${keyPrefix}:settlements}:of-backfilled`, '1');
    expect(await store.heldIn([credit, sale])).toEqual(new Map([[sale, batch]]));
    return store;
  }

  it('when a release indexed sales only (its mark set, or never run), then the backfill indexes the credits of kept settlements, once', async () => {
    for (const swept of [true, false]) {
      const keyPrefix = `${prefix}-${swept ? 'swept' : 'fresh'}`;
      const batch = `bc-${swept}-${run}`;
      const store = await keptBeforeCredits(keyPrefix, batch, swept);
      const seen: string[] = [];
      expect(await store.backfillHeld(async (s) => void seen.push(s.batch))).toBe(1);
      expect(seen).toEqual([batch]);
      expect(await store.heldIn([credit, sale])).toEqual(new Map([[credit, batch], [sale, batch]]));
      expect(await store.backfillHeld()).toBe(0);
      expect(await createRedisSettlementStore({ redis, keyPrefix }).backfillHeld()).toBe(0); // another replica, or a restart
    }
  });

  it('when such a credit\'s return was heard before the backfill (kept, no line found), then on start its line reads returned and is reported once, also after a restart', async () => {
    const batch = `bcs-${run}`;
    const store = await keptBeforeCredits(prefix, batch, true);
    // What tokengate did with the return before this release: kept, looked for, no kept line found.
    const review = createBankReview({ store, records: createMemorySaleRecords(), events: createRedisEventLog({ redis, keyPrefix: prefix, retentionMs: 600_000 }), metrics: createSettlementMetrics(new Registry()), logger: createLogger({ level: 'error' }), now: Date.now, windowMs: DAY });
    await review.creditReturned(credit, { how: 'returned', code: 'R02', date: '2026-01-05' });
    expect((await store.get(batch))?.lines).toEqual([saleLine, line]);

    const bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix } });
    try {
      const bearer = token({ sub: `settle-backfill-${run}`, scope: FINANCE_AND_EVENTS });
      const read = async () => (await request(bff.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${bearer}`)).body as Settlement;
      const reported = async () => ((await request(bff.url).get('/v1/events?limit=1000').set('Authorization', `Bearer ${bearer}`)).body.data as { type: string; data: { line?: SettlementLine } }[])
        .filter((e) => e.type === 'settlement.mismatch' && e.data.line?.transaction === credit);
      await eventually(async () => (await read()).lines?.find((l) => l.transaction === credit)?.bank === 'returned');
      const after = await read();
      expect(after.lines).toEqual([saleLine, { ...line, amount: '0.00', verdict: 'amount_differs', bank: 'returned', amount_returned: '10.00', return_code: 'R02', returned_at: '2026-01-05' }]);
      expect(after.counts).toEqual({ matched: 1, amount_differs: 1, not_ours: 0, missing: 0 });
      await eventually(async () => (await reported()).length === 1);
      expect(await store.heldIn([credit])).toEqual(new Map([[credit, batch]]));
      await bff.restart();
      expect(await reported()).toHaveLength(1);
      expect((await read()).lines).toEqual(after.lines);
    } finally {
      await bff.stop();
    }
  });
});
