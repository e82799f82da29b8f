import { createHmac } from 'node:crypto';
import request from 'supertest';
import examples from '../fixtures/gateway-webhooks/reference-examples.json';
import { callSandbox } from '../../src/sandbox/client';
import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/**
 * Issue 36, item 0: every example body of the REST reference's Webhooks section (test/fixtures/gateway-webhooks/,
 * copied as written), signed with the merchant's key, answers 2xx, and each money one is applied to its sale.
 * Only the transaction's (and its batch's) key is replaced by one of a sale tokengate made, so the event is about
 * it; every other field stays the reference's (no trantype_code or status_code, refnum a number or a string, a
 * void with no amount, a refund that names no sale). The sandbox's own webhooks are off here: the change is made
 * at the sandbox directly (the gateway's console), and the reference's body tells tokengate of it.
 */
const SECRET = 'gateway-webhook-examples-key';
const MERCHANT = '5qwnn5b51gnkd1b'; // the reference's examples' merchant
type Example = { event_body: { merchant: { merch_key: string }; object: Record<string, unknown> }; event_id: string };
const EXAMPLES = examples.examples as unknown as Record<string, Example>;

describe('the reference\'s webhook examples, signed, against tokengate', () => {
  const { prefix } = suiteRedis('gw-examples');
  let bff: Bff;
  let customer: string;
  let approved: string;
  let seq = 0;
  const idem = () => `ex-${Date.now().toString(36)}-${seq++}`;

  beforeAll(async () => {
    bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, GATEWAY_WEBHOOK_SECRET: SECRET, GATEWAY_MERCHANT_KEY: MERCHANT, VIEW_SALE_FRESH_MS: '3600000' } });
    customer = bff.sandbox.fixtures.firstCustomer().key;
    approved = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
  });
  afterAll(() => bff.stop());

  const bearer = () => token({ sub: 'ex-internal', scope: 'customers:any sales:create sales:read sales:capture sales:void refunds:create events:read' });
  const post = (path: string, body?: object) => {
    const r = request(bff.url).post(path).set('Authorization', `Bearer ${bearer()}`).set('Idempotency-Key', idem());
    return body === undefined ? r.send() : r.set('Content-Type', 'application/json').send(JSON.stringify(body));
  };
  const sale = async (amount: string, extra: object = {}) => {
    const res = await post('/v1/sales', { customer, payment_method: approved, amount, ...extra });
    expect(res.status).toBe(201);
    return res.body.key as string;
  };
  const view = async (key: string) => (await request(bff.url).get(`/v1/sales/${key}`).set('Authorization', `Bearer ${bearer()}`)).body;
  const atSandbox = async (body: object) => (await callSandbox(bff.sandbox.baseUrl, 'POST', 'transactions', { body })).json as Record<string, string>;
  const typesOf = async (key: string) => {
    const res = await request(bff.url).get('/v1/events?limit=1000').set('Authorization', `Bearer ${bearer()}`);
    return (res.body.data as { type: string; data: { key: string; sale?: string } }[]).filter((e) => e.data.key === key || e.data.sale === key).map((e) => e.type);
  };
  const counted = async (result: string) => {
    const text = (await request(bff.adminUrl).get('/metrics')).text;
    return [...text.matchAll(new RegExp(`^tokengate_gateway_webhooks_total\\{[^}]*result="${result}"[^}]*\\} (\\d+)`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
  };
  const confirmations = async (result: string) => {
    const m = new RegExp(`^tokengate_gateway_webhook_confirmations_total\\{result="${result}"\\} (\\d+)`, 'm').exec((await request(bff.adminUrl).get('/metrics')).text);
    return Number(m?.[1] ?? 0);
  };
  /** The reference's example of `type` about `key` (and its batch), signed and posted; a fresh event_id each time. */
  const deliver = (type: string, key: string, change: (o: Record<string, unknown>) => void = () => undefined, merchant = MERCHANT) => {
    const body = structuredClone(EXAMPLES[type] as Example);
    body.event_body.object.key = key;
    body.event_body.merchant.merch_key = merchant;
    body.event_id = `${body.event_id.slice(0, 40)}${idem().replace(/[^A-Za-z0-9]/g, '')}`.slice(0, 64);
    change(body.event_body.object);
    const raw = JSON.stringify(body);
    return request(bff.url).post('/v1/webhooks/gateway').set('Content-Type', 'application/json').set('X-Signature', createHmac('sha256', SECRET).update(raw).digest('hex')).send(raw);
  };

  it('when transaction.sale.success and .failure arrive as the reference shows them, then each answers 204 and tokengate\'s own sale is one event', async () => {
    const key = await sale('500.00');
    expect((await deliver('transaction.sale.success', key)).status).toBe(204);
    expect((await deliver('transaction.sale.failure', `${key}x`)).status).toBe(204);
    expect(await typesOf(key)).toEqual(['sale.succeeded']);
  });

  it('when transaction.sale.voided and then .unvoided arrive for a void and an unvoid made in the console, then the sale reads voided, then standing again, each confirmed by one read', async () => {
    const key = await sale('500.00');
    const confirmed = await confirmations('confirmed');
    await atSandbox({ command: 'void', trankey: key });
    expect((await deliver('transaction.sale.voided', key)).status).toBe(204);
    expect(await view(key)).toMatchObject({ status: 'voided' });
    await eventually(async () => (await confirmations('confirmed')) === confirmed + 1);
    expect((await atSandbox({ command: 'unvoid', trankey: key })).result_code).toBe('A');
    expect((await deliver('transaction.sale.unvoided', key)).status).toBe(204);
    expect(await view(key)).toMatchObject({ status: 'pending_settlement', amount_captured: '500.00' });
    await eventually(async () => (await confirmations('confirmed')) === confirmed + 2);
    expect(await typesOf(key)).toEqual(['sale.succeeded', 'sale.voided', 'sale.unvoided']);
  });

  it('when transaction.sale.captured and .adjusted arrive (captured 50.00 of 500.00, then adjusted to 5.00), then the sale takes each amount', async () => {
    const key = await sale('500.00', { capture: false });
    await atSandbox({ command: 'cc:capture', trankey: key, amount: '50.00' });
    expect((await deliver('transaction.sale.captured', key, (o) => delete o.batch)).status).toBe(204);
    expect(await view(key)).toMatchObject({ amount_captured: '50.00' });
    await atSandbox({ command: 'cc:adjust', trankey: key, amount: '5.00' });
    expect((await deliver('transaction.sale.adjusted', key, (o) => delete o.batch)).status).toBe(204);
    const after = await view(key);
    expect(Number(after.amount_captured) - Number(after.amount_refunded)).toBe(5);
    expect(await typesOf(key)).toEqual(['sale.authorized', 'sale.captured', 'sale.adjusted']);
  });

  it('when transaction.refund.voided arrives for a refund tokengate made (voided in the console), then the money is given back, the refund is listed voided, refund.voided is logged and "refund all" returns all of it', async () => {
    const key = await sale('40.00');
    await callSandbox(bff.sandbox.baseUrl, 'POST', 'batches/current/close');
    const refund = await post(`/v1/sales/${key}/refunds`, { amount: '15.00' });
    expect(refund.status).toBe(201);
    // The refund's own success event names no sale: tokengate ties it to the sale by its own record of the key.
    expect((await deliver('transaction.refund.success', refund.body.key, (o) => (o.auth_amount = '15.00'))).status).toBe(204);
    expect(await view(key)).toMatchObject({ amount_refunded: '15.00' });
    expect((await atSandbox({ command: 'void', trankey: refund.body.key })).result_code).toBe('A');
    expect((await deliver('transaction.refund.voided', refund.body.key)).status).toBe(204);
    const after = await view(key);
    expect(after).toMatchObject({ amount_refunded: '0.00', refunds: [expect.objectContaining({ key: refund.body.key, status: 'voided' })] });
    // (sale.settled too once tokengate has read the settled sale: whether it did depends on the look-up's shape.)
    expect((await typesOf(key)).filter((t) => t !== 'sale.settled')).toEqual(['sale.succeeded', 'refund.succeeded', 'refund.voided']);
    const rest = await post(`/v1/sales/${key}/refunds`);
    expect(rest.body).toMatchObject({ amount: '40.00' });
    expect(bff.sandbox.ledger.get(key)).toMatchObject({ refunded: '40.00' });
  });

  it('when settlement.batch.success names the batch of tokengate\'s sale, then the sale reads settled; .failure and .queued are acknowledged and change nothing', async () => {
    const key = await sale('6.17');
    const batch = (await view(key)).batch?.key as string;
    const closed = await callSandbox(bff.sandbox.baseUrl, 'POST', 'batches/current/close');
    expect(closed.status).toBe(200);
    expect((await deliver('settlement.batch.failure', batch)).status).toBe(204);
    expect((await deliver('transaction.sale.queued', key)).status).toBe(204);
    expect(await view(key)).toMatchObject({ status: 'pending_settlement' });
    expect((await deliver('settlement.batch.success', batch)).status).toBe(204);
    expect(await view(key)).toMatchObject({ status: 'settled' });
  });

  it('when an event names another merchant, then it is acknowledged, counted foreign and changes nothing', async () => {
    const key = await sale('9.00');
    const foreign = await counted('foreign');
    expect((await deliver('transaction.sale.voided', key, undefined, 'eqwnpjydnzhsg2j')).status).toBe(204);
    expect(await counted('foreign')).toBe(foreign + 1);
    expect(await view(key)).toMatchObject({ status: 'pending_settlement' });
    expect(await typesOf(key)).toEqual(['sale.succeeded']);
  });

  it('when a signed refund event tokengate cannot tie to a sale arrives (a console refund), then it is counted unlinked and no sale changes', async () => {
    const unlinked = await counted('unlinked');
    expect((await deliver('transaction.refund.success', 'enf0c7fms98f8sm')).status).toBe(204);
    expect(await counted('unlinked')).toBe(unlinked + 1);
  });

  it('when a signed event carries a refund the gateway never made (naming its sale), then it is applied, contradicted by the refund\'s look-up and undone', async () => {
    const key = await sale('40.00');
    await callSandbox(bff.sandbox.baseUrl, 'POST', 'batches/current/close');
    const contradicted = await confirmations('contradicted');
    expect((await deliver('transaction.refund.success', 'forgedrefund0001', (o) => Object.assign(o, { auth_amount: '25.00', original: { key } }))).status).toBe(204);
    await eventually(async () => (await confirmations('contradicted')) === contradicted + 1);
    expect(await view(key)).toMatchObject({ amount_refunded: '0.00' });
    expect((await post(`/v1/sales/${key}/refunds`, { amount: '40.00' })).status).toBe(201);
    expect((await typesOf(key)).filter((t) => t !== 'sale.settled')).toEqual(['sale.succeeded', 'refund.succeeded', 'refund.voided', 'refund.succeeded']);
  });

  it('when a signed transaction.refund.voided names a refund of tokengate\'s that the gateway still holds, then it is applied, contradicted by the refund\'s look-up and counted again, so no second refund can exceed the sale', async () => {
    const key = await sale('40.00');
    await callSandbox(bff.sandbox.baseUrl, 'POST', 'batches/current/close');
    const refund = await post(`/v1/sales/${key}/refunds`, { amount: '30.00' });
    expect(refund.status).toBe(201);
    const contradicted = await confirmations('contradicted');
    expect((await deliver('transaction.refund.voided', refund.body.key)).status).toBe(204);
    await eventually(async () => (await confirmations('contradicted')) === contradicted + 1);
    expect(await view(key)).toMatchObject({ amount_refunded: '30.00' });
    const again = await post(`/v1/sales/${key}/refunds`, { amount: '30.00' });
    expect(again.status).toBe(422);
    expect(bff.sandbox.ledger.get(key)).toMatchObject({ refunded: '30.00' });
    expect((await typesOf(key)).filter((t) => t !== 'sale.settled')).toEqual(['sale.succeeded', 'refund.succeeded', 'refund.voided', 'sale.adjusted']);
  });

  it('when a confirmation\'s gateway read fails, then it stays queued in Redis and a later poll confirms it', async () => {
    const key = await sale('11.00');
    await atSandbox({ command: 'void', trankey: key });
    const [confirmed, failedBefore] = [await confirmations('confirmed'), bff.sandbox.faults.pending().length];
    expect(failedBefore).toBe(0);
    // Both tries of the first look-up fail (a read is re-sent once after a 5xx).
    bff.sandbox.faults.next({ kind: '5xx', match: 'lookup', count: 2 });
    expect((await deliver('transaction.sale.voided', key)).status).toBe(204);
    await eventually(() => bff.sandbox.faults.pending().length === 0);
    expect(await confirmations('confirmed')).toBe(confirmed);
    // RECONCILE_RETRY_MS (5 s here) later, a replica's poll takes it from the queue.
    await eventually(async () => (await confirmations('confirmed')) === confirmed + 1, 20_000, 200);
    expect(await view(key)).toMatchObject({ status: 'voided' });
  });
});
