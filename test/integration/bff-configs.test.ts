import request from 'supertest';
import { MODES, startBff, token, type Bff, type BffOptions, type Mode } from '../support/bff';
import { freePort } from '../support/ports';

/**
 * Error-table rows and guarantees that need their own configuration: the budget refusing (429), the gateway
 * refusing our IP or credentials (502), Redis down (503), duplicate folding re-sending an unknown sale.
 */
let mode: Mode = 'in-process';

async function withBff(options: BffOptions, body: (bff: Bff, ids: { cust: string; pm: string }) => Promise<void>): Promise<void> {
  const bff = await startBff({ mode, ...options });
  try {
    const cust = bff.sandbox.fixtures.firstCustomer().key;
    const pm = (bff.sandbox.fixtures.paymentMethods(cust).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    await body(bff, { cust, pm });
  } finally {
    await bff.stop();
  }
}

function sale(bff: Bff, body: object, idem: string, sub = 'cfg-user') {
  const bearer = token({ sub, custkey: (body as { customer: string }).customer, scope: 'sales:create payment_methods:read' });
  return request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer}`).set('Idempotency-Key', idem).set('Content-Type', 'application/json').send(JSON.stringify(body));
}

describe.each(MODES)('tokengate under special configurations (%s)', (m) => {
  beforeAll(() => {
    mode = m;
  });

  it('when the budget cannot start a sale within its maximum wait, then 429 rate_limited with Retry-After, nothing is sent, and the key stays free', async () => {
    await withBff({ env: { GATEWAY_RATE_PER_MINUTE: '1', LIMITER_SALE_MAX_WAIT_MS: '0', LIMITER_READ_MAX_WAIT_MS: '0' } }, async (bff, { cust, pm }) => {
      // The token lookup takes the window's only slot; the sale itself then cannot start in time.
      const first = await sale(bff, { customer: cust, payment_method: pm, amount: '1.00', invoice: 'budget-1' }, 'budget-key');
      expect(first.status).toBe(429);
      expect(first.body.error.code).toBe('rate_limited');
      expect(Number(first.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const again = await sale(bff, { customer: cust, payment_method: pm, amount: '1.00', invoice: 'budget-1' }, 'budget-key');
      expect(again.status).toBe(429); // not 409: the key was released because nothing was sent
      expect(bff.sandbox.transactions()).toHaveLength(0);
      expect(bff.sandbox.stats().endpoints.v2?.rateLimited ?? 0).toBe(0);
    });
  });

  it('when the gateway refuses our IP (errorcode 156), then 502 gateway_access_denied and nothing is charged', async () => {
    await withBff({ endpoint: 'IPACCESS' }, async (bff, { cust, pm }) => {
      const res = await sale(bff, { customer: cust, payment_method: pm, amount: '1.00' }, 'ip-key');
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('gateway_access_denied');
      expect(bff.sandbox.transactions()).toHaveLength(0);
    });
  });

  it('when the merchant credentials are wrong, then 502 gateway_auth_failed and the PIN is not in the logs', async () => {
    await withBff({ env: { GATEWAY_API_PIN: 'wrong-pin-4711' } }, async (bff, { cust, pm }) => {
      const res = await sale(bff, { customer: cust, payment_method: pm, amount: '1.00' }, 'auth-key');
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('gateway_auth_failed');
      expect(bff.logs()).not.toContain('wrong-pin-4711');
    });
  });

  it('when Redis is unreachable, then sales answer 503 with Retry-After and charge nothing, while reads still work', async () => {
    const dead = await freePort();
    await withBff({ env: { REDIS_URL: `redis://127.0.0.1:${dead}` }, expectDegraded: true }, async (bff, { cust, pm }) => {
      const res = await sale(bff, { customer: cust, payment_method: pm, amount: '1.00' }, 'redis-down-key');
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(bff.sandbox.transactions()).toHaveLength(0);
      const bearer = token({ sub: 'reader', custkey: cust, scope: 'payment_methods:read' });
      const list = await request(bff.url).get(`/v1/customers/${cust}/payment_methods`).set('Authorization', `Bearer ${bearer}`);
      expect(list.status).toBe(200);
      // Redis is shared by every replica: it degrades the service but does not take this replica out of the Service.
      const ready = await request(bff.adminUrl).get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', problems: [], degraded: ['redis'] });
      expect((await request(bff.adminUrl).get('/metrics')).text).toMatch(/^tokengate_redis_up 0$/m);
      expect(bff.logs()).toContain('redis connection error'); // the transition, logged once
    });
  });

  it.each([
    ['with the caller\'s invoice', { invoice: 'fold-inv-1' }],
    ['with an invoice derived from the key', {}],
  ])('when duplicate folding is on and a sale timed out (%s), then the retry re-sends with the same invoice and the gateway returns the original', async (_name, extra) => {
    await withBff({ env: { GATEWAY_DUPLICATE_FOLDING: 'true' }, sandbox: { duplicateFolding: true } }, async (bff, { cust, pm }) => {
      const body = { customer: cust, payment_method: pm, amount: '4.20', ...extra };
      bff.sandbox.faults.next({ kind: 'hang', match: 'sale' });
      const first = await sale(bff, body, 'fold-key');
      expect(first.status).toBe(504);
      const retry = await sale(bff, body, 'fold-key');
      expect(retry.status).toBe(201);
      expect(retry.body).toMatchObject({ result_code: 'A', is_duplicate: 'Y' });
      const charged = bff.sandbox.transactions();
      expect(charged).toHaveLength(1);
      expect(charged[0]?.foldedDuplicates).toBe(1);
      expect(retry.body.refnum).toBe(charged[0]?.refnum);
      const replay = await sale(bff, body, 'fold-key');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(bff.sandbox.transactions()).toHaveLength(1);
    });
  });
});
