import request from 'supertest';
import { callSandbox } from '../../src/sandbox/client';
import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/**
 * Guarantee 12 (issue 36, items 1, 2 and 0): the gateway's records are the truth about money, and tokengate's view
 * converges to them in both directions. Changes are made at the sandbox directly (the merchant's console); the
 * sandbox's ledger is the judge of what moved.
 */
const SECRET = 'view-converges-webhook-key';

describe('a sale\'s view converges to the gateway\'s records, both directions', () => {
  const { prefix } = suiteRedis('converge');
  let bff: Bff;
  let other: { url: string; stop(): Promise<void> };
  let customer: string;
  let approved: string;
  let seq = 0;
  const idem = () => `cv-${Date.now().toString(36)}-${seq++}`;

  beforeAll(async () => {
    bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, GATEWAY_WEBHOOK_SECRET: SECRET, GATEWAY_MERCHANT_KEY: '5qwnn5b51gnkd1b', VIEW_SALE_FRESH_MS: '3600000' } });
    other = await bff.replica();
    customer = bff.sandbox.fixtures.firstCustomer().key;
    approved = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
  });
  afterAll(() => bff.stop());
  afterEach(() => bff.sandbox.update({ webhookUrls: [], latencyMs: 0, refundWithoutAmount: 'left', lookupAuthAmount: 'listed' }));

  const bearer = () => token({ sub: 'cv-internal', scope: 'customers:any sales:create sales:read sales:capture sales:void refunds:create events:read' });
  const post = (path: string, body?: object, url = bff.url) => {
    const r = request(url).post(path).set('Authorization', `Bearer ${bearer()}`).set('Idempotency-Key', idem());
    return body === undefined ? r.send() : r.set('Content-Type', 'application/json').send(JSON.stringify(body));
  };
  const settledSale = async (amount: string) => {
    const res = await post('/v1/sales', { customer, payment_method: approved, amount });
    expect(res.status).toBe(201);
    await callSandbox(bff.sandbox.baseUrl, 'POST', 'batches/current/close');
    return res.body.key as string;
  };
  const view = (key: string, url = bff.url) => request(url).get(`/v1/sales/${key}`).set('Authorization', `Bearer ${bearer()}`);
  const forced = (key: string, url = bff.url) => view(key, url).set('Cache-Control', 'no-cache');
  const atSandbox = async (body: object) => (await callSandbox(bff.sandbox.baseUrl, 'POST', 'transactions', { body })).json as Record<string, string>;
  const typesOf = async (key: string) => {
    const res = await request(bff.url).get('/v1/events?limit=1000').set('Authorization', `Bearer ${bearer()}`);
    return (res.body.data as { type: string; data: { key: string; sale?: string } }[]).filter((e) => e.data.key === key || e.data.sale === key).map((e) => e.type);
  };
  const hooksOn = () => bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200] });

  it('when a refund tokengate made is voided in the console and the sale is read with no-cache, then the money is back and a refund of all returns all of it', async () => {
    const key = await settledSale('40.00');
    const refund = await post(`/v1/sales/${key}/refunds`, { amount: '15.00' });
    expect(refund.status).toBe(201);
    expect((await atSandbox({ command: 'void', trankey: refund.body.key })).result_code).toBe('A');
    expect((await view(key)).body).toMatchObject({ amount_refunded: '15.00' }); // nothing told tokengate yet
    expect((await forced(key)).body).toMatchObject({ amount_refunded: '0.00' });
    expect((await post(`/v1/sales/${key}/refunds`)).body).toMatchObject({ amount: '40.00' });
    expect(bff.sandbox.ledger.get(key)).toMatchObject({ refunded: '40.00' });
  });

  it('when the sandbox itself sends transaction.refund.voided (naming no sale), then tokengate ties it to its refund, gives the money back and logs refund.voided', async () => {
    hooksOn();
    const key = await settledSale('40.00');
    const refund = await post(`/v1/sales/${key}/refunds`, { amount: '15.00' });
    await atSandbox({ command: 'void', trankey: refund.body.key });
    await eventually(async () => (await typesOf(key)).includes('refund.voided'));
    const after = await view(key);
    expect(after.body).toMatchObject({ amount_refunded: '0.00', refunds: [expect.objectContaining({ key: refund.body.key, status: 'voided', status_code: 'V' })] });
    expect(await typesOf(key)).toEqual(['sale.succeeded', 'sale.settled', 'refund.succeeded', 'refund.voided']);
  });

  it('when a voided sale is unvoided in the console, then a no-cache read and the sandbox\'s own webhook each restore it', async () => {
    const key = (await post('/v1/sales', { customer, payment_method: approved, amount: '12.00' })).body.key as string;
    await atSandbox({ command: 'void', trankey: key });
    expect((await forced(key)).body).toMatchObject({ status: 'voided' });
    await atSandbox({ command: 'unvoid', trankey: key });
    expect((await forced(key)).body).toMatchObject({ status: 'pending_settlement', amount_captured: '12.00' });
    hooksOn();
    await atSandbox({ command: 'void', trankey: key });
    await eventually(async () => (await view(key)).body.status === 'voided');
    await atSandbox({ command: 'unvoid', trankey: key });
    await eventually(async () => (await view(key)).body.status === 'pending_settlement');
  });

  it('when an unsettled sale is adjusted up in the console, then a no-cache read takes the new amount', async () => {
    const key = (await post('/v1/sales', { customer, payment_method: approved, amount: '10.00' })).body.key as string;
    await atSandbox({ command: 'cc:adjust', trankey: key, amount: '12.00' });
    expect((await forced(key)).body).toMatchObject({ amount_captured: '12.00', amount_refunded: '0.00' });
  });

  it('when the look-up carries no auth_amount (SANDBOX_LOOKUP_AUTH_AMOUNT=omitted), then a no-cache read of a partly refunded unsettled sale keeps what tokengate refunded and the bound holds', async () => {
    bff.sandbox.update({ lookupAuthAmount: 'omitted' });
    const key = (await post('/v1/sales', { customer, payment_method: approved, amount: '40.00' })).body.key as string;
    expect((await post(`/v1/sales/${key}/refunds`, { amount: '10.00' })).status).toBe(201);
    // The look-up's `amount` is still 40.00: it says nothing of the refund:adjust, so the view's 10.00 stands.
    expect((await forced(key, other.url)).body).toMatchObject({ amount_captured: '40.00', amount_refunded: '10.00' });
    const over = await post(`/v1/sales/${key}/refunds`, { amount: '31.00' }, other.url);
    expect([over.status, over.body.error?.code]).toEqual([422, 'refund_exceeds_sale']);
    expect((await post(`/v1/sales/${key}/refunds`, { amount: '30.00' }, other.url)).status).toBe(201);
  });

  it('when a no-cache read on one replica races a refund on another, then no second refund can exceed the sale', async () => {
    const key = await settledSale('40.00');
    // Every gateway answer takes 300 ms: the read's look-up (no refund yet) answers while the refund is in flight.
    bff.sandbox.update({ latencyMs: 300 });
    const [read, first] = await Promise.all([forced(key, other.url), post(`/v1/sales/${key}/refunds`, { amount: '30.00' })]);
    expect(read.status).toBe(200);
    expect(first.status).toBe(201);
    bff.sandbox.update({ latencyMs: 0 });
    const second = await post(`/v1/sales/${key}/refunds`, { amount: '30.00' }, other.url);
    expect(second.status).toBe(422);
    expect(second.body.error.code).toBe('refund_exceeds_sale');
    expect((await view(key, other.url)).body).toMatchObject({ amount_refunded: '30.00' });
    expect(bff.sandbox.ledger.get(key)).toMatchObject({ refunded: '30.00' });
  });

  it.each(['left', 'original'] as const)('when the gateway\'s refund without an amount is "%s", then tokengate\'s refund of all after a partial one moves exactly what is left', async (behaviour) => {
    bff.sandbox.update({ refundWithoutAmount: behaviour });
    const key = await settledSale('40.00');
    expect((await post(`/v1/sales/${key}/refunds`, { amount: '15.00' })).status).toBe(201);
    const rest = await post(`/v1/sales/${key}/refunds`);
    expect(rest.status).toBe(201);
    expect(rest.body).toMatchObject({ amount: '25.00' });
    expect(bff.sandbox.ledger.get(key)).toMatchObject({ refunded: '40.00' });
    // The knob is live at the sandbox: an amount-less refund sent straight to it follows it.
    const another = await settledSale('40.00');
    await atSandbox({ command: 'refund', trankey: another, amount: '15.00' });
    const bare = await atSandbox({ command: 'refund', trankey: another });
    expect(bare.result_code).toBe(behaviour === 'left' ? 'A' : 'E');
  });
});
