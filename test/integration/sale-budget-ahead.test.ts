import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';

// A budget of 3 calls per 3 s + 0.3 s margin, no slots held back for sales (a span long enough that a loaded
// box's slow sale is never taken for a wait).
const N = 3;
const W = 3000;
const MARGIN = 300;
const SPAN = W + MARGIN;

/**
 * Issue 15: a sale reserves its budget slot in the same Redis write as its idempotency claim. The slot must be
 * given back whenever no sale is sent on it, or replays and token loads would eat a budget of 45 a minute.
 */
describe('the sale budget slot reserved with the claim', () => {
  let bff: Bff;
  beforeAll(async () => {
    bff = await startBff({
      budget: { perWindow: N, windowMs: W, marginMs: MARGIN },
      env: { LIMITER_SALE_RESERVED_SLOTS: '0', LIMITER_SALE_MAX_WAIT_MS: '20000', GATEWAY_TIMEOUT_MS: '5000' },
    });
  });
  afterAll(() => bff.stop());

  const cust = () => bff.sandbox.fixtures.firstCustomer().key;
  const approvedPms = () => bff.sandbox.fixtures.paymentMethods(cust()).filter((p) => p.number.endsWith('2224') || p.number.endsWith('2275'));
  const shop = () => token({ sub: 'ahead-shop', custkey: cust(), scope: 'sales:create' });
  const sale = (key: string, pm: string) => request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${shop()}`).set('Idempotency-Key', key)
    .set('Content-Type', 'application/json').send(JSON.stringify({ customer: cust(), payment_method: pm, amount: '3.00' }));
  const timed = async (key: string, pm: string) => {
    const t0 = Date.now();
    const res = await sale(key, pm);
    return { status: res.status, replayed: res.get('Idempotent-Replayed') === 'true', ms: Date.now() - t0 };
  };
  const idle = () => new Promise((r) => setTimeout(r, SPAN + 100));

  it('when a sale is replayed many times, then the replays take no budget and the next new sales start at once', async () => {
    const pm = (approvedPms()[0] as { key: string }).key;
    expect((await timed('ahead-warm', pm)).status).toBe(201); // caches the token: a read and a sale
    await idle();

    expect((await timed('ahead-1', pm)).status).toBe(201); // 1 of 3
    const replays = await Promise.all(Array.from({ length: 6 }, () => timed('ahead-1', pm)));
    expect(replays.every((r) => r.status === 201 && r.replayed)).toBe(true);
    // Had each replay kept the slot it reserved, the window would be full and these would wait a span.
    const next = await Promise.all([timed('ahead-2', pm), timed('ahead-3', pm)]);
    for (const r of next) expect(r).toMatchObject({ status: 201, replayed: false });
    expect(Math.max(...next.map((r) => r.ms))).toBeLessThan(SPAN / 2);
    // The budget is full now: a fourth new sale waits for the window to move.
    const fourth = await timed('ahead-4', pm);
    expect(fourth.status).toBe(201);
    expect(fourth.ms).toBeGreaterThan(SPAN / 3);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
  }, 30_000);

  it('when the token is not cached, then the sale gives its early slot back before the token read takes one', async () => {
    const pm = (approvedPms()[1] as { key: string }).key; // never charged: its token is not cached
    await idle();
    const first = await timed('ahead-uncached', pm); // a read and a sale: 2 of 3
    expect(first.status).toBe(201);
    // Had the early slot stayed, the window would be full and this sale would wait.
    const second = await timed('ahead-after-uncached', pm);
    expect(second.status).toBe(201);
    expect(second.ms).toBeLessThan(SPAN / 3);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
  }, 30_000);
});
