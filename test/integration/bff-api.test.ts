import request from 'supertest';
import jwt from 'jsonwebtoken';
import { MODES, startBff, token, TEST_JWT_SECRET, ISSUER, AUDIENCE, type Bff } from '../support/bff';

/**
 * The public API of contract.md against the sandbox, real Redis, and the service both in-process and as
 * `node dist/main.js`: error table rows, scopes, customer binding, idempotency, card-data refusal.
 */
describe.each(MODES)('tokengate API (%s)', (mode) => {
  let bff: Bff;
  let custA: string;
  let custB: string;
  let approved: string;
  let declined: string;
  let partial: string;
  let pmOfB: string;
  let seq = 0;
  const key = () => `key-${mode}-${Date.now().toString(36)}-${seq++}`;

  beforeAll(async () => {
    bff = await startBff({ mode });
    const customers = bff.sandbox.fixtures.customers;
    custA = bff.sandbox.fixtures.firstCustomer().key;
    custB = (customers.find((c) => c.key !== custA) as { key: string }).key;
    const pms = bff.sandbox.fixtures.paymentMethods(custA);
    const by = (last4: string) => (pms.find((p) => p.number.endsWith(last4)) as { key: string }).key;
    [approved, declined, partial] = [by('2224'), by('2220'), by('2275')];
    pmOfB = (bff.sandbox.fixtures.paymentMethods(custB)[0] as { key: string }).key;
  });
  afterAll(() => bff.stop());

  const userA = () => token({ sub: `user-a-${mode}`, custkey: custA, scope: 'sales:create payment_methods:read tokens:read' });
  /** `idem: null` sends no Idempotency-Key. */
  const sale = (body: object, idem: string | null = key(), bearer = userA()) => {
    const r = request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer}`).set('Content-Type', 'application/json');
    if (idem !== null) r.set('Idempotency-Key', idem);
    return r.send(JSON.stringify(body));
  };
  const charges = (invoice: string) => bff.sandbox.transactions().filter((t) => t.invoice === invoice);

  describe('sales', () => {
    it('when an approved card is charged, then 201 carries the sale object with masked card and a request id', async () => {
      const res = await sale({ customer: custA, payment_method: approved, amount: '12.34', invoice: `ok-${mode}` });
      expect(res.status).toBe(201);
      expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._-]{8,}$/);
      expect(res.body).toMatchObject({ result_code: 'A', result: 'Approved', amount: '12.34', auth_amount: '12.34', invoice: `ok-${mode}`, is_duplicate: 'N', creditcard: { number: '4000xxxxxxxx2224' }, avs: { result_code: 'YYY' }, cvc: { result_code: 'M' } });
      for (const field of ['key', 'refnum', 'authcode']) expect(typeof res.body[field]).toBe('string');
      expect(res.body.batch).toMatchObject({ type: 'batch' });
      expect(charges(`ok-${mode}`)).toHaveLength(1);
    });

    it('when a card is partially approved, then 201 with result P and half the amount authorised', async () => {
      const res = await sale({ customer: custA, payment_method: partial, amount: '10.00' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ result_code: 'P', auth_amount: '5.00' });
    });

    it('when the card is declined, then 402 card_declined carries the transaction', async () => {
      const res = await sale({ customer: custA, payment_method: declined, amount: '3.00' });
      expect(res.status).toBe(402);
      expect(res.body.error).toMatchObject({ code: 'card_declined', request_id: res.headers['x-request-id'] });
      expect(res.body.error.transaction).toMatchObject({ result_code: 'D', error_code: '10127', creditcard: { number: '4000xxxxxxxx2220' } });
    });

    it('when a finished key is sent again, then the answer is replayed with Idempotent-Replayed and nothing is charged again', async () => {
      const idem = key();
      const body = { customer: custA, payment_method: approved, amount: '7.00', invoice: `replay-${mode}` };
      const first = await sale(body, idem);
      const second = await sale(body, idem);
      expect(second.status).toBe(first.status);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(charges(`replay-${mode}`)).toHaveLength(1);
    });

    it('when a declined key is sent again, then the 402 is replayed, not re-sent', async () => {
      const idem = key();
      const body = { customer: custA, payment_method: declined, amount: '4.00', invoice: `replay-d-${mode}` };
      const first = await sale(body, idem);
      const second = await sale(body, idem);
      expect([first.status, second.status]).toEqual([402, 402]);
      expect(second.body).toEqual(first.body);
      expect(charges(`replay-d-${mode}`)).toHaveLength(1);
    });

    it('when the same key comes with a different body, then 422 idempotency_key_reused', async () => {
      const idem = key();
      await sale({ customer: custA, payment_method: approved, amount: '1.00' }, idem);
      const res = await sale({ customer: custA, payment_method: approved, amount: '2.00' }, idem);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('idempotency_key_reused');
    });

    it('when another caller uses the same key, then it is a different sale (keys are scoped by sub)', async () => {
      const idem = key();
      const body = { customer: custA, payment_method: approved, amount: '1.50', invoice: `scoped-${mode}` };
      const other = token({ sub: `other-${mode}`, custkey: custA, scope: 'sales:create' });
      const a = await sale(body, idem);
      const b = await sale(body, idem, other);
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.headers['idempotent-replayed']).toBeUndefined();
      expect(charges(`scoped-${mode}`)).toHaveLength(2);
    });

    it('when 20 requests with one key arrive at once, then exactly one sale reaches the gateway', async () => {
      const idem = key();
      const invoice = `burst-${mode}`;
      // The slow test card keeps the first attempt in flight while the others arrive.
      const slowPm = bff.sandbox.fixtures.findByNumber('4000000011112226');
      const body = slowPm ? { customer: slowPm.customer.key, payment_method: slowPm.method.key, amount: '9.99', invoice } : { customer: custA, payment_method: approved, amount: '9.99', invoice };
      const bearer = token({ sub: `burst-${mode}`, custkey: body.customer, scope: 'sales:create' });
      const results = await Promise.all(Array.from({ length: 20 }, () => sale(body, idem, bearer)));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
      expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body.error.code).toBe('idempotency_in_progress');
        expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      expect(results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
      expect(charges(invoice)).toHaveLength(1);
    });

    it('when a sale times out at the gateway, then 504, the key turns outcome_unknown (409) and nothing is re-sent', async () => {
      const idem = key();
      const body = { customer: custA, payment_method: approved, amount: '8.00', invoice: `timeout-${mode}` };
      bff.sandbox.faults.next({ kind: 'hang', match: 'sale' });
      const first = await sale(body, idem);
      expect(first.status).toBe(504);
      expect(first.body.error.code).toBe('gateway_timeout');
      const retry = await sale(body, idem);
      expect(retry.status).toBe(409);
      expect(retry.body.error.code).toBe('outcome_unknown');
      expect(charges(`timeout-${mode}`)).toHaveLength(1);
    });

    it('when the connection resets after the sale was read, then 504 and a retry is refused as outcome_unknown', async () => {
      const idem = key();
      const body = { customer: custA, payment_method: approved, amount: '8.50', invoice: `reset-${mode}` };
      bff.sandbox.faults.next({ kind: 'reset', match: 'sale' });
      expect((await sale(body, idem)).status).toBe(504);
      expect((await sale(body, idem)).body.error.code).toBe('outcome_unknown');
      expect(charges(`reset-${mode}`)).toHaveLength(1);
    });

    it('when the gateway answers 5xx to a sale, then 502 gateway_error and the key is not re-sent', async () => {
      const idem = key();
      const body = { customer: custA, payment_method: approved, amount: '6.00', invoice: `fivexx-${mode}` };
      bff.sandbox.faults.next({ kind: '5xx', match: 'sale', status: 503 });
      const first = await sale(body, idem);
      expect(first.status).toBe(502);
      expect(first.body.error.code).toBe('gateway_error');
      const retry = await sale(body, idem);
      expect(retry.status).toBe(409);
      expect(charges(`fivexx-${mode}`)).toHaveLength(0);
    });

    it('when the service restarts, then a finished key still replays (state lives in Redis)', async () => {
      const idem = key();
      const body = { customer: custA, payment_method: approved, amount: '5.55', invoice: `restart-${mode}` };
      const first = await sale(body, idem);
      await bff.restart();
      const again = await sale(body, idem);
      expect(again.status).toBe(first.status);
      expect(again.body).toEqual(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(charges(`restart-${mode}`)).toHaveLength(1);
    });
  });

  describe('the error table', () => {
    it('when Idempotency-Key is missing or too long, then 400 invalid_request', async () => {
      const body = { customer: custA, payment_method: approved, amount: '1.00' };
      for (const idem of [null, 'x'.repeat(256)]) {
        const res = await sale(body, idem);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('invalid_request');
      }
    });

    it.each([
      ['malformed JSON', '{"customer":'],
      ['an unknown field whose name holds a long digit run', JSON.stringify({ customer: 'c', payment_method: 'p', amount: '1.00', surprise_12345678: 1 })],
      ['a numeric amount', JSON.stringify({ customer: 'c', payment_method: 'p', amount: 1 })],
      ['three decimals', JSON.stringify({ customer: 'c', payment_method: 'p', amount: '1.001' })],
      ['a zero amount', JSON.stringify({ customer: 'c', payment_method: 'p', amount: '0.00' })],
      ['tax and tip over the amount', JSON.stringify({ customer: 'c', payment_method: 'p', amount: '1.00', amount_detail: { tax: '0.60', tip: '0.50' } })],
      ['a prototype key', '{"customer":"c","payment_method":"p","amount":"1.00","__proto__":{"x":1}}'],
    ])('when the body has %s, then 400 invalid_request that does not echo it', async (_name, raw) => {
      const res = await request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${userA()}`).set('Idempotency-Key', key()).set('Content-Type', 'application/json').send(raw);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(JSON.stringify(res.body)).not.toContain('surprise');
    });

    it('when the body has an unknown field, then 400 names the field in details, never its value (issue 41)', async () => {
      const res = await sale({ customer: custA, payment_method: approved, amount: '1.00', note: 'secret-value-77' }, key());
      expect([res.status, res.body.error.details]).toEqual([400, [{ path: 'body.note', rule: 'unknown_field' }]]);
      expect(JSON.stringify(res.body)).not.toContain('secret-value-77');
    });

    it('when a token lacks the route\'s scope, then the 403 names it: RFC 6750\'s insufficient_scope challenge and the error\'s details (issue 41)', async () => {
      const shopper = token({ sub: 'scoped', custkey: custA, scope: 'sales:create sales:read' });
      const done = await sale({ customer: custA, payment_method: approved, amount: '2.00' }, key(), shopper);
      const refund = await request(bff.url).post(`/v1/sales/${done.body.key}/refunds`).set('Authorization', `Bearer ${shopper}`).set('Idempotency-Key', key());
      expect(refund.status).toBe(403);
      expect(refund.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="refunds:create"');
      expect(refund.body.error).toMatchObject({ code: 'forbidden', details: [{ path: 'token.scope', rule: 'insufficient_scope', scope: 'refunds:create' }] });
      expect(refund.body.error.message).toContain('refunds:create');
      const list = await request(bff.url).get('/v1/customers').set('Authorization', `Bearer ${token({ sub: 'svc', custkey: custA, scope: 'customers:read' })}`);
      expect([list.status, list.headers['www-authenticate'], list.body.error.details]).toEqual([403, 'Bearer error="insufficient_scope", scope="customers:any"', [{ path: 'token.scope', rule: 'insufficient_scope', scope: 'customers:any' }]]);
      const keep = await sale({ customer: custA, payment_key: 'pk-unused-0001', save_payment_method: true, amount: '1.00' }, key(), shopper);
      expect([keep.status, keep.headers['www-authenticate']]).toEqual([403, 'Bearer error="insufficient_scope", scope="payment_methods:write"']);
    });

    it.each([
      ['no token', undefined],
      ['a malformed token', 'not.a.jwt'],
      ['an expired token', token({ sub: 'u', custkey: 'c', scope: 'sales:create' }, { expiresIn: -120 })],
      ['a wrong issuer', token({ sub: 'u', scope: 'sales:create' }, { issuer: 'someone-else' })],
      ['a wrong audience', token({ sub: 'u', scope: 'sales:create' }, { audience: 'other' })],
      ['a wrong signature', token({ sub: 'u', scope: 'sales:create' }, { secret: 'another-secret-0123456789abcdef' })],
      ['alg none', jwt.sign({ sub: 'u', scope: 'sales:create', iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 60 }, '', { algorithm: 'none' })],
      ['no exp', jwt.sign({ sub: 'u', scope: 'sales:create', iss: ISSUER, aud: AUDIENCE }, TEST_JWT_SECRET, { algorithm: 'HS256', noTimestamp: true })],
    ])('when the caller sends %s, then 401 unauthenticated', async (_name, bearer) => {
      const r = request(bff.url).post('/v1/sales').set('Idempotency-Key', key()).set('Content-Type', 'application/json');
      if (bearer) r.set('Authorization', `Bearer ${bearer}`);
      const res = await r.send(JSON.stringify({ customer: custA, payment_method: approved, amount: '1.00' }));
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthenticated');
      expect(res.headers['www-authenticate']).toBe(bearer ? 'Bearer error="invalid_token"' : 'Bearer');
    });

    it('when the route is unknown, then 404 not_found in the error shape', async () => {
      const res = await request(bff.url).get('/v1/nothing-here');
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found' });
    });

    it('when the body is over 16 KiB, then 413 payload_too_large', async () => {
      const res = await sale({ customer: custA, payment_method: approved, amount: '1.00', invoice: 'x'.repeat(17 * 1024) });
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
    });

    it('when raw card data is sent, then 422 card_data_forbidden and the number is neither echoed nor logged', async () => {
      const attempts = [
        sale({ customer: custA, payment_method: approved, amount: '1.00', invoice: '4000 1000 1111 2224' }),
        sale({ customer: custA, payment_method: approved, amount: '1.00', creditcard: { number: '5555444433332226' } }),
        request(bff.url).get(`/v1/customers/${custA}/payment_methods?note=6011-2222-3333-2224`).set('Authorization', `Bearer ${userA()}`),
        request(bff.url).get(`/v1/customers/${custA}/payment_methods`).set('Authorization', `Bearer ${userA()}`).set('X-Note', '371122223332225'),
      ];
      for (const res of await Promise.all(attempts)) {
        expect(res.status).toBe(422);
        expect(res.body.error.code).toBe('card_data_forbidden');
        expect(JSON.stringify(res.body)).not.toMatch(/4000.?1000.?1111.?2224|5555444433332226|6011.?2222.?3333.?2224|371122223332225/);
      }
      expect(bff.logs()).not.toMatch(/4000.?1000.?1111.?2224|5555444433332226|6011.?2222.?3333.?2224|371122223332225/);
    });

    it('when card data rides in the query, path or headers of /openapi.json, /docs or its assets, then 422 card_data_forbidden like any route, never echoed', async () => {
      const get = (path: string, headers: Record<string, string> = {}) => request(bff.url).get(path).set({ 'X-Request-Id': `probe-docs-${seq++}`, ...headers });
      const probes = [
        get('/openapi.json?q=4000100011112224'),
        get('/docs?q=4000-1000-1111-2224'),
        get('/docs/init.js?note=5555444433332226'),
        get('/docs/swagger-ui-bundle.js?q=6011%202222%203333%202224'),
        get('/openapi.json', { 'X-Note': '4000100011112224' }),
        get('/docs', { 'X-Note': '371122223332225' }),
        get('/docs/swagger-ui.css', { 'X-Card-Number': 'x' }),
        get('/docs/4000100011112224'),
      ];
      for (const res of await Promise.all(probes)) {
        expect([res.status, res.body.error?.code]).toEqual([422, 'card_data_forbidden']);
        expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
        expect(res.headers['x-request-id']).toMatch(/^probe-docs-\d+$/);
        expect(res.text + JSON.stringify(res.headers)).not.toMatch(/4000.?1000.?1111.?2224|5555444433332226|6011.?2222.?3333.?2224|371122223332225/);
      }
      const head = await request(bff.url).head('/docs?q=4000100011112224');
      expect(head.status).toBe(422);
      expect(bff.logs()).not.toMatch(/4000.?1000.?1111.?2224|5555444433332226|6011.?2222.?3333.?2224|371122223332225/);
      // the same routes without card data are served as before
      for (const path of ['/openapi.json?q=hello', '/docs?q=2024-11-26', '/docs/init.js']) expect((await get(path, { 'X-Note': 'order 1234' })).status).toBe(200);
    });
  });

  describe('scopes and customer binding', () => {
    const routes = () => [
      { scope: 'sales:create', call: (t: string) => sale({ customer: custA, payment_method: approved, amount: '1.00' }, key(), t) },
      { scope: 'payment_methods:read', call: (t: string) => request(bff.url).get(`/v1/customers/${custA}/payment_methods`).set('Authorization', `Bearer ${t}`) },
      { scope: 'tokens:read', call: (t: string) => request(bff.url).get(`/v1/customers/${custA}/payment_methods/${approved}/token`).set('Authorization', `Bearer ${t}`) },
      { scope: 'customers:read', call: (t: string) => request(bff.url).get('/v1/customers').set('Authorization', `Bearer ${t}`) },
    ];

    it('when a token lacks the route\'s scope, then 403 forbidden; with it, the route answers', async () => {
      for (const route of routes()) {
        const custkey = route.scope === 'customers:read' ? undefined : custA;
        const others = 'sales:create payment_methods:read tokens:read customers:read'.split(' ').filter((s) => s !== route.scope).join(' ');
        const without = await route.call(token({ sub: 'scoper', custkey, scope: custkey ? others : `${others} customers:any` }));
        expect(without.status).toBe(403);
        expect(without.body.error.code).toBe('forbidden');
        const withIt = await route.call(token({ sub: 'scoper', custkey, scope: custkey ? route.scope : `${route.scope} customers:any` }));
        expect([200, 201]).toContain(withIt.status);
      }
    });

    it('when a user bound to customer A reaches for customer B on any route, then 404 with no hint', async () => {
      const t = userA();
      const attempts = [
        sale({ customer: custB, payment_method: pmOfB, amount: '1.00' }, key(), t),
        request(bff.url).get(`/v1/customers/${custB}/payment_methods`).set('Authorization', `Bearer ${t}`),
        request(bff.url).get(`/v1/customers/${custB}/payment_methods/${pmOfB}/token`).set('Authorization', `Bearer ${t}`),
        // A's customer with B's payment method: the gateway must not hand out another customer's token.
        request(bff.url).get(`/v1/customers/${custA}/payment_methods/${pmOfB}/token`).set('Authorization', `Bearer ${t}`),
        sale({ customer: custA, payment_method: pmOfB, amount: '1.00' }, key(), t),
      ];
      const unknownCustomer = await request(bff.url).get('/v1/customers/nosuchcustomer/payment_methods').set('Authorization', `Bearer ${token({ sub: 'svc', scope: 'payment_methods:read customers:any' })}`);
      for (const res of [...(await Promise.all(attempts)), unknownCustomer]) {
        expect(res.status).toBe(404);
        expect(res.body.error).toEqual({ code: 'not_found', message: expect.any(String), request_id: expect.any(String) });
      }
      expect(bff.sandbox.transactions().filter((tx) => tx.custkey === custB)).toHaveLength(0);
    });

    it('when a token has no custkey and no customers:any, then it reaches no customer (404) and cannot list customers (403)', async () => {
      const t = token({ sub: 'unbound', scope: 'payment_methods:read customers:read' });
      expect((await request(bff.url).get(`/v1/customers/${custA}/payment_methods`).set('Authorization', `Bearer ${t}`)).status).toBe(404);
      expect((await request(bff.url).get('/v1/customers').set('Authorization', `Bearer ${t}`)).status).toBe(403);
    });

    it('when a path parameter tries to reach another gateway path, then 400 or 404 and nothing is sent upstream', async () => {
      const t = token({ sub: 'svc', scope: 'payment_methods:read tokens:read customers:any' });
      for (const path of [`/v1/customers/..%2F..%2Ftransactions/payment_methods`, `/v1/customers/${custA}%3Flimit=1/payment_methods`, `/v1/customers/a.b/payment_methods/x/token`]) {
        const res = await request(bff.url).get(path).set('Authorization', `Bearer ${t}`);
        expect([400, 404]).toContain(res.status);
      }
    });
  });

  describe('reads', () => {
    it('when an internal service lists customers, then it gets the list envelope and limit is capped at 100', async () => {
      const t = token({ sub: 'svc', scope: 'customers:read customers:any' });
      const res = await request(bff.url).get('/v1/customers?limit=10&offset=20').set('Authorization', `Bearer ${t}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ type: 'list', limit: 10, offset: 20, total: 21 });
      expect(res.body.data).toHaveLength(1);
      expect((await request(bff.url).get('/v1/customers').set('Authorization', `Bearer ${t}`)).body.limit).toBe(20);
      expect((await request(bff.url).get('/v1/customers?limit=101').set('Authorization', `Bearer ${t}`)).status).toBe(400);
    });

    it('when a user lists their payment methods, then every card is masked', async () => {
      const res = await request(bff.url).get(`/v1/customers/${custA}/payment_methods`).set('Authorization', `Bearer ${userA()}`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((p: { ccnum4last: string }) => p.ccnum4last).sort()).toEqual(['2220', '2224', '2275']);
      expect(JSON.stringify(res.body)).not.toMatch(/\d{12,}/);
    });

    it('when a token is read twice, then the first is a miss, the second a hit, with one upstream cardref call', async () => {
      // A customer no other test touches, read by an internal service.
      const cust = bff.sandbox.fixtures.customers[5] as { key: string };
      const pm = bff.sandbox.fixtures.paymentMethods(cust.key)[0] as { key: string; number: string };
      const svc = token({ sub: 'svc', scope: 'tokens:read customers:any' });
      const path = `/v1/customers/${cust.key}/payment_methods/${pm.key}/token`;
      // Counted by kind: the reconciler may read the gateway's lists meanwhile for other tests' keys.
      const cardrefCalls = () => bff.sandbox.stats().endpoints.v2?.acceptedByKind.cardref ?? 0;
      const before = cardrefCalls();
      const first = await request(bff.url).get(path).set('Authorization', `Bearer ${svc}`);
      const second = await request(bff.url).get(path).set('Authorization', `Bearer ${svc}`);
      expect([first.headers['cache-status'], second.headers['cache-status']]).toEqual(['miss', 'hit']);
      expect(second.body).toEqual(first.body);
      expect(first.body).toMatchObject({ type: 'token', custkey: cust.key, pmkey: pm.key, ccnumlast4: pm.number.slice(-4) });
      expect(first.body.cardref).toMatch(/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/);
      expect(cardrefCalls() - before).toBe(1);
    });

    it('when the gateway rotates a token, then the next sale evicts the stale one and succeeds with the new one', async () => {
      const pm = bff.sandbox.fixtures.paymentMethods(custA)[0] as { key: string };
      await request(bff.url).get(`/v1/customers/${custA}/payment_methods/${pm.key}/token`).set('Authorization', `Bearer ${userA()}`);
      const fresh = bff.sandbox.rotateCardRef(custA, pm.key);
      const res = await sale({ customer: custA, payment_method: pm.key, amount: '2.22', invoice: `rotated-${mode}` });
      expect(res.status).toBe(201);
      expect(charges(`rotated-${mode}`)[0]?.cardref).toBe(fresh);
      const after = await request(bff.url).get(`/v1/customers/${custA}/payment_methods/${pm.key}/token`).set('Authorization', `Bearer ${userA()}`);
      expect(after.body.cardref).toBe(fresh);
    });
  });

  describe('admin port and docs', () => {
    it('when probed, then health and readiness answer and metrics expose the service counters', async () => {
      expect((await request(bff.adminUrl).get('/healthz')).status).toBe(200);
      // The admin port answers like the public one: a request id on every answer, errors in the envelope.
      for (const path of ['/healthz', '/readyz', '/metrics']) expect((await request(bff.adminUrl).get(path)).headers['x-request-id']).toMatch(/^[\w.-]{8,128}$/);
      const unknown = await request(bff.adminUrl).get('/nothing').set('X-Request-Id', 'probe-admin-0001');
      expect([unknown.status, unknown.headers['x-request-id'], unknown.body]).toEqual([404, 'probe-admin-0001', { error: { code: 'not_found', message: expect.any(String), request_id: 'probe-admin-0001' } }]);
      expect((await request(bff.adminUrl).get('/readyz')).body).toMatchObject({ status: 'ready' });
      const metrics = await request(bff.adminUrl).get('/metrics');
      for (const name of ['tokengate_http_request_duration_seconds', 'tokengate_upstream_calls_total', 'tokengate_token_cache_lookups_total', 'tokengate_idempotency_events_total']) {
        expect(metrics.text).toContain(name);
      }
      expect(metrics.text).toMatch(/^tokengate_redis_up 1$/m);
    });

    it('when the docs are asked for, then /openapi.json describes POST /v1/sales and /docs is HTML', async () => {
      const spec = await request(bff.url).get('/openapi.json');
      expect(spec.body.openapi).toMatch(/^3\.1/);
      expect(spec.body.paths['/v1/sales'].post).toBeDefined();
      const docs = await request(bff.url).get('/docs');
      expect(docs.status).toBe(200);
      expect(docs.headers['content-type']).toMatch(/html/);
    });
  });
});
