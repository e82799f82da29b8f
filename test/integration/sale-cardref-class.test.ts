import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';

// A small budget: 6 calls per 1.5 s span; reads leave 3 of them to sales (LIMITER_SALE_RESERVED_SLOTS = 3).
const N = 6;
const W = 1300;
const MARGIN = 200;

/**
 * Issue 25, item 2: reads that serve a sale are the sale's. The card reference a sale must load (its token is not
 * cached, or the gateway refused the cached one) queues in the sale's class, so a storm of page reads that fills
 * the read class for seconds does not hold the checkout back behind it.
 */
describe('a sale\'s card reference load under a read storm', () => {
  let bff: Bff;
  let cust: string;
  let pm: string;
  let n = 0;
  beforeAll(async () => {
    bff = await startBff({
      budget: { perWindow: N, windowMs: W, marginMs: MARGIN },
      env: { LIMITER_SALE_RESERVED_SLOTS: '3', GATEWAY_TIMEOUT_MS: '5000' },
    });
    cust = bff.sandbox.fixtures.firstCustomer().key;
    pm = (bff.sandbox.fixtures.paymentMethods(cust).find((p) => p.number.endsWith('2224')) as { key: string }).key;
  });
  afterAll(() => bff.stop());

  const shopper = () => token({ sub: 'cardref-class-shop', custkey: cust, scope: 'sales:create payment_methods:read' });
  const sale = () => request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${shopper()}`).set('Idempotency-Key', `cc-sale-${n++}`)
    .set('Content-Type', 'application/json').send(JSON.stringify({ customer: cust, payment_method: pm, amount: '5.00' }));
  /** Fifteen list reads at once: three per window, they fill the read class for five windows (7.5 s). */
  const storm = () => Array.from({ length: 15 }, () => request(bff.url).get(`/v1/customers/${cust}/payment_methods`)
    .set('Authorization', `Bearer ${shopper()}`).then((res) => res.status));
  const idle = () => new Promise((r) => setTimeout(r, W + MARGIN));

  it('when reads fill the read class and a sale arrives whose token is not cached, then the sale goes through within a window', async () => {
    const reads = storm();
    await new Promise((r) => setTimeout(r, 150));
    const t0 = Date.now();
    const res = await sale();
    const took = Date.now() - t0;
    expect(res.status).toBe(201);
    // Its card reference load and its charge both take the slots reads leave: the first window.
    expect(took).toBeLessThan(W + MARGIN);
    expect((await Promise.all(reads)).every((s) => s === 200 || s === 429)).toBe(true);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
    await idle();
  }, 30_000);

  it('when the gateway refuses the cached card reference under a read storm, then the reload is the sale\'s and the sale goes through within a window', async () => {
    expect((await sale()).status).toBe(201); // the token is cached
    await idle();
    bff.sandbox.rotateCardRef(cust, pm); // the cached cardref is refused from now on (error 10142)
    const reads = storm();
    await new Promise((r) => setTimeout(r, 150));
    const t0 = Date.now();
    const res = await sale();
    const took = Date.now() - t0;
    expect(res.status).toBe(201);
    // Refused sale, reload, sale again: three calls in the sales' three slots of the window.
    expect(took).toBeLessThan(W + MARGIN);
    await Promise.all(reads);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
  }, 30_000);
});
