import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';

// A budget of 3 calls per 5 s + 0.5 s margin, no slots held back for sales. Judged from when the sandbox charged
// each sale (issue 41): a sale that waited for the window charges a span after the window's first; one that did
// not charges as soon as the box gets to it, and a loaded box would have to stall for a whole window to look alike.
const N = 3;
const W = 5000;
const MARGIN = 500;
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
  /** The answer, and when the sandbox charged the sale it answers (its own record), if this call charged one. */
  const timed = async (key: string, pm: string) => {
    const before = bff.sandbox.transactions().length;
    const res = await sale(key, pm);
    const charged = bff.sandbox.transactions().slice(before).find((t) => t.key === res.body?.key);
    return { status: res.status, replayed: res.get('Idempotent-Replayed') === 'true', chargedAt: charged?.time };
  };
  const idle = () => new Promise((r) => setTimeout(r, SPAN + 100));

  it('when a sale is replayed many times, then the replays take no budget and the next new sales start at once', async () => {
    const pm = (approvedPms()[0] as { key: string }).key;
    expect((await timed('ahead-warm', pm)).status).toBe(201); // caches the token: a read and a sale
    await idle();

    const first = await timed('ahead-1', pm); // 1 of 3
    expect(first.status).toBe(201);
    const replays = await Promise.all(Array.from({ length: 6 }, () => timed('ahead-1', pm)));
    expect(replays.every((r) => r.status === 201 && r.replayed)).toBe(true);
    // Had each replay kept the slot it reserved, the window would be full and these would wait a span.
    const next = await Promise.all([timed('ahead-2', pm), timed('ahead-3', pm)]);
    for (const r of next) expect(r).toMatchObject({ status: 201, replayed: false });
    for (const r of next) expect((r.chargedAt as number) - (first.chargedAt as number)).toBeLessThan(W);
    // The budget is full now: a fourth new sale waits for the window to move.
    const fourth = await timed('ahead-4', pm);
    expect(fourth.status).toBe(201);
    // (A span after ahead-1's slot, less ahead-1's own way to the sandbox: half a span leaves that room.)
    expect((fourth.chargedAt as number) - (first.chargedAt as number)).toBeGreaterThan(SPAN / 2);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
  });

  it('when the token is not cached, then the sale gives its early slot back before the token read takes one', async () => {
    const pm = (approvedPms()[1] as { key: string }).key; // never charged: its token is not cached
    await idle();
    const first = await timed('ahead-uncached', pm); // a read and a sale: 2 of 3
    expect(first.status).toBe(201);
    // Had the early slot stayed, the window would be full and this sale would charge a span after the first.
    const second = await timed('ahead-after-uncached', pm);
    expect(second.status).toBe(201);
    expect((second.chargedAt as number) - (first.chargedAt as number)).toBeLessThan(W);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
  });
});
