import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';

// A small budget: 6 calls per 1.3 s window (+ margin). Renewals leave round(2.5·3/3) = 3 slots of every window
// to the classes above them (LIMITER_SALE_RESERVED_SLOTS = 3).
const N = 6;
const W = 1300;
const MARGIN = 200;

/**
 * Issue 37, item 3: checkouts never wait behind renewals. Charges the shopper does not start (here `"recurring":
 * true` sales of an internal service, the renewals' budget class) queue behind sales: a checkout arriving after
 * twelve of them starts within a window, and the gateway never sees more than N calls in any window.
 */
describe('renewals in the budget', () => {
  let bff: Bff;
  beforeAll(async () => {
    bff = await startBff({
      budget: { perWindow: N, windowMs: W, marginMs: MARGIN },
      env: { LIMITER_SALE_RESERVED_SLOTS: '3', LIMITER_SALE_MAX_WAIT_MS: '20000', GATEWAY_TIMEOUT_MS: '5000' },
    });
  });
  afterAll(() => bff.stop());

  it('when twelve recurring charges are queued, then a checkout that arrives after them starts within a window, long before the last of them', async () => {
    const cust = bff.sandbox.fixtures.firstCustomer().key;
    const pm = (bff.sandbox.fixtures.paymentMethods(cust).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    const shop = token({ sub: 'rb-shop', custkey: cust, scope: 'sales:create' });
    const billing = token({ sub: 'rb-billing', scope: 'customers:any sales:create' });
    let n = 0;
    const post = (bearer: string, extra: object) => request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer}`).set('Idempotency-Key', `rb-${n++}`)
      .set('Content-Type', 'application/json').send(JSON.stringify({ customer: cust, payment_method: pm, amount: '20.00', ...extra }));
    // The card reference token cached first, then an idle span.
    expect((await post(shop, {})).status).toBe(201);
    await new Promise((r) => setTimeout(r, W + MARGIN));

    const done: Record<string, number> = {};
    const t0 = Date.now();
    const renewals = Array.from({ length: 12 }, (_, i) => post(billing, { recurring: true }).then((res) => {
      done[`renewal-${i}`] = Date.now() - t0;
      return res.status;
    }));
    await new Promise((r) => setTimeout(r, 150));
    const checkout = post(shop, {}).then((res) => {
      done.sale = Date.now() - t0;
      return res.status;
    });
    const statuses = await Promise.all([...renewals, checkout]);
    expect(statuses.every((s) => s === 201)).toBe(true);
    const last = Math.max(...Object.entries(done).filter(([k]) => k.startsWith('renewal')).map(([, v]) => v));
    // Twelve renewals at three per window take four windows; the sale takes a slot renewals must leave.
    expect(done.sale).toBeLessThan(W + MARGIN);
    expect(last).toBeGreaterThan((done.sale as number) + W);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
    expect(bff.sandbox.stats().endpoints.v2?.maxInWindow).toBeLessThanOrEqual(N);
    expect(bff.sandbox.transactions().filter((t) => t.recurring).length).toBe(12);
  });
});
