import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';
import { metricTotal } from '../support/metrics';
import { eventually } from '../support/wait';

// A small budget: 6 calls per 3.3 s span; reads leave 3 of them to sales (LIMITER_SALE_RESERVED_SLOTS = 3). Judged
// by what the sandbox accepted, not the clock (issue 41): the sale is answered before the storm's reads of the next
// window arrive, so a loaded box must stall a whole span to fail it.
const N = 6;
const W = 3000;
const MARGIN = 300;

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
      // Reads wait up to 2 minutes, a ceiling: the storm needs three windows (10 s), but each late wake on a busy box
      // costs a caller a window more (one of the nine was refused past 30 s at a load average of 30: issue 41).
      env: { LIMITER_SALE_RESERVED_SLOTS: '3', LIMITER_READ_MAX_WAIT_MS: '120000', GATEWAY_TIMEOUT_MS: '5000' },
    });
    cust = bff.sandbox.fixtures.firstCustomer().key;
    pm = (bff.sandbox.fixtures.paymentMethods(cust).find((p) => p.number.endsWith('2224')) as { key: string }).key;
  });
  afterAll(() => bff.stop());

  const shopper = () => token({ sub: 'cardref-class-shop', custkey: cust, scope: 'sales:create payment_methods:read' });
  const sale = () => request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${shopper()}`).set('Idempotency-Key', `cc-sale-${n++}`)
    .set('Content-Type', 'application/json').send(JSON.stringify({ customer: cust, payment_method: pm, amount: '5.00' }));
  /**
   * Nine list reads at once by nine callers, of nine other customers: three per window, they fill the read class for
   * three windows (10 s), and wait for it (LIMITER_READ_MAX_WAIT_MS). One customer's list nine times would be one
   * gateway call (the others read its view), and one caller's nine reads would be refused past the caller's share:
   * either way the read class would stay empty and the test would prove nothing.
   */
  let round = 0;
  const storm = () => {
    const others = bff.sandbox.fixtures.customers.filter((c) => c.key !== cust).slice(9 * round, 9 * ++round);
    expect(others).toHaveLength(9);
    return others.map((c, i) => request(bff.url).get(`/v1/customers/${c.key}/payment_methods`)
      .set('Authorization', `Bearer ${token({ sub: `cardref-class-office-${i}`, scope: 'payment_methods:read customers:any' })}`).then((res) => res.status));
  };
  /** Gateway calls the sandbox accepted other than sales and card reference loads: the storm's list reads. */
  const readsAccepted = () => {
    const v2 = bff.sandbox.stats().endpoints.v2;
    if (!v2) return 0;
    const kinds = v2.acceptedByKind;
    return v2.accepted - (kinds.sale ?? 0) - (kinds.cardref ?? 0);
  };
  /** Storm started: the read class's share of this window (3 of 6) is taken, the rest of the storm queues behind it. */
  const stormHolds = async (before: number) => eventually(() => readsAccepted() >= before + 3);
  const idle = () => new Promise((r) => setTimeout(r, W + MARGIN));
  const lateWakes = () => metricTotal(bff.adminUrl, 'tokengate_limiter_late_wakes_total');

  it('when reads fill the read class and a sale arrives whose token is not cached, then the sale goes through within a window', async () => {
    const before = readsAccepted();
    const reads = storm();
    await stormHolds(before);
    const res = await sale();
    expect(res.status).toBe(201);
    // Its card reference load and its charge both take the slots reads leave: the first window, before the storm's
    // next reads (had the load queued with the reads, it would wait for the next window, behind them). A call that
    // woke late (a busy box's pause: counted) keeps its slot used and takes the next window's: 3 reads more each
    // (issue 41: 5 seen at a load average of 20).
    expect(readsAccepted() - before).toBeGreaterThanOrEqual(3);
    expect(readsAccepted() - before).toBeLessThanOrEqual(3 + 3 * (await lateWakes()));
    // Every read is served; on a busy box a read whose slot a late wake pushed past its maximum wait is refused at
    // once with 429 rate_limited (guarantee 9), counted as a late wake, never sent to be refused upstream.
    const statuses = await Promise.all(reads);
    const wakes = await lateWakes();
    expect(statuses.filter((s) => s !== 200 && !(s === 429 && wakes > 0))).toEqual([]);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
    await idle();
  }, 180_000);

  it('when the gateway refuses the cached card reference under a read storm, then the reload is the sale\'s and the sale goes through within a window', async () => {
    expect((await sale()).status).toBe(201); // the token is cached
    await idle();
    bff.sandbox.rotateCardRef(cust, pm); // the cached cardref is refused from now on (error 10142)
    const before = readsAccepted();
    const reads = storm();
    await stormHolds(before);
    const res = await sale();
    expect(res.status).toBe(201);
    // Refused sale, reload, sale again: three calls in the sales' three slots of the window, before the storm's next
    // reads (a late wake, counted, costs a window: 3 reads more).
    expect(readsAccepted() - before).toBeGreaterThanOrEqual(3);
    expect(readsAccepted() - before).toBeLessThanOrEqual(3 + 3 * (await lateWakes()));
    // Every read is served; on a busy box a read whose slot a late wake pushed past its maximum wait is refused at
    // once with 429 rate_limited (guarantee 9), counted as a late wake, never sent to be refused upstream.
    const statuses = await Promise.all(reads);
    const wakes = await lateWakes();
    expect(statuses.filter((s) => s !== 200 && !(s === 429 && wakes > 0))).toEqual([]);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
  }, 180_000);
});
