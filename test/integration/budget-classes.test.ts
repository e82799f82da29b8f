import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';

// A small budget: 6 calls per 1.5 s span. Refunds leave round(2·3/3) = 2 slots of every window to sales and
// captures, reads 3 (LIMITER_SALE_RESERVED_SLOTS = 3).
const N = 6;
const W = 1300;
const MARGIN = 200;

/**
 * Issue 11, budget classes: a checkout sale does not wait behind a batch of refunds queued before it, and the
 * gateway never sees more than N calls in any window (no 429 from the sandbox, which counts sliding windows).
 */
describe('budget classes through the API', () => {
  let bff: Bff;
  beforeAll(async () => {
    bff = await startBff({
      budget: { perWindow: N, windowMs: W, marginMs: MARGIN },
      env: { LIMITER_SALE_RESERVED_SLOTS: '3', LIMITER_SALE_MAX_WAIT_MS: '20000', GATEWAY_TIMEOUT_MS: '5000' },
    });
  });
  afterAll(() => bff.stop());

  it('when twelve refunds are queued, then a sale that arrives after them starts within a window, long before the last refund', async () => {
    const cust = bff.sandbox.fixtures.firstCustomer().key;
    const pm = (bff.sandbox.fixtures.paymentMethods(cust).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    const shop = token({ sub: 'bc-shop', custkey: cust, scope: 'sales:create' });
    const support = token({ sub: 'bc-support', scope: 'customers:any refunds:create' });
    let n = 0;
    const sale = () => request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${shop}`).set('Idempotency-Key', `bc-sale-${n++}`)
      .set('Content-Type', 'application/json').send(JSON.stringify({ customer: cust, payment_method: pm, amount: '20.00' }));
    // Two settled sales to refund (the first also caches the card reference token), then an idle span.
    const keys = [(await sale()).body.key as string, (await sale()).body.key as string];
    bff.sandbox.ledger.closeBatch();
    await new Promise((r) => setTimeout(r, W + MARGIN));

    const done: Record<string, number> = {};
    const t0 = Date.now();
    const refunds = Array.from({ length: 12 }, (_, i) => request(bff.url).post(`/v1/sales/${keys[i % 2]}/refunds`)
      .set('Authorization', `Bearer ${support}`).set('Idempotency-Key', `bc-refund-${i}`).set('Content-Type', 'application/json')
      .send(JSON.stringify({ amount: '1.00' })).then((res) => {
        done[`refund-${i}`] = Date.now() - t0;
        return res.status;
      }));
    await new Promise((r) => setTimeout(r, 150));
    const checkout = sale().then((res) => {
      done.sale = Date.now() - t0;
      return res.status;
    });
    const statuses = await Promise.all([...refunds, checkout]);
    expect(statuses.every((s) => s === 201)).toBe(true);
    const lastRefund = Math.max(...Object.entries(done).filter(([k]) => k.startsWith('refund')).map(([, v]) => v));
    // Twelve refunds at four per window take three windows; the sale takes a slot refunds must leave.
    expect(done.sale).toBeLessThan(W + MARGIN);
    expect(lastRefund).toBeGreaterThan((done.sale as number) + W);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
    expect(bff.sandbox.stats().endpoints.v2?.maxInWindow).toBeLessThanOrEqual(N);
  });
});
