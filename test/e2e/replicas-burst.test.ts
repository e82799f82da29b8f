import request from 'supertest';
import { waves } from '../../src/limiter';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { TEST_JWT_ENV, token } from '../support/bff';
import { metricTotal } from '../support/metrics';
import { redisUrl, uniquePrefix } from '../support/redis';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';

// Scaled budget: N per W ms (+ margin), mirrored by tokengate and enforced by the sandbox in sliding mode. The margin
// is production's (GATEWAY_RATE_MARGIN_MS, 1 s): it is what absorbs a call reaching the gateway late, and this
// sandbox, in the test's process, stamps a call when its event loop gets to it: with 200 ms a loaded box (a load
// average of 25) once stamped a wave late enough for the next to look early, a 429 (issue 41).
const N = 10;
const W = 2000;
const MARGIN = 1000;
const SALES = 45;

/**
 * Issue 4, "Done when": three replicas on one Redis, a burst of 45 sales at once. The gateway must see at most
 * N calls in any window (no 429), every sale charged exactly once, and the burst must use the budget: ceil(45 / N)
 * windows, neither refused nor wasting any. Judged from the sandbox's own record of when it charged each sale (the
 * charges come in waves, each full but the last, each in the window after the one before), not from the clock, so
 * a busy machine slows the test without failing it (issue 41).
 */
describe('three replicas under a burst of sales', () => {
  let sandbox: RunningSandbox;
  let replicas: ServiceProcess[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, settings: { ratePerMinute: N, rateWindowMs: W, rateMode: 'sliding', latencyMs: 20, jitterMs: 15, ratePerDay: 100_000 } });
    const env = {
      NODE_ENV: 'test',
      REDIS_URL: redisUrl(),
      REDIS_KEY_PREFIX: uniquePrefix('burst').replace(/[^A-Za-z0-9:_-]/g, '_'),
      GATEWAY_BASE_URL: sandbox.baseUrl,
      GATEWAY_RATE_PER_MINUTE: String(N),
      GATEWAY_RATE_WINDOW_MS: String(W),
      GATEWAY_RATE_MARGIN_MS: String(MARGIN),
      GATEWAY_RATE_PER_DAY: '100000',
      LIMITER_SALE_RESERVED_SLOTS: '2',
      LIMITER_SALE_MAX_WAIT_MS: '30000',
      ...TEST_JWT_ENV,
    };
    replicas = await Promise.all([0, 1, 2].map(() => startServiceProcess(env)));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await sandbox.close();
  });

  it('when 45 sales arrive at once across the replicas, then the gateway sees at most N per window, no 429, each sale once, in consecutive full windows', async () => {
    const cust = sandbox.fixtures.firstCustomer().key;
    const pm = (sandbox.fixtures.paymentMethods(cust).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    const bearer = token({ sub: 'burst', custkey: cust, scope: 'sales:create tokens:read' });
    // Warm the shared token cache (one read), then let its window pass so the burst starts on an empty window.
    expect((await request(replicas[0]?.url as string).get(`/v1/customers/${cust}/payment_methods/${pm}/token`).set('Authorization', `Bearer ${bearer}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, W + MARGIN));
    sandbox.reset();

    const answers = await Promise.all(
      Array.from({ length: SALES }, (_, i) =>
        request((replicas[i % 3] as ServiceProcess).url)
          .post('/v1/sales')
          .set('Authorization', `Bearer ${bearer}`)
          .set('Idempotency-Key', `burst-${i}`)
          .send({ customer: cust, payment_method: pm, amount: '1.00', invoice: `burst-${i}` }),
      ),
    );

    expect(answers.map((a) => a.status)).toEqual(Array(SALES).fill(201));
    const stats = sandbox.stats().endpoints.v2;
    expect(stats?.rateLimited).toBe(0);
    expect(stats?.maxInWindow).toBeLessThanOrEqual(N);
    const charged = sandbox.transactions();
    const invoices = charged.map((t) => t.invoice);
    expect(invoices).toHaveLength(SALES);
    expect(new Set(invoices).size).toBe(SALES);
    // The budget is used: the charges come in ceil(45/10) = 5 waves, N each but the last (fewer per wave wastes
    // slots), each within two spans of the one before (a skipped window would put it two spans or more later).
    // Waves are split at half a span of quiet: calls of one wave start together, the next wave a span later.
    // A replica that woke late for its slot (a pause past half the margin on a busy box: counted) keeps the slot
    // used and queues again (issue 41): waves of 9, 9, 10, 10, 7 at a load average of 7, and at 30 late wakes by
    // the dozen. Each costs one start of the burst, never the budget: every slot a wave lacks is a late wake, and a
    // window goes by empty only when N of them fell in it. With none (an idle box), exactly as the issue asks.
    const SPAN = W + MARGIN;
    const lateWakes = (await Promise.all(replicas.map((r) => metricTotal(r.adminUrl, 'tokengate_limiter_late_wakes_total')))).reduce((a, b) => a + b, 0);
    const byWave = waves(charged.map((t) => t.time), SPAN / 2);
    expect(byWave.filter((w) => w.size > N)).toEqual([]);
    expect(byWave.slice(0, -1).reduce((missing, w) => missing + N - w.size, 0)).toBeLessThanOrEqual(lateWakes);
    // No window skipped. (That waves are a window apart is maxInWindow above: the sandbox, in this process, stamps
    // a call when its stalled event loop gets to it, which at a load average of 30 put two waves 1.66 s apart.)
    for (let i = 1; i < byWave.length; i++) {
      const gap = (byWave[i] as { at: number }).at - (byWave[i - 1] as { at: number }).at;
      expect(gap).toBeLessThan((2 + Math.floor(lateWakes / N)) * SPAN);
    }
  }, 120_000);
});
