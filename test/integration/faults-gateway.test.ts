import { randomBytes } from 'node:crypto';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { TEST_JWT_ENV, token } from '../support/bff';
import { canStartRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { saleViolations, sendSale, startReplicas, tally, type Answer, type Replicas, type SaleCase } from '../support/replicas';
import { loopLag } from '../support/wait';

/**
 * Gateway faults under 3 replicas of `node dist/main.js` sharing one (private) Redis and one sandbox in this
 * process: latency spikes, 5xx bursts, hangs past the timeout, resets after the sale was read, garbled
 * answers, and all of them mixed. Invariants are read from the sandbox's ledger (support/replicas.ts,
 * saleViolations): no key charged twice, every caller answered with a documented status, lost or garbled
 * charges reported as unknown; and no upstream 429 with a budget of 30 calls per second mirrored exactly.
 */

const RATE = 30;
const WINDOW_MS = 1000;
const TIMEOUT_MS = 800;
/** The gateway latency spread the jitter test injects. */
const JITTER_MS = 600;
/**
 * The margin must cover every spread in when calls reach the gateway: the injected jitter, plus the scheduling
 * delays of a loaded CI box (the sandbox shares its event loop with this test's clients). With the margin equal
 * to the jitter there was no slack, and 2 of 5 full-suite runs saw one upstream 429 (seen 2026-11-22).
 */
const MARGIN_MS = JITTER_MS + 300;
const APPROVED = ['4000100011112224', '4000100111112223', '4000100211112222', '4000200111112221', '5555444433332226', '6011222233332224'];

let sandbox: RunningSandbox;
let redis: PrivateRedis;
let replicas: Replicas;
const cards: { customer: string; paymentMethod: string; bearer: string }[] = [];
let seq = 0;
const run = randomBytes(3).toString('hex');

function newCase(tag: string): SaleCase {
  const n = seq++;
  const card = cards[n % cards.length] as (typeof cards)[number];
  return { key: `${tag}-${run}-${n}`, invoice: `f.${tag}.${run}.${n}`, amount: `${1 + (n % 50)}.${String(n % 100).padStart(2, '0')}`, answers: [], ...card };
}

/** Sends every case once, all at once, spread over the replicas; the first `dupes` also a second time at the same moment on the next replica. */
async function burst(cases: SaleCase[], dupes = 0): Promise<void> {
  await Promise.all([
    ...cases.map((c, i) => sendSale(replicas, c, { replica: i % 3 })),
    ...cases.slice(0, dupes).map((c, i) => sendSale(replicas, c, { replica: (i + 1) % 3 })),
  ]);
}

/** After the faults: every key once more, so each reports its settled state (replay, unknown, or a first charge). */
async function settle(cases: SaleCase[]): Promise<void> {
  sandbox.faults.clear();
  sandbox.update({ latencyMs: 0, jitterMs: 0 });
  await Promise.all(cases.map((c) => sendSale(replicas, c)));
}

/** Upstream 429s so far, with the endpoint's stats when there are any (for the failure message). */
function upstream429(): string {
  const v2 = sandbox.stats().endpoints.v2;
  return v2 && v2.rateLimited + v2.injected429 > 0 ? JSON.stringify(v2) : 'none';
}

const deliveries = (cases: SaleCase[]) => {
  const invoices = new Set(cases.map((c) => c.invoice));
  const counts: Record<string, number> = {};
  for (const t of sandbox.transactions()) if (invoices.has(t.invoice)) counts[t.delivery] = (counts[t.delivery] ?? 0) + 1;
  return counts;
};

/** Keys that saw this status during the burst (the settling answer, always last, left out). */
const sawStatus = (cases: SaleCase[], status: number) => cases.filter((c) => c.answers.slice(0, -1).some((a) => a.status === status)).length;

const canRun = canStartRedis();
const suite = canRun ? describe : describe.skip;

beforeAll(async () => {
  if (!canRun) return;
  redis = await startPrivateRedis();
  sandbox = await startSandbox({ port: 0, settings: { ratePerMinute: RATE, rateWindowMs: WINDOW_MS, rateMode: 'sliding', ratePerDay: 1_000_000, slowCardScale: 0.05 } });
  for (const number of APPROVED) {
    const found = sandbox.fixtures.findByNumber(number);
    if (!found) continue;
    const custkey = found.customer.key;
    cards.push({ customer: custkey, paymentMethod: found.method.key, bearer: token({ sub: `faults-${custkey}`, custkey, scope: 'sales:create' }, { expiresIn: 600 }) });
  }
  replicas = await startReplicas(3, {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: `faults-gw-${run}`,
    GATEWAY_BASE_URL: sandbox.baseUrl,
    GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
    GATEWAY_RATE_PER_MINUTE: String(RATE),
    GATEWAY_RATE_WINDOW_MS: String(WINDOW_MS),
    // The margin must cover the spread of network delay before the gateway counts a call (jitter below).
    GATEWAY_RATE_MARGIN_MS: String(MARGIN_MS),
    GATEWAY_RATE_PER_DAY: '1000000',
    LIMITER_SALE_MAX_WAIT_MS: '4000',
    LIMITER_READ_MAX_WAIT_MS: '2000',
    LIMITER_EXPECTED_REPLICAS: '3',
    ...TEST_JWT_ENV,
    SHUTDOWN_GRACE_MS: '200',
  });
  // Warm the token cache so the faults below hit sales, not the first cardref reads.
  const warm = cards.map(() => newCase('warm'));
  await burst(warm);
  expect(warm.map((c) => c.answers[0]?.status)).toEqual(warm.map(() => 201));
}, 120_000);

afterAll(async () => {
  await replicas?.stop();
  await sandbox?.close();
  await redis?.stop();
});

suite('sales through gateway faults, 3 replicas', () => {
  it('when the checker is given a double charge, a silent caller or a lost charge reported as success, then it names each', () => {
    // The invariants below are only worth something if they can fail: feed them each violation once.
    const ok: Answer = { replica: 0, status: 201, body: { refnum: '1' }, headers: {}, ms: 1 };
    const base = { customer: 'c', paymentMethod: 'p', amount: '1.00', bearer: 'b' };
    const cases: SaleCase[] = [
      { ...base, key: 'twice', invoice: 'i1', answers: [ok] },
      { ...base, key: 'silent', invoice: 'i2', answers: [{ replica: 1, status: 0, body: undefined, headers: {}, ms: 10_000, failure: 'deadline' }] },
      { ...base, key: 'lost-ok', invoice: 'i3', answers: [{ ...ok, body: { refnum: '3' } }] },
      { ...base, key: 'odd', invoice: 'i4', answers: [{ replica: 0, status: 500, body: {}, headers: {}, ms: 1 }] },
    ];
    const ledger = [
      { invoice: 'i1', refnum: '1', delivery: 'delivered' },
      { invoice: 'i1', refnum: '2', delivery: 'delivered' },
      { invoice: 'i3', refnum: '3', delivery: 'lost' },
    ];
    const found = saleViolations(cases, ledger).join('\n');
    expect(found).toMatch(/twice: charged 2 times/);
    expect(found).toMatch(/silent: no answer/);
    expect(found).toMatch(/lost-ok: answer lost at the gateway but 201/);
    expect(found).toMatch(/odd: undocumented status 500/);
  });

  it('when gateway latency spikes past the timeout, then slow sales answer 504, their keys turn outcome_unknown, and nothing is charged twice', async () => {
    const cases = Array.from({ length: 24 }, () => newCase('jitter'));
    // 400..1000 ms against an 800 ms timeout: a third time out (none of 24: p < 1e-4). Spread 600, within the margin.
    sandbox.faults.set({ latencyMs: 400, jitterMs: JITTER_MS });
    const lag = loopLag();
    await burst(cases, 8);
    const stalled = lag.maxMs();
    lag.stop();
    await settle(cases);
    expect(saleViolations(cases, sandbox.transactions())).toEqual([]);
    expect(sawStatus(cases, 504)).toBeGreaterThan(0);
    // And the fast ones answered: unless this process (the sandbox's) stalled past the fastest draw's 400 ms of
    // room, which a box at a load average of 17 did, timing every one out (issue 41). The ledger's verdict above
    // holds either way.
    if (stalled < 300) expect(sawStatus(cases, 201)).toBeGreaterThan(0);
    expect(upstream429()).toBe('none');
  });

  it('when the gateway answers a burst of 5xx, then those sales answer 502, charge nothing, and are never re-sent', async () => {
    const cases = Array.from({ length: 12 }, () => newCase('fivexx'));
    sandbox.faults.next({ kind: '5xx', match: 'sale', count: 6, status: 502 });
    await burst(cases);
    await settle(cases);
    expect(saleViolations(cases, sandbox.transactions())).toEqual([]);
    expect(sawStatus(cases, 502)).toBe(6);
    // A 5xx is no proof that nothing happened (contract, guarantee 2): the keys stay unknown, not re-sent.
    const failed = cases.filter((c) => c.answers[0]?.status === 502);
    expect(failed.map((c) => `${c.answers[1]?.status} ${(c.answers[1]?.body as { error?: { code?: string } }).error?.code}`)).toEqual(failed.map(() => '409 outcome_unknown'));
    expect(deliveries(failed)).toEqual({});
    expect(upstream429()).toBe('none');
  });

  it('when sales hang past the timeout, then callers get 504 in time and the charged keys answer 409 outcome_unknown', async () => {
    const cases = Array.from({ length: 10 }, () => newCase('hang'));
    sandbox.faults.next({ kind: 'hang', match: 'sale', count: 4 });
    await burst(cases, 5);
    await settle(cases);
    expect(saleViolations(cases, sandbox.transactions())).toEqual([]);
    expect(deliveries(cases)).toEqual({ lost: 4, delivered: 6 });
    expect(sawStatus(cases, 504)).toBe(4);
    // In time: a hung call never answers, so only the timeout can have ended these; the ceiling tells that from
    // never, with room for a busy box (issue 41: it was the timeout + 4 s).
    expect(Math.max(...cases.flatMap((c) => c.answers.map((a) => a.ms)))).toBeLessThan(TIMEOUT_MS + 30_000);
    expect(upstream429()).toBe('none');
  });

  it('when the gateway resets the connection after reading the sale, then 504 and the key is reported unknown, never re-sent', async () => {
    const cases = Array.from({ length: 10 }, () => newCase('reset'));
    sandbox.faults.next({ kind: 'reset', match: 'sale', count: 4 });
    await burst(cases, 5);
    await settle(cases);
    expect(saleViolations(cases, sandbox.transactions())).toEqual([]);
    expect(deliveries(cases)).toEqual({ lost: 4, delivered: 6 });
    expect(sawStatus(cases, 504)).toBe(4);
    expect(upstream429()).toBe('none');
  });

  it('when the gateway garbles the answer to a processed sale, then 502 and the key is reported unknown', async () => {
    const cases = Array.from({ length: 6 }, () => newCase('garbage'));
    sandbox.faults.next({ kind: 'garbage', match: 'sale', count: 3 });
    await burst(cases);
    await settle(cases);
    expect(saleViolations(cases, sandbox.transactions())).toEqual([]);
    expect(deliveries(cases)).toEqual({ garbled: 3, delivered: 3 });
    expect(sawStatus(cases, 502)).toBe(3);
    expect(upstream429()).toBe('none');
  });

  it('when every fault comes at random under a burst larger than the budget, then all invariants hold and the window never overflows', async () => {
    const cases = Array.from({ length: 60 }, () => newCase('storm'));
    sandbox.faults.set({ errorRate: 0.1, hangRate: 0.08, resetRate: 0.08, garbageRate: 0.05, latencyMs: 0, jitterMs: 400, match: 'any' });
    const started = Date.now();
    await burst(cases, 15);
    await settle(cases);
    const violations = saleViolations(cases, sandbox.transactions());
    expect(violations).toEqual([]);
    expect(upstream429()).toBe('none');
    expect(sandbox.stats().endpoints.v2?.maxInWindow ?? 0).toBeLessThanOrEqual(RATE);
    // Reported for the record (jest prints nothing on success): what callers saw.
    process.stdout.write(`faults-gateway storm: ${Date.now() - started} ms, first ${JSON.stringify(tally(cases))}, last ${JSON.stringify(tally(cases, 'last'))}\n`);
  });
});
