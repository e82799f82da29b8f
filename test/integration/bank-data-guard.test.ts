import { startBff, token, type Bff } from '../support/bff';
import { call, gatewayCalls, type Answer } from '../support/wallet';

/**
 * Raw bank data is refused at the door (issue 38, first bullet; contract: 422 `bank_data_forbidden`): a field that
 * names it, or a routing number beside an account number in any value, on every route that takes a body or a
 * query. Nothing reaches the gateway, the error body never echoes the numbers, and no log line holds them.
 */

const ROUTING = '021000021';
const ACCOUNT = '10178101';
let bff: Bff;
let custkey: string;
let pmkey: string;
let seq = 0;

beforeAll(async () => {
  bff = await startBff();
  const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
  if (!found) throw new Error('fixture card 4000100011112224 is missing');
  custkey = found.customer.key;
  pmkey = found.method.key;
});
afterAll(() => bff?.stop());

const idem = () => ({ 'idempotency-key': `bank-guard-${Date.now()}-${(seq += 1)}` });
const office = () => token({ sub: 'bank-guard-office', scope: 'customers:any customers:read customers:write payment_methods:read payment_methods:write sales:create sales:read refunds:create subscriptions:read subscriptions:write' });

function expectRefused(res: Answer): void {
  expect(res.status).toBe(422);
  expect(res.body.error?.code).toBe('bank_data_forbidden');
  expect(JSON.stringify(res.body)).not.toMatch(new RegExp(`${ROUTING}|${ACCOUNT}`));
}

const inText = `please debit ${ROUTING} ${ACCOUNT}`;

describe('bank data in a request', () => {
  it('when a sale carries a bank field or bank numbers in its invoice, then 422 bank_data_forbidden, not echoed, not logged, nothing sent', async () => {
    const before = gatewayCalls(bff);
    const sale = { customer: custkey, payment_method: pmkey, amount: '5.00' };
    expectRefused(await call(bff.url, 'POST', '/v1/sales', office(), { ...sale, invoice: `⑆${ROUTING}⑆ ${ACCOUNT}⑈` }, idem()));
    expectRefused(await call(bff.url, 'POST', '/v1/sales', office(), { ...sale, check: { routing: ROUTING, account: ACCOUNT, accountholder: 'A B' } }, idem()));
    expectRefused(await call(bff.url, 'POST', '/v1/sales', office(), { ...sale, Routing_Number: ROUTING }, idem()));
    expect(gatewayCalls(bff)).toBe(before);
    expect(bff.logs()).toContain('bank data rejected');
    expect(bff.logs()).not.toMatch(new RegExp(`${ROUTING}|${ACCOUNT}`));
  });

  it('when a 9-digit invoice passes the ABA check alone, then the sale is charged (an ordinary id is never refused)', async () => {
    const res = await call(bff.url, 'POST', '/v1/sales', office(), { customer: custkey, payment_method: pmkey, amount: '5.01', invoice: ROUTING }, idem());
    expect(res.status).toBe(201);
  });

  it('when a customer is created or changed with bank data, then 422 bank_data_forbidden and nothing sent', async () => {
    const before = gatewayCalls(bff);
    expectRefused(await call(bff.url, 'POST', '/v1/customers', office(), { customerid: `bank-${seq}`, company: 'Acme', description: inText }, idem()));
    expectRefused(await call(bff.url, 'POST', '/v1/customers', office(), { customerid: `bank-${seq}`, company: 'Acme', bank_account: { account_number: ACCOUNT } }, idem()));
    expectRefused(await call(bff.url, 'PATCH', `/v1/customers/${custkey}`, office(), { description: `routing: ${ROUTING}, acct: ${ACCOUNT}` }));
    expect(gatewayCalls(bff)).toBe(before);
  });

  it('when a payment method is added or changed with bank data, then 422 bank_data_forbidden and nothing sent', async () => {
    const before = gatewayCalls(bff);
    expectRefused(await call(bff.url, 'POST', `/v1/customers/${custkey}/payment_methods`, office(), { payment_key: 'pk_x', routing: ROUTING, account: ACCOUNT }, idem()));
    expectRefused(await call(bff.url, 'PATCH', `/v1/customers/${custkey}/payment_methods/${pmkey}`, office(), { method_name: `${ROUTING} / ${ACCOUNT}` }));
    expect(gatewayCalls(bff)).toBe(before);
  });

  it('when a subscription is created or changed with bank data, then 422 bank_data_forbidden and nothing charged', async () => {
    const before = gatewayCalls(bff);
    expectRefused(await call(bff.url, 'POST', `/v1/customers/${custkey}/subscriptions`, office(), { amount: '9.99', interval: 'month', consent: { text: 'v1' }, description: inText }, idem()));
    expectRefused(await call(bff.url, 'PATCH', '/v1/subscriptions/anykey', office(), { description: `acct ${ACCOUNT} routing ${ROUTING}` }));
    expect(gatewayCalls(bff)).toBe(before);
  });

  it('when a query carries bank data, then 422 bank_data_forbidden; a list asked normally answers', async () => {
    expectRefused(await call(bff.url, 'GET', `/v1/customers?limit=5&note=${encodeURIComponent(inText)}`, office()));
    expectRefused(await call(bff.url, 'GET', `/v1/customers?account_number=${ACCOUNT}`, office()));
    expect((await call(bff.url, 'GET', '/v1/customers?limit=5', office())).status).toBe(200);
  });
});
