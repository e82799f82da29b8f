import { randomBytes } from 'node:crypto';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call, gatewayCalls, gatewayCallsOf, mintPaymentKey } from '../support/wallet';

/**
 * Customers (issue 26, item 1): created by internal services through the one write protocol, one per merchant
 * customerid (also when two creates race on two replicas), read from tokengate's view (issue 25, item 1), changed
 * and removed with the contract's scopes. The sandbox's request counts are the judge of gateway calls.
 */

let bff: Bff;
let other: { url: string; stop(): Promise<void> };
const run = randomBytes(3).toString('hex');
let n = 0;
const id = (what: string) => `${what}-${run}-${++n}`;
const svc = () => token({ sub: `wallet-svc-${run}`, scope: 'customers:write customers:read customers:any payment_methods:read payment_methods:write tokens:read sales:create sales:read' });
const shopper = (custkey: string, scope = 'customers:read customers:write payment_methods:read sales:create sales:read') => token({ sub: `shopper-${run}`, custkey, scope });
const customersAtGateway = () => bff.sandbox.fixtures.customers.length;
const atGateway = (custkey: string) => bff.sandbox.fixtures.customers.find((c) => c.key === custkey);

beforeAll(async () => {
  bff = await startBff({ env: { GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '200', RECONCILE_MAX_PROCESSING_MS: '1500' } });
  other = await bff.replica();
});
afterAll(() => bff?.stop());
afterEach(() => bff.sandbox.faults.clear());

const create = (body: Record<string, unknown>, key = id('create'), base = bff.url) => call(base, 'POST', '/v1/customers', svc(), body, { 'idempotency-key': key });
const signUp = (customerid: string) => ({ customerid, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' });

describe('POST /v1/customers', () => {
  it('when an internal service signs a shopper up, then 201 the customer with no payment method, and reading it costs no gateway call', async () => {
    const before = customersAtGateway();
    const res = await create(signUp(id('user')));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'customer', key: expect.stringMatching(/^[a-z0-9]{16}$/), first_name: 'Ada', last_name: 'Lovelace', payment_methods: [] });
    expect(customersAtGateway()).toBe(before + 1);
    const custkey = res.body.key as string;
    const calls = gatewayCalls(bff);
    // The shopper's first screens, on another replica: the customer and its (empty) wallet, from the view.
    const got = await call(other.url, 'GET', `/v1/customers/${custkey}`, shopper(custkey));
    const list = await call(other.url, 'GET', `/v1/customers/${custkey}/payment_methods`, shopper(custkey));
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ key: custkey, email: 'ada@example.com', payment_methods: [] });
    expect(got.headers.get('cache-status')).toMatch(/^tokengate; hit; ttl=\d+$/);
    expect(list.body).toMatchObject({ type: 'list', data: [], total: 0 });
    expect(gatewayCalls(bff)).toBe(calls);
  });

  it('when the same Idempotency-Key is sent again, then the answer is replayed and the gateway made one customer', async () => {
    const key = id('key');
    const body = signUp(id('user'));
    const first = await create(body, key);
    const before = customersAtGateway();
    const again = await create(body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.key).toBe(first.body.key);
    expect(customersAtGateway()).toBe(before);
  });

  it('when a sign-up is retried with a fresh key, then 409 customer_exists names the first customer and none is made', async () => {
    const body = signUp(id('user'));
    const first = await create(body);
    const before = customersAtGateway();
    const again = await create({ ...body, first_name: 'Augusta' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'customer_exists', custkey: first.body.key });
    expect(customersAtGateway()).toBe(before);
  });

  it('when two creates of one customerid race on two replicas, then the gateway makes one customer and the other create names it', async () => {
    const body = signUp(id('user'));
    const before = customersAtGateway();
    bff.sandbox.update({ latencyMs: 150 }); // both are in flight at once
    let answers;
    try {
      answers = await Promise.all([create(body, id('race'), bff.url), create(body, id('race'), other.url)]);
    } finally {
      bff.sandbox.update({ latencyMs: 0 });
    }
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    const made = answers.find((a) => a.status === 201) as (typeof answers)[number];
    const refused = answers.find((a) => a.status === 409) as (typeof answers)[number];
    expect(refused.body.error).toMatchObject({ code: 'customer_exists', custkey: made.body.key });
    expect(customersAtGateway()).toBe(before + 1);
  });

  it('when the create\'s answer is lost, then 504, a retry is 409 outcome_unknown, and the reconciler finds the customer by its customerid', async () => {
    const key = id('lost');
    const body = signUp(id('user'));
    bff.sandbox.faults.next({ kind: 'hang', match: 'customers', when: 'after' });
    const lost = await create(body, key);
    expect(lost.status).toBe(504);
    const made = bff.sandbox.fixtures.customers.find((c) => c.customerid === body.customerid);
    expect(made).toBeDefined();
    const retry = await create(body, key);
    expect([409, 201]).toContain(retry.status);
    let replay = retry;
    await eventually(async () => (replay = await create(body, key)).status === 201, 10_000, 200);
    expect(replay.headers.get('tokengate-reconciled')).toBe('true');
    expect(replay.body.key).toBe(made?.key);
    // The claim names it now: a fresh key is told which customer exists.
    const fresh = await create(body);
    expect(fresh.body.error).toMatchObject({ code: 'customer_exists', custkey: made?.key });
    expect(bff.sandbox.fixtures.customers.filter((c) => c.customerid === body.customerid)).toHaveLength(1);
  });

  it('when a field holds a card number, then 422 card_data_forbidden and nothing reaches the gateway', async () => {
    const before = gatewayCallsOf(bff, 'customers');
    const res = await create({ ...signUp(id('user')), description: 'card 4000 1000 1111 2224' });
    expect(res.status).toBe(422);
    expect(res.body.error?.code).toBe('card_data_forbidden');
    expect(JSON.stringify(res.body)).not.toContain('2224');
    expect(gatewayCallsOf(bff, 'customers')).toBe(before);
  });

  it('when the body lacks a name or customerid, or a shopper\'s token asks, then 400 or 403 and nothing is sent', async () => {
    const before = gatewayCallsOf(bff, 'customers');
    expect((await create({ customerid: id('user'), first_name: 'Only' })).status).toBe(400);
    expect((await create({ company: 'No Id Inc' })).status).toBe(400);
    const bound = await call(bff.url, 'POST', '/v1/customers', shopper('somecustomer', 'customers:write customers:any'), signUp(id('user')), { 'idempotency-key': id('k') });
    expect(bound.status).toBe(403);
    expect(gatewayCallsOf(bff, 'customers')).toBe(before);
  });
});

describe('GET, PATCH and DELETE /v1/customers/{custkey}', () => {
  let custkey: string;
  beforeAll(async () => {
    custkey = (await create(signUp(id('user')))).body.key as string;
  });

  it('when a shopper changes its customer on one replica, then the next read on another shows it with no gateway call', async () => {
    const res = await call(bff.url, 'PATCH', `/v1/customers/${custkey}`, shopper(custkey), { email: 'new@example.com', city: 'London' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ key: custkey, email: 'new@example.com', city: 'London', first_name: 'Ada' });
    const calls = gatewayCalls(bff);
    const got = await call(other.url, 'GET', `/v1/customers/${custkey}`, shopper(custkey));
    expect(got.body).toMatchObject({ email: 'new@example.com', city: 'London' });
    expect(gatewayCalls(bff)).toBe(calls);
    expect(atGateway(custkey)).toMatchObject({ email: 'new@example.com' });
  });

  it('when the caller asks for the gateway\'s word, then one read in its share, said by Cache-Status', async () => {
    const calls = gatewayCalls(bff);
    const got = await call(bff.url, 'GET', `/v1/customers/${custkey}`, shopper(custkey), undefined, { 'cache-control': 'no-cache' });
    expect(got.status).toBe(200);
    expect(got.headers.get('cache-status')).toBe('tokengate; fwd=request; stored');
    expect(got.headers.get('age')).toBe('0');
    expect(gatewayCalls(bff)).toBe(calls + 1);
  });

  it('when a token is bound to another customer, or binds none without customers:any, then 404 with no hint', async () => {
    for (const t of [shopper('someoneelse1'), token({ sub: 'unbound', scope: 'customers:read customers:write' })]) {
      expect((await call(bff.url, 'GET', `/v1/customers/${custkey}`, t)).status).toBe(404);
      expect((await call(bff.url, 'PATCH', `/v1/customers/${custkey}`, t, { city: 'Paris' })).status).toBe(404);
    }
  });

  it('when a PATCH carries a card number, then 422 and nothing is sent', async () => {
    const before = gatewayCallsOf(bff, 'customers');
    const res = await call(bff.url, 'PATCH', `/v1/customers/${custkey}`, shopper(custkey), { description: '4000100011112224' });
    expect(res.status).toBe(422);
    expect(gatewayCallsOf(bff, 'customers')).toBe(before);
  });

  it('when a shopper\'s token asks to delete its customer, then 403: deletion is for internal services', async () => {
    const res = await call(bff.url, 'DELETE', `/v1/customers/${custkey}`, shopper(custkey, 'customers:write'));
    expect(res.status).toBe(403);
    expect(atGateway(custkey)).toBeDefined();
  });

  it('when a customer is deleted, then 204 and from then on no look-up, list, token or sale for it succeeds on any replica, and its customerid is free', async () => {
    const customerid = id('user');
    const made = await create(signUp(customerid));
    const key = made.body.key as string;
    // A purchase before the removal (a new card, not kept).
    const paid = await call(bff.url, 'POST', '/v1/sales', shopper(key), { customer: key, amount: '3.00', payment_key: await mintPaymentKey(bff, shopper(key), '4000100011112224') }, { 'idempotency-key': id('sale') });
    expect(paid.status).toBe(201);
    expect((await call(bff.url, 'GET', `/v1/sales/${paid.body.key as string}`, shopper(key))).status).toBe(200);
    const del = await call(bff.url, 'DELETE', `/v1/customers/${key}`, svc());
    expect(del.status).toBe(204);
    expect(atGateway(key)).toBeUndefined();
    for (const base of [bff.url, other.url]) {
      expect((await call(base, 'GET', `/v1/customers/${key}`, shopper(key))).status).toBe(404);
      expect((await call(base, 'GET', `/v1/customers/${key}/payment_methods`, svc())).status).toBe(404);
      expect((await call(base, 'GET', `/v1/customers/${key}/payment_methods/anypm/token`, svc())).status).toBe(404);
      const sale = await call(base, 'POST', '/v1/sales', shopper(key), { customer: key, payment_method: 'anypm', amount: '1.00' }, { 'idempotency-key': id('sale') });
      expect(sale.status).toBe(404);
    }
    // Its sales: out of the shopper's reach, still the merchant's to read (and refund).
    expect((await call(other.url, 'GET', `/v1/sales/${paid.body.key as string}`, shopper(key))).status).toBe(404);
    expect((await call(other.url, 'GET', `/v1/sales/${paid.body.key as string}`, svc())).status).toBe(200);
    // The same caller's retry replays the removal; the merchant's user can sign up again.
    expect((await call(bff.url, 'DELETE', `/v1/customers/${key}`, svc())).status).toBe(204);
    const again = await create(signUp(customerid));
    expect(again.status).toBe(201);
    expect(again.body.key).not.toBe(key);
  });
});

describe('a new customer\'s first card', () => {
  it('when a customer\'s first card is added, then the 201 says default: true, the payment_method.added event says the same, and the list agrees (exactly one default)', async () => {
    const c = (await create(signUp(id('first')))).body.key as string;
    const writer = shopper(c, 'payment_methods:read payment_methods:write');
    const added = await call(bff.url, 'POST', `/v1/customers/${c}/payment_methods`, writer, { payment_key: await mintPaymentKey(bff, writer, '4000100011112224') }, { 'idempotency-key': id('first-card') });
    expect([added.status, added.body.default]).toEqual([201, true]);
    const ledger = token({ sub: 'events-ledger', scope: 'events:read customers:any' });
    const events = (await call(bff.url, 'GET', '/v1/events?limit=1000', ledger)).body.data as { type: string; data: { key?: string; default?: boolean } }[];
    expect(events.filter((e) => e.type === 'payment_method.added' && e.data.key === added.body.key).map((e) => e.data.default)).toEqual([true]);
    const listed = (await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, writer)).body.data as { key: string; default: boolean }[];
    expect(listed.filter((m) => m.default).map((m) => m.key)).toEqual([added.body.key]);
  });
});

describe('the wallet in the payment event log', () => {
  it('when a customer is created, a card stored and removed, and the customer removed, then the event log tells each once', async () => {
    const made = await create(signUp(id('user')));
    const c = made.body.key as string;
    const paid = await call(bff.url, 'POST', '/v1/sales', shopper(c, 'payment_methods:read payment_methods:write sales:create sales:read'), { customer: c, amount: '4.00', payment_key: await mintPaymentKey(bff, shopper(c), '4000100011112224'), save_payment_method: true }, { 'idempotency-key': id('sale') });
    const pm = paid.body.payment_method as string;
    expect(pm).toBeTruthy();
    const removeCard = () => call(bff.url, 'DELETE', `/v1/customers/${c}/payment_methods/${pm}`, token({ sub: 'events-app', custkey: c, scope: 'payment_methods:write' }));
    expect((await removeCard()).status).toBe(204);
    expect((await removeCard()).status).toBe(204); // a replay adds no event
    expect((await call(bff.url, 'DELETE', `/v1/customers/${c}`, svc())).status).toBe(204);
    const ledger = token({ sub: 'events-ledger', scope: 'events:read customers:any' });
    const events = (await call(bff.url, 'GET', '/v1/events?limit=1000', ledger)).body.data as { type: string; data: { key?: string; ccnum4last?: string } }[];
    const about = (type: string, key: string) => events.filter((e) => e.type === type && e.data.key === key);
    expect(about('customer.created', c)).toHaveLength(1);
    expect(about('payment_method.added', pm)).toHaveLength(1);
    expect(about('payment_method.removed', pm)).toEqual([expect.objectContaining({ data: expect.objectContaining({ key: pm, ccnum4last: '2224' }) })]);
    expect(about('customer.deleted', c)).toHaveLength(1);
  });
});
