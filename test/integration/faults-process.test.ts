import { randomBytes } from 'node:crypto';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { TEST_JWT_ENV, token } from '../support/bff';
import { canStartRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { saleViolations, sendSale, startReplicas, tally, type Answer, type Replicas, type SaleCase } from '../support/replicas';

/**
 * Process and infrastructure faults under 3 replicas of `node dist/main.js`: the shared Redis shut down
 * (nosave) and restarted on the same port in the middle of a burst, and a replica SIGKILLed while its sale is
 * at the gateway. Invariants from the sandbox's ledger (support/replicas.ts, saleViolations), plus: Redis down
 * → 503 unavailable and nothing charged; recovery without any restart of the replicas.
 */
// A ceiling, not a bound: three replicas booting on a busy 2-core box may take most of a minute (issue 41).
jest.setTimeout(150_000);

const RATE = 30;
const WINDOW_MS = 1000;
// The gateway timeout is no subject here (Redis restarts and a kill are): the sandbox answers from this test's
// process, which a busy box starves, so 0.8 s timed out sales that were never meant to (issue 41). 4 s is well
// past that and still short enough for the killed replica's lease (below) to end within the test.
const TIMEOUT_MS = 4000;
const READ_WAIT_MS = 1000;
const SALE_WAIT_MS = 2000;
// The sales route's lease (src/http/routes/sales.ts): after it, a dead owner's key turns outcome_unknown.
const LEASE_MS = READ_WAIT_MS + SALE_WAIT_MS + 2 * TIMEOUT_MS + 10_000;

let sandbox: RunningSandbox;
let redis: PrivateRedis;
let replicas: Replicas;
let card: { customer: string; paymentMethod: string; bearer: string };
let seq = 0;
const run = randomBytes(3).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function newCase(tag: string): SaleCase {
  const n = seq++;
  return { key: `${tag}-${run}-${n}`, invoice: `p.${tag}.${run}.${n}`, amount: `${1 + (n % 40)}.25`, answers: [], ...card };
}

const code = (a: Answer | undefined) => (a?.body as { error?: { code?: string } } | undefined)?.error?.code;
const charges = (c: SaleCase) => sandbox.transactions().filter((t) => t.invoice === c.invoice);
const readyz = (i: number) => fetch(`${replicas.process(i).adminUrl}/readyz`, { signal: AbortSignal.timeout(3000) }).then((r) => r.status, () => 0);

/** New sales to each replica in turn until each has answered 201 once; ms after `since` per replica (-1: never). */
async function untilEveryReplicaSells(into: SaleCase[], withinMs: number, since = Date.now()): Promise<number[]> {
  const recovered = [-1, -1, -1];
  for (let i = 0; recovered.includes(-1) && Date.now() - since < withinMs; i = (i + 1) % 3) {
    if (recovered[i] !== -1) continue;
    const c = newCase('post');
    into.push(c);
    if ((await sendSale(replicas, c, { replica: i })).status === 201) recovered[i] = Date.now() - since;
    else await sleep(50);
  }
  return recovered;
}

const canRun = canStartRedis();
const suite = canRun ? describe : describe.skip;

beforeAll(async () => {
  if (!canRun) return;
  redis = await startPrivateRedis();
  sandbox = await startSandbox({ port: 0, settings: { ratePerMinute: RATE, rateWindowMs: WINDOW_MS, rateMode: 'sliding', ratePerDay: 1_000_000 } });
  const found = sandbox.fixtures.findByNumber('4000100011112224');
  if (!found) throw new Error('fixture card 4000100011112224 is missing');
  const custkey = found.customer.key;
  card = { customer: custkey, paymentMethod: found.method.key, bearer: token({ sub: `faults-proc-${run}`, custkey, scope: 'sales:create' }, { expiresIn: 600 }) };
  replicas = await startReplicas(3, {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: `faults-proc-${run}`,
    GATEWAY_BASE_URL: sandbox.baseUrl,
    GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
    GATEWAY_RATE_PER_MINUTE: String(RATE),
    GATEWAY_RATE_WINDOW_MS: String(WINDOW_MS),
    GATEWAY_RATE_MARGIN_MS: '200',
    GATEWAY_RATE_PER_DAY: '1000000',
    LIMITER_SALE_MAX_WAIT_MS: String(SALE_WAIT_MS),
    LIMITER_READ_MAX_WAIT_MS: String(READ_WAIT_MS),
    LIMITER_EXPECTED_REPLICAS: '3',
    ...TEST_JWT_ENV,
    SHUTDOWN_GRACE_MS: '200',
  });
}, 120_000);

afterAll(async () => {
  await replicas?.stop();
  await sandbox?.close();
  await redis?.stop();
});

suite('sales through process and Redis faults, 3 replicas', () => {
  it('when Redis is shut down (nosave) and restarted mid-burst, then outage sales answer 503 charging nothing, and sales recover by themselves', async () => {
    const before = Array.from({ length: 6 }, () => newCase('pre'));
    await Promise.all(before.map((c) => sendSale(replicas, c)));
    expect(before.map((c) => c.answers[0]?.status)).toEqual(before.map(() => 201));

    const early: SaleCase[] = [];
    const outage: SaleCase[] = [];
    const late: SaleCase[] = [];
    const inFlight: Promise<Answer>[] = [];
    const fire = (group: SaleCase[], n: number) => {
      for (let i = 0; i < n; i++) {
        const c = newCase('mid');
        group.push(c);
        inFlight.push(sendSale(replicas, c));
      }
    };
    sandbox.update({ latencyMs: 1000 }); // these sales are at the gateway when Redis goes away
    fire(early, 9);
    await sleep(400); // time for a busy box's replicas to send some of them; the rest answer 503, as outage sales
    await redis.shutdown();
    sandbox.update({ latencyMs: 0 });
    await sleep(300); // every replica has seen the connection drop
    fire(outage, 12);
    await Promise.all(inFlight.splice(0));
    // Redis is shared: every replica stays in the Service (readiness is about this pod), so reads keep arriving.
    expect(await Promise.all([0, 1, 2].map(readyz))).toEqual([200, 200, 200]);
    // Reads go on through each replica's share of the budget (contract, guarantee 5).
    const reader = token({ sub: `reader-${run}`, custkey: card.customer, scope: 'payment_methods:read' });
    const reads = await Promise.all([0, 1, 2].map((replica) => replicas.call({ replica, path: `/v1/customers/${card.customer}/payment_methods`, headers: { authorization: `Bearer ${reader}` } })));
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200]);

    const restartedAt = Date.now();
    await redis.start();
    // Recovery by itself, per replica: new keys, each replica in turn, until every one has charged again. How soon
    // is the reconnect's business (retryStrategy), not a bound here: a minute is the safety net (issue 41).
    const recoveredMs = await untilEveryReplicaSells(late, 60_000, restartedAt);
    expect(recoveredMs.every((ms) => ms >= 0)).toBe(true);
    // Keys refused during the outage were never started: a retry charges them exactly once. In-flight keys
    // already answered 201 are not retried: their record may be gone with Redis' data (next test).
    await Promise.all([...early.filter((c) => c.answers[0]?.status !== 201), ...outage].map((c) => sendSale(replicas, c)));

    const all = [...before, ...early, ...outage, ...late];
    expect(saleViolations(all, sandbox.transactions())).toEqual([]);
    expect(outage.map((c) => `${c.answers[0]?.status} ${code(c.answers[0])} ${c.answers[0]?.headers['retry-after'] ? 'retry-after' : ''}`)).toEqual(outage.map(() => '503 unavailable retry-after'));
    expect(outage.flatMap((c) => charges(c).filter((t) => t.time < restartedAt))).toEqual([]);
    expect(outage.map((c) => c.answers[1]?.status)).toEqual(outage.map(() => 201));
    expect(await Promise.all([0, 1, 2].map(readyz))).toEqual([200, 200, 200]);
    expect(sandbox.stats().endpoints.v2?.rateLimited ?? 0).toBe(0);
    // The in-flight sales really straddled the outage: charged, answered, their record not stored then, and kept
    // once Redis was back (the write protocol keeps what it answered).
    expect(early.filter((c) => c.answers[0]?.status === 201 && charges(c).length === 1).length).toBeGreaterThan(0);
    expect(replicas.logs()).toContain('keeping it when Redis is back');
    expect(replicas.logs()).toContain('a write\'s answer was kept once Redis was back');
    process.stdout.write(`faults-process redis restart: recovered per replica in ${recoveredMs.join('/')} ms; in flight ${JSON.stringify(tally(early))}\n`);
  });

  // Known limitation, kept visible: idempotency records live only in Redis. A Redis that loses its data
  // (shutdown nosave, no AOF, failover to an empty replica) forgets completed keys, and a retry charges again.
  // Guarantee 2 then rests on a persistent Redis or GATEWAY_DUPLICATE_FOLDING. If this test starts failing
  // because the retry is refused or folded, the limitation is gone: turn it into the guarantee.
  it('when Redis loses its data after a sale completed, then a retry of that key is charged a second time (known limitation)', async () => {
    const c = newCase('lost-data');
    expect((await sendSale(replicas, c)).status).toBe(201);
    await redis.shutdown();
    await redis.start();
    const deadline = Date.now() + 60_000; // a safety net: the replicas reconnect by themselves
    let answer: Answer;
    do {
      await sleep(200);
      answer = await sendSale(replicas, c);
      // 503 while the replicas reconnect; 429 while the budget waits out the state it lost (limiter README).
    } while ((answer.status === 503 || answer.status === 429) && Date.now() < deadline);
    expect(answer.status).toBe(201);
    expect(answer.headers['idempotent-replayed']).toBeUndefined();
    expect(charges(c)).toHaveLength(2);
    expect(saleViolations([c], sandbox.transactions())).toEqual([`${c.key}: charged 2 times`, expect.stringContaining('is not the one charge'), expect.stringContaining('is not the one charge')]);
  });

  it('when a replica is SIGKILLed while its sale is at the gateway, then the key retried elsewhere is never charged again and is reconciled to that charge', async () => {
    // Other callers keep buying on the replicas that live.
    const healthy: SaleCase[] = [];
    expect((await untilEveryReplicaSells(healthy, 60_000)).includes(-1)).toBe(false);
    const background = Array.from({ length: 8 }, () => newCase('bg'));
    const victim = newCase('kill');
    sandbox.faults.next({ kind: 'hang', match: 'sale' });
    const first = sendSale(replicas, victim, { replica: 0 });
    const seenAt = Date.now();
    while (charges(victim).length === 0 && Date.now() - seenAt < 30_000) await sleep(2);
    expect(charges(victim)).toHaveLength(1); // charged at the gateway, answer not yet sent
    victim.killed = true;
    const bgDone = Promise.all(background.map((c, i) => sendSale(replicas, c, { replica: 1 + (i % 2) })));
    await replicas.kill(0, 'SIGKILL');
    expect((await first).status).toBe(0); // its caller lost the connection: no answer can come from a dead process

    // Retried on the other replicas: in progress until the dead owner's lease ends, then the reconciler on a
    // live replica finds the charge in the gateway's records (guarantee 6); never charged a second time.
    const deadline = Date.now() + LEASE_MS + 10_000;
    let last: Answer;
    do {
      last = await sendSale(replicas, victim, { replica: 1 + (victim.answers.length % 2) });
      if (last.status === 201) break;
      expect(['409 idempotency_in_progress', '409 outcome_unknown']).toContain(`${last.status} ${code(last)}`);
      expect(Number(last.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      await sleep(500);
    } while (Date.now() < deadline);
    expect(last.status).toBe(201);
    expect(last.headers['tokengate-reconciled']).toBe('true');
    expect((last.body as { key?: string }).key).toBe(charges(victim)[0]?.key);

    // A fresh replica in the dead one's place replays the same answer.
    await replicas.replace(0);
    const again = await sendSale(replicas, victim, { replica: 0 });
    expect(`${again.status} ${again.headers['tokengate-reconciled']}`).toBe('201 true');
    await bgDone;
    expect(saleViolations([victim, ...background], sandbox.transactions())).toEqual([]);
    expect(background.map((c) => c.answers[0]?.status)).toEqual(background.map(() => 201));
    expect(charges(victim).map((t) => t.delivery)).toEqual(['lost']);
  });
});
