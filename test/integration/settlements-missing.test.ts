import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/**
 * Settlements over days of tokengate's clock (issue 39; contract, "Settlements"), in this order: a close the gateway
 * says failed is read by nobody; the sandbox's daily close (`batchCloseAt`) closes the batch when the clocks pass
 * it, and its settlement is kept; and `missing`: a payment tokengate saw approved and not voided that no batch closed since
 * holds, a day after it was due. The sandbox's batch loses a sale (a fault: `drop`); two days on, the daily sweep
 * reports it once, in its batch's settlement.
 */
const SECRET = 'gateway-webhook-signature-key-for-missing';
const FINANCE = 'settlements:read customers:any';
const OFFICE = 'customers:any sales:create sales:void events:read';
const DAY = 86_400_000;

interface Line { transaction: string; sale?: string; amount?: string; gateway_amount: string; kind: string; verdict: string }

describe('settlements: a failed close, the daily close, and missing sales found by the daily sweep', () => {
  const { prefix } = suiteRedis('settle-missing');
  let bff: Bff;
  let seq = 0;
  const bearer = (scope: string) => token({ sub: 'settlements-missing', scope });
  const customer = () => bff.sandbox.fixtures.firstCustomer().key;
  const card = () => (bff.sandbox.fixtures.paymentMethods(customer()).find((p) => p.number.endsWith('2224')) as { key: string }).key;
  const sale = async (amount: string): Promise<string> => {
    const res = await request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer(OFFICE)}`).set('Idempotency-Key', `sm-${Date.now().toString(36)}-${seq++}`)
      .set('Content-Type', 'application/json').send({ customer: customer(), payment_method: card(), amount });
    expect(res.status).toBe(201);
    return res.body.key as string;
  };
  const drop = async (transaction: string) => {
    const res = await fetch(new URL('/_sandbox/batches/current/console', bff.sandbox.baseUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'drop', transaction }) });
    expect(res.status).toBe(200);
  };
  const settlement = async (batch: string) => request(bff.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${bearer(FINANCE)}`);
  const events = async () => (await request(bff.url).get('/v1/events?limit=1000').set('Authorization', `Bearer ${bearer(OFFICE)}`)).body.data as { type: string; data: { batch?: string; line?: Line } }[];
  // tokengate's clock and the gateway's (this sandbox is an external one: it follows no /test/clock of tokengate's).
  const advance = async (ms: number) => {
    const res = await fetch(`${bff.adminUrl}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: ms }) });
    expect(res.status).toBe(200);
    bff.sandbox.clock.advance(ms);
  };

  const metric = async (name: string) => Number((await fetch(`${bff.adminUrl}/metrics`).then((r) => r.text())).match(new RegExp(`^${name} (\\d+)`, 'm'))?.[1] ?? NaN);
  // The merchant's daily close, twelve hours ahead of the sandbox's clock: only a jump of the clock reaches it here.
  let closeAt = '';

  beforeAll(async () => {
    // Looks every 200 ms: the sweep is checked after each, and runs once a day of tokengate's clock.
    bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, GATEWAY_WEBHOOK_SECRET: SECRET, SETTLEMENTS_LOOK_MS: '200' } });
    closeAt = new Date(bff.sandbox.clock.now() + 12 * 3600_000).toISOString().slice(11, 16);
    bff.sandbox.update({ batchCloseAt: closeAt, webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
  });
  afterAll(() => bff.stop());

  let failedBatch = '';
  it('when the gateway says a batch did not close, then tokengate counts it, reads nothing, and its sales stay unsettled', async () => {
    const key = await sale('5.00');
    failedBatch = bff.sandbox.ledger.get(key)?.batch as string;
    const res = await fetch(`${bff.sandbox.url}/_sandbox/batches/close`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fail: 'Unexpected error closing batch' }) });
    expect(res.status).toBe(200);
    await eventually(async () => (await metric('tokengate_settlement_batch_failures_total')) === 1, 10_000);
    // No read of the batch (its totals or its lines): only the looks' GET /batches.
    expect(await fetch(`${bff.adminUrl}/metrics`).then((r) => r.text())).not.toMatch(/tokengate_settlement_gateway_calls_total\{call="batch(_transactions)?"\}/);
    expect((await settlement(failedBatch)).status).toBe(404);
    const view = await request(bff.url).get(`/v1/sales/${key}`).set('Authorization', `Bearer ${token({ sub: 'settlements-missing', scope: 'sales:read customers:any' })}`);
    expect(view.body.status).toBe('pending_settlement');
  });

  it('when the clock passes the merchant\'s close time, then the sandbox closes the open batch by itself and its settlement is kept', async () => {
    const key = await sale('6.00');
    expect(bff.sandbox.ledger.get(key)?.batch).toBe(failedBatch);
    await advance(13 * 3600_000);
    await eventually(async () => (await settlement(failedBatch)).status === 200, 10_000);
    const res = await settlement(failedBatch);
    expect(res.body.closed_at.slice(11, 16)).toBe(closeAt);
    expect(res.body.counts).toEqual({ matched: 2, amount_differs: 0, not_ours: 0, missing: 0 });
  });

  it('when a sale tokengate saw approved is in no closed batch two days later, then its batch\'s settlement gains one missing line and one settlement.mismatch says so; a matched sale and a voided one are not missing, and a later sweep reports nothing again', async () => {
    const held = await sale('10.00');
    const lost = await sale('20.00');
    const voided = await sale('30.00');
    await drop(lost);
    await drop(voided);
    const v = await request(bff.url).post(`/v1/sales/${voided}/void`).set('Authorization', `Bearer ${bearer(OFFICE)}`).set('Idempotency-Key', `sm-void-${seq++}`);
    expect(v.status).toBe(200);
    const batch = bff.sandbox.ledger.closeBatch();
    await eventually(async () => (await settlement(batch)).status === 200, 10_000);
    expect((await settlement(batch)).body.counts).toEqual({ matched: 1, amount_differs: 0, not_ours: 0, missing: 0 });

    await advance(2 * DAY + 60_000);
    await eventually(async () => (await settlement(batch)).body.counts.missing === 1, 10_000);
    const res = await settlement(batch);
    expect(res.body.counts).toEqual({ matched: 1, amount_differs: 0, not_ours: 0, missing: 1 });
    const lines = res.body.lines as Line[];
    expect(lines.find((l) => l.transaction === lost)).toEqual({ transaction: lost, sale: lost, amount: '20.00', gateway_amount: '0.00', kind: 'sale', verdict: 'missing' });
    expect(lines.find((l) => l.transaction === held)?.verdict).toBe('matched');
    expect(lines.some((l) => l.transaction === voided)).toBe(false);
    await eventually(async () => (await events()).some((e) => e.type === 'settlement.mismatch' && e.data.line?.transaction === lost));
    const csv = await request(bff.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${bearer(FINANCE)}`).set('Accept', 'text/csv');
    expect(csv.text).toContain(`,${lost},${lost},sale,20.00,0.00,missing,,,,,\r\n`);

    // The next day's sweep (one ran: the clock moved a day past it) finds nothing new to say.
    const sweeps = async () => (await fetch(`${bff.adminUrl}/metrics`).then((r) => r.text())).match(/^tokengate_settlement_sweeps_total (\d+)/m)?.[1];
    const before = Number(await sweeps());
    await advance(DAY + 60_000);
    await eventually(async () => Number(await sweeps()) > before, 10_000);
    const again = await settlement(batch);
    expect(again.body.counts.missing).toBe(1);
    const mismatches = (await events()).filter((e) => e.type === 'settlement.mismatch' && e.data.line?.verdict === 'missing');
    expect(mismatches.map((e) => [e.data.batch, e.data.line?.transaction])).toEqual([[batch, lost]]);
  });
});
