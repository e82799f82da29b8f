import { randomBytes } from 'node:crypto';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import type { OneShotFault } from '../../src/sandbox/faults';
import { TEST_JWT_ENV, token } from '../support/bff';
import { canStartRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { startReplicas, type Answer, type Replicas } from '../support/replicas';

/**
 * Issue 12, "Done when": 300 sales across 3 replicas of `node dist/main.js`, a fifth of them failed by the
 * gateway AFTER it processed them (charged, then hang, reset or 5xx) and a fifth BEFORE (nothing recorded,
 * then the same), one replica SIGKILLed mid-run; then captures, voids and refunds under the same faults.
 * After the reconciler's deadline (shrunk here) every key has a final answer, every answer matches the
 * sandbox's ledger (charged exactly once, or not at all and then once by the retry), and the gateway never
 * answered 429.
 */
// A ceiling, not a bound: the settling waits out the reconcile deadline past the last unknown outcome (issue 41).
jest.setTimeout(360_000);

const RATE = 150;
const WINDOW_MS = 1000;
// Each round waits out one hang, so the timeout is what the rounds cost; 0.7 s timed out calls a busy box's
// sandbox (in this process) was merely slow to answer (issue 41). 2 s, with 10 rounds of 30 instead of 20 of 15:
// the same 300 sales and faults, about the same time.
const TIMEOUT_MS = 2000;
const MAX_PROCESSING_MS = 2000;
const DEADLINE_MS = 40_000;
const ROUNDS = 10;
const PER_ROUND = 30;
const run = randomBytes(3).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let sandbox: RunningSandbox;
let redis: PrivateRedis;
let replicas: Replicas;
let cards: { customer: string; paymentMethod: string }[];
let bearer: string;

interface Write {
  key: string;
  path: string;
  body: Record<string, unknown>;
  answers: Answer[];
}

const code = (a: Answer | undefined) => (a?.body as { error?: { code?: string } } | undefined)?.error?.code;
const isFinal = (a: Answer | undefined) => a !== undefined && a.status !== 0 && !(a.status === 409) && a.status < 500;

async function send(w: Write, replica?: number): Promise<Answer> {
  const answer = await replicas.call({
    method: 'POST', path: w.path, headers: { authorization: `Bearer ${bearer}`, 'idempotency-key': w.key }, body: w.body, deadlineMs: 15_000,
    ...(replica !== undefined ? { replica } : {}),
  });
  w.answers.push(answer);
  return answer;
}

/** The faults of one round: a fifth after processing, a fifth before, kinds mixed. */
function queueFaults(match: OneShotFault['match'], n: number): void {
  const kinds: OneShotFault['kind'][] = ['hang', 'reset', '5xx'];
  for (let i = 0; i < n; i++) {
    const kind = kinds[i % 3] as OneShotFault['kind'];
    sandbox.faults.next({ kind, match, when: i % 2 === 0 ? 'after' : 'before', ...(kind === '5xx' ? { status: ([500, 502, 503] as const)[i % 3] } : {}) });
  }
}

/** An answer after which the outcome may be unknown: none, or a 5xx (the gateway timed out, failed or reset). */
const mayBeUnknown = (a: Answer) => a.status === 0 || a.status >= 500;

/**
 * Retries every key without a final answer (honouring Retry-After) until all are final, or until the reconcile
 * deadline has passed since the last answer that may have left an outcome unknown (guarantee 6 counts from there).
 * Not from the test's start (issue 41): on a busy box the rounds alone took most of the 40 s, and the sandbox, in
 * this process, answered past the gateway timeout (0.7 s then) often enough that retries met fresh 504s, each a new
 * unknown outcome with its own deadline.
 */
async function settleAll(writes: Write[]): Promise<Write[]> {
  let open = writes.filter((w) => !isFinal(w.answers[w.answers.length - 1]));
  let lastUnknownAt = Date.now();
  while (open.length > 0 && Date.now() - lastUnknownAt < DEADLINE_MS) {
    const answers = await Promise.all(open.map((w) => send(w)));
    if (answers.some(mayBeUnknown)) lastUnknownAt = Date.now();
    open = writes.filter((w) => !isFinal(w.answers[w.answers.length - 1]));
    if (open.length > 0) await sleep(500);
  }
  return open;
}

const canRun = canStartRedis();
const suite = canRun ? describe : describe.skip;

beforeAll(async () => {
  if (!canRun) return;
  redis = await startPrivateRedis();
  sandbox = await startSandbox({ port: 0, settings: { ratePerMinute: RATE, rateWindowMs: WINDOW_MS, rateMode: 'sliding', ratePerDay: 1_000_000, slowCardScale: 0.05 } });
  // Approved cards of several customers, so each customer's transaction list stays short.
  cards = sandbox.fixtures.customers
    .flatMap((c) => c.payment_methods.filter((m) => ['4000100011112224', '5555444433332226', '4000100111112223', '6011222233332224'].includes(m.number)).map((m) => ({ customer: c.key, paymentMethod: m.key })))
    .slice(0, 8);
  expect(cards.length).toBeGreaterThanOrEqual(3);
  bearer = token({ sub: `reconcile-faults-${run}`, scope: 'sales:create sales:read sales:capture sales:void refunds:create customers:any' }, { expiresIn: 900 });
  replicas = await startReplicas(3, {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: `reconcile-faults-${run}`,
    GATEWAY_BASE_URL: sandbox.baseUrl,
    GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
    GATEWAY_RATE_PER_MINUTE: String(RATE),
    GATEWAY_RATE_WINDOW_MS: String(WINDOW_MS),
    GATEWAY_RATE_MARGIN_MS: '200',
    GATEWAY_RATE_PER_DAY: '1000000',
    LIMITER_SALE_MAX_WAIT_MS: '8000',
    LIMITER_READ_MAX_WAIT_MS: '2000',
    LIMITER_EXPECTED_REPLICAS: '3',
    RECONCILE_INTERVAL_MS: '200',
    RECONCILE_RETRY_MS: '300',
    RECONCILE_MAX_PROCESSING_MS: String(MAX_PROCESSING_MS),
    RECONCILE_DEADLINE_MS: String(DEADLINE_MS),
    ...TEST_JWT_ENV,
    SHUTDOWN_GRACE_MS: '200',
  });
});

afterAll(async () => {
  await replicas?.stop();
  await sandbox?.close();
  await redis?.stop();
});

suite('no outcome stays unknown: 3 replicas, faults before and after processing, a replica killed', () => {
  const sales: Write[] = [];

  it('when 300 sales meet the faults, then every key ends charged exactly once, as the ledger says', async () => {
    const startedAt = Date.now();
    for (let round = 0; round < ROUNDS; round++) {
      queueFaults('sale', (2 * PER_ROUND) / 5);
      const batch = Array.from({ length: PER_ROUND }, (_, i) => {
        const n = round * PER_ROUND + i;
        const card = cards[n % cards.length] as (typeof cards)[number];
        return { key: `rf-${run}-${n}`, path: '/v1/sales', body: { customer: card.customer, payment_method: card.paymentMethod, amount: `${1 + (n % 50)}.${String(n % 100).padStart(2, '0')}`, invoice: `rf.${run}.${n}` }, answers: [] };
      });
      sales.push(...batch);
      const killRound = round === ROUNDS / 2;
      // Mid-run, replica 1 dies with sales of its own held at the gateway (latency below the client's
      // timeout, so they are in flight when the kill lands); a fresh one takes its place.
      if (killRound) sandbox.faults.set({ latencyMs: 400 });
      const inFlight = Promise.all(batch.map((w) => send(w)));
      if (killRound) {
        await sleep(150);
        await replicas.kill(1, 'SIGKILL');
      }
      await inFlight;
      if (killRound) {
        sandbox.faults.set({ latencyMs: 0 });
        await replicas.replace(1);
      }
    }
    const first = sales.map((w) => w.answers[0]);
    expect(first.filter((a) => a && a.status === 201).length).toBeGreaterThan(100);
    expect(first.filter((a) => !isFinal(a)).length).toBeGreaterThan(60);

    const open = await settleAll(sales);
    expect(open.map((w) => `${w.key}: ${w.answers.map((a) => `${a.status} ${code(a) ?? ''}`).join(', ')}`)).toEqual([]);

    const ledger = sandbox.transactions();
    const violations: string[] = [];
    for (const w of sales) {
      const charges = ledger.filter((t) => t.invoice === w.body.invoice);
      const last = w.answers[w.answers.length - 1] as Answer;
      if (charges.length !== 1) violations.push(`${w.key}: charged ${charges.length} times`);
      const key = (last.body as { key?: string }).key;
      if (last.status !== 201 || key !== charges[0]?.key) violations.push(`${w.key}: final ${last.status} names ${key}, ledger ${charges[0]?.key}`);
    }
    expect(violations).toEqual([]);
    const reconciled = sales.filter((w) => w.answers.some((a) => a.headers['tokengate-reconciled'] === 'true'));
    const retriedFresh = sales.filter((w) => !isFinal(w.answers[0]) && !w.answers.some((a) => a.headers['tokengate-reconciled'] === 'true'));
    expect(reconciled.length).toBeGreaterThan(20); // found in the gateway's records
    expect(retriedFresh.length).toBeGreaterThan(20); // proven absent, released, charged once by the retry
    expect(sandbox.stats().endpoints.v2?.rateLimited ?? 0).toBe(0);
    expect(first.some((a) => a?.status === 0)).toBe(true); // the killed replica's callers lost their answers
    // Every replica reports the cluster-wide gauges: nothing open any more, and what was resolved how.
    const metrics = await (await fetch(`${replicas.process(0).adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/^tokengate_unknown_outcomes_open 0$/m);
    expect(metrics).toMatch(/^tokengate_unknown_outcomes_oldest_age_seconds 0$/m);
    expect(metrics).toMatch(/^tokengate_reconcile_deadline_seconds 40$/m);
    const all = await Promise.all([0, 1, 2].map(async (i) => (await fetch(`${replicas.process(i).adminUrl}/metrics`)).text()));
    const sum = (re: RegExp) => all.reduce((t, m) => t + [...m.matchAll(re)].reduce((s2, x) => s2 + Number(x[1]), 0), 0);
    expect(sum(/^tokengate_unknown_outcomes_resolved_total\{[^}]*result="charged"[^}]*\} (\d+)/gm)).toBeGreaterThan(0);
    expect(sum(/^tokengate_unknown_outcomes_resolved_total\{[^}]*result="not_sent"[^}]*\} (\d+)/gm)).toBeGreaterThan(0);
    process.stdout.write(`reconcile-faults sales: ${sales.length} keys, ${reconciled.length} reconciled as found, ${retriedFresh.length} released and retried, in ${Date.now() - startedAt} ms\n`);
  });

  it('when captures, voids and refunds meet the same faults, then each moved money exactly once and never beyond its bound', async () => {
    // Authorizations to capture, and captured sales to void or refund (no faults while making them).
    const make = (n: number, capture: boolean) => Promise.all(Array.from({ length: n }, async (_, i) => {
      const card = cards[i % cards.length] as (typeof cards)[number];
      const w: Write = { key: `rf-base-${capture}-${run}-${i}`, path: '/v1/sales', body: { customer: card.customer, payment_method: card.paymentMethod, amount: '50.00', invoice: `rfb.${capture}.${run}.${i}`, ...(capture ? {} : { capture: false }) }, answers: [] };
      const a = await send(w);
      expect(a.status).toBe(201);
      return (a.body as { key: string }).key;
    }));
    const auths = await make(20, false);
    const captured = await make(40, true);

    const writes: Write[] = [
      ...auths.map((sale, i) => ({ key: `rf-cap-${run}-${i}`, path: `/v1/sales/${sale}/capture`, body: { amount: '30.00' }, answers: [] })),
      ...captured.slice(0, 20).map((sale, i) => ({ key: `rf-void-${run}-${i}`, path: `/v1/sales/${sale}/void`, body: {}, answers: [] })),
      ...captured.slice(20).map((sale, i) => ({ key: `rf-ref-${run}-${i}`, path: `/v1/sales/${sale}/refunds`, body: { amount: '20.00' }, answers: [] })),
    ];
    for (const match of ['capture', 'void', 'refund'] as const) queueFaults(match, 8);
    await Promise.all(writes.map((w) => send(w)));
    const open = await settleAll(writes);
    expect(open.map((w) => `${w.key}: ${w.answers.map((a) => `${a.status} ${code(a) ?? ''}`).join(', ')}`)).toEqual([]);

    const ops = sandbox.ledger.operations().filter((o) => o.result_code === 'A');
    const violations: string[] = [];
    for (const [i, sale] of auths.entries()) {
      const n = ops.filter((o) => o.trankey === sale && o.command === 'cc:capture').length;
      if (n !== 1) violations.push(`capture ${i}: applied ${n} times`);
      if (sandbox.ledger.get(sale)?.captured !== '30.00') violations.push(`capture ${i}: captured ${sandbox.ledger.get(sale)?.captured}`);
    }
    for (const [i, sale] of captured.slice(0, 20).entries()) if (!sandbox.ledger.get(sale)?.voided) violations.push(`void ${i}: not voided`);
    for (const [i, sale] of captured.slice(20).entries()) {
      const e = sandbox.ledger.get(sale);
      const returned = 50 - Number(e?.captured) + Number(e?.refunded);
      if (returned !== 20) violations.push(`refund ${i}: ${returned} returned`);
    }
    expect(violations).toEqual([]);
    expect(writes.every((w) => [200, 201].includes((w.answers[w.answers.length - 1] as Answer).status))).toBe(true);
    expect(sandbox.stats().endpoints.v2?.rateLimited ?? 0).toBe(0);
  });
});
