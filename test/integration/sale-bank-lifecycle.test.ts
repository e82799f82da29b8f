import { randomBytes } from 'node:crypto';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';
import { callSandbox } from '../../src/sandbox/client';

/**
 * A bank payment's life (contract, "Bank payments"; guarantee 14; issue 38): the sandbox's ACH clock moves it
 * (src/sandbox/ach/) and its `ach.*` webhooks, signed, reach tokengate's intake, which applies them without a gateway
 * read: pending → submitted (void refused, a refund credits it back) → settled → returned (`return_code`,
 * `returned_at`, `amount_returned`, `sale.returned`), and a refund of a returned payment answers 409
 * `sale_not_refundable`. A notice of change flags the saved method and emits `payment_method.bank_notice`.
 */
const SECRET = 'gateway-webhook-signature-key-for-bank-payments';
const DAY = 86_400_000;
const run = randomBytes(3).toString('hex');
let n = 0;
const id = (what: string) => `${what}-${run}-${++n}`;
const service = () => token({ sub: `bank-life-${run}`, scope: 'customers:any sales:create sales:read sales:void refunds:create payment_methods:read payment_methods:write events:read' }, { expiresIn: 600 });
const AGREED = 'I authorize this debit (v1)';

let bff: Bff;
beforeAll(async () => {
  bff = await startBff({ env: { GATEWAY_WEBHOOK_SECRET: SECRET } });
  bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
});
afterAll(() => bff?.stop());

const customer = (i: number) => (bff.sandbox.fixtures.customers[i] as { key: string }).key;
const pay = async (c: string, account: string, extra: Record<string, unknown> = {}) => {
  const payment_key = bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account });
  const res = await call(bff.url, 'POST', '/v1/sales', service(), { customer: c, amount: '30.00', payment_key, authorization: { text: AGREED }, ...extra }, { 'idempotency-key': id('pay') });
  expect(res.status).toBe(201);
  return res.body as { key: string; payment_method?: string };
};
const sale = async (key: string) => (await call(bff.url, 'GET', `/v1/sales/${key}`, service())).body as Record<string, unknown>;
const events = async (type: string, key: string) => {
  const res = await call(bff.url, 'GET', '/v1/events?limit=1000', service());
  return (res.body.data as { type: string; data: { key: string } }[]).filter((e) => e.type === type && e.data.key === key);
};
/** Deliveries tokengate's intake answered 2xx. */
const delivered = (type: string) => bff.sandbox.webhooks.attempts().filter((a) => a.outcome === 'delivered' && a.event_type === type).length;

test('when the clock passes the cut-off, then the payment is submitted: void answers 409 sale_not_voidable with nothing sent and a refund credits the account back', async () => {
  const { key } = await pay(customer(17), '000111222333');
  bff.sandbox.clock.advance(DAY);
  await eventually(async () => (await sale(key)).status !== 'pending');
  expect(['submitted', 'settled']).toContain((await sale(key)).status);
  await eventually(async () => (await events('sale.submitted', key)).length === 1);
  const ops = bff.sandbox.ledger.operations().length;
  const voided = await call(bff.url, 'POST', `/v1/sales/${key}/void`, service(), undefined, { 'idempotency-key': id('void') });
  expect([voided.status, voided.body.error?.code]).toEqual([409, 'sale_not_voidable']);
  // Refused from tokengate's record: no void went to the gateway.
  expect(bff.sandbox.ledger.operations()).toHaveLength(ops);
  const refund = await call(bff.url, 'POST', `/v1/sales/${key}/refunds`, service(), { amount: '10.00' }, { 'idempotency-key': id('refund') });
  expect(refund.status).toBe(201);
  expect(bff.sandbox.ledger.get(key)?.refunds).toHaveLength(1);
});

test('when a pending bank payment is refunded, then the answer is 409 sale_not_refundable (void it instead) and nothing is sent', async () => {
  const { key } = await pay(customer(20), '000111222555');
  expect(await sale(key)).toMatchObject({ status: 'pending' });
  const ops = bff.sandbox.ledger.operations().length;
  const refund = await call(bff.url, 'POST', `/v1/sales/${key}/refunds`, service(), { amount: '1.00' }, { 'idempotency-key': id('refund-pending') });
  expect([refund.status, refund.body.error?.code]).toEqual([409, 'sale_not_refundable']);
  expect(refund.body.error?.message).toMatch(/void/);
  expect(bff.sandbox.ledger.operations()).toHaveLength(ops);
  expect(await sale(key)).toMatchObject({ status: 'pending', amount_refunded: '0.00' });
});

test('when a refund of a submitted bank payment is voided at the gateway (its ach.voided names the refund, not the sale), then the money is back in the view and refund.voided is emitted once', async () => {
  const { key } = await pay(customer(19), '000111222444');
  bff.sandbox.clock.advance(DAY);
  await eventually(async () => (await sale(key)).status !== 'pending');
  const refund = await call(bff.url, 'POST', `/v1/sales/${key}/refunds`, service(), { amount: '1.00' }, { 'idempotency-key': id('refund') });
  expect(refund.status).toBe(201);
  expect(await sale(key)).toMatchObject({ amount_refunded: '1.00' });
  const voided = await callSandbox(bff.sandbox.baseUrl, 'POST', 'transactions', { body: { command: 'void', trankey: refund.body.key } });
  expect((voided.json as { result_code?: string }).result_code).toBe('A');
  expect(bff.sandbox.ledger.get(key)).toMatchObject({ refunded: '0.00' });
  await eventually(async () => (await events('refund.voided', refund.body.key as string)).length === 1);
  expect(await sale(key)).toMatchObject({ amount_refunded: '0.00', refunds: [expect.objectContaining({ key: refund.body.key, status: 'voided' })] });
  // The same step delivered again changes nothing and emits nothing more.
  const [step] = bff.sandbox.webhooks.events().filter((e) => e.event_type === 'ach.voided' && (e.payload.event_body as { object: { key: string } }).object.key === refund.body.key);
  const before = delivered('ach.voided');
  await bff.sandbox.webhooks.redeliver(step?.event_id as string);
  await eventually(() => delivered('ach.voided') > before);
  expect(await events('refund.voided', refund.body.key as string)).toHaveLength(1);
  expect(await sale(key)).toMatchObject({ amount_refunded: '0.00' });
});

test('when a return test account is debited, then days later the payment is returned with its code and date, sale.returned is emitted once, and a refund of it answers 409 sale_not_refundable with nothing sent', async () => {
  const { key } = await pay(customer(18), '10178102');
  bff.sandbox.clock.advance(5 * DAY);
  await eventually(async () => (await sale(key)).status === 'returned');
  const got = await sale(key);
  expect(got).toMatchObject({ status: 'returned', return_code: 'R02', amount_returned: '30.00', authorization: { text: AGREED, sec: 'WEB' } });
  expect(got.returned_at).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  await eventually(async () => (await events('sale.settled', key)).length === 1 && (await events('sale.returned', key)).length === 1);
  const ops = bff.sandbox.ledger.operations().length;
  const refund = await call(bff.url, 'POST', `/v1/sales/${key}/refunds`, service(), undefined, { 'idempotency-key': id('refund-returned') });
  expect([refund.status, refund.body.error?.code]).toEqual([409, 'sale_not_refundable']);
  expect(bff.sandbox.ledger.operations()).toHaveLength(ops);
  // The same return delivered again changes nothing and emits nothing more.
  const [returned] = bff.sandbox.webhooks.events().filter((e) => e.event_type === 'ach.returned' && (e.payload.event_body as { object: { key: string } }).object.key === key);
  const before = delivered('ach.returned');
  await bff.sandbox.webhooks.redeliver(returned?.event_id as string);
  await eventually(() => delivered('ach.returned') > before);
  expect(await events('sale.returned', key)).toHaveLength(1);
});

test('when the bank sends a notice of change about a kept account, then the wallet flags the method with the code only and payment_method.bank_notice is emitted', async () => {
  const c = customer(19);
  const { key, payment_method: pmkey } = await pay(c, '000444555666', { save_payment_method: true });
  expect(pmkey).toBeDefined();
  // The wallet screen was read once: the view holds the method the notice flags.
  expect((await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, service())).status).toBe(200);
  bff.sandbox.achNote(key, 'C02:Corrected Routing:011000015');
  await eventually(async () => ((await call(bff.url, 'GET', '/v1/events?limit=1000', service())).body.data as { type: string }[]).some((e) => e.type === 'payment_method.bank_notice'));
  const listed = (await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, service())).body.data as { key: string; bank_notice?: unknown }[];
  const method = listed.find((m) => m.key === pmkey);
  expect(method?.bank_notice).toMatchObject({ code: 'C02', description: 'Corrected Routing' });
  expect(JSON.stringify(listed)).not.toContain('011000015');
});
