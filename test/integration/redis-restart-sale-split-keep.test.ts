import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { token, type Bff } from '../support/bff';
import { canStartRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { DIST_MAIN } from '../support/service-process';
import { backRefusingThenDie, keysExcept, readUntil, setAcl, startDyingService } from '../support/replica-death';

/**
 * A sale's completion writes three things (src/writes/protocol.ts): the key's answer, the sale's record (which
 * makes the sale its customer's, and puts it in its batch's index) and its payment event (`sale.succeeded`). What
 * Redis cannot take then is kept later by the replica (src/writes/keep-later.ts); a replica that dies first loses
 * it. Made deterministic here: Redis refuses (ACL) one kind of key to the service, the replica is killed (SIGKILL)
 * 1.5 s later, and Redis then takes every key again. Three sales:
 *
 * - answerKept: answered while Redis was down; Redis back refusing the sale records, the batch index and the event
 *   log: the replica keeps the answer and dies. Before, the reconciler dropped the key as final (its answer kept)
 *   and nothing rebuilt the rest: the shopper's own sale answered 404, no `sale.succeeded` ever, and the batch's
 *   settlement called the sale not tokengate's;
 * - answerLost: answered while Redis was down; Redis back refusing the idempotency keys: the replica keeps the
 *   record and the event and dies. Before, the reconciler skipped the sale as another key's (it had a record),
 *   proved the key absent and freed it, and the retry charged the shopper again;
 * - recordsRefused: Redis up, refusing the sale records, the batch index and the event log at the completion (a
 *   Cluster node down while the answer's is up): the answer is stored, the rest refused, the replica dies.
 *   Before, as answerKept.
 */

const canRun = canStartRedis() && existsSync(DIST_MAIN);
const suite = canRun ? describe : describe.skip;
const run = randomBytes(3).toString('hex');
const prefix = `sale-split-${run}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Which = 'answerKept' | 'answerLost' | 'recordsRefused';
const ALL: readonly Which[] = ['answerKept', 'answerLost', 'recordsRefused'];

/** The sale records (`{p:sale:<key>}`), the batch index (`{p:batch:<batch>}`) and the event log (`{p:events}:…`). */
const RECORDS_AND_EVENTS = ['sale:', 'batch:', 'events}'];

interface Answer {
  status: number;
  headers: Headers;
  body: { key?: string; amount?: string; data?: Array<{ type: string; data: { key?: string } }>; lines?: Array<{ transaction: string; verdict: string }>; error?: { code?: string } };
}

suite('a sale\'s replica dies having kept only part of its completion (answer, record, event)', () => {
  let redis: PrivateRedis;
  let bff: Bff;
  let customer: string;
  let pm: string;
  let shopper: string;
  let internal: string;
  const first: Partial<Record<Which, Answer>> = {};
  const again: Partial<Record<Which, Answer>> = {};
  const views: Partial<Record<Which, number>> = {};
  let events: Answer['body']['data'] = [];
  let settlement: Answer['body'] | undefined;
  let indexed: Partial<Record<Which, boolean>> = {};
  let batch = '';
  let tookMs = 0;

  const call = async (bearer: string, method: string, path: string, body?: unknown, key?: string): Promise<Answer> => {
    const res = await fetch(`${bff.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json' } : {}), ...(key ? { 'idempotency-key': key } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
  };
  const sale = (which: Which) => () => call(shopper, 'POST', '/v1/sales', { customer, payment_method: pm, amount: '5.00', invoice: `inv-${which}-${run}` }, `sale-${which}-${run}`);
  // A first sale on the method (its token read from the gateway and cached), so the next one is at the gateway at once.
  const warm = (which: Which) => call(shopper, 'POST', '/v1/sales', { customer, payment_method: pm, amount: '1.00' }, `warm-${which}-${run}`);
  const acl = (...args: string[]) => setAcl(redis.url, ...args);
  const until = <T>(read: () => Promise<T>, done: (t: T) => boolean, ms = 25_000) => readUntil(read, done, ms);

  /** Answered while Redis is down; Redis comes back refusing `words`' keys; the replica dies; Redis takes all again. */
  async function answeredWhileDown(which: Which, words: readonly string[]): Promise<Answer> {
    await warm(which);
    const sent = sale(which)();
    await sleep(300);
    await redis.shutdown();
    const answer = await sent;
    await backRefusingThenDie(redis, bff, prefix, words);
    return answer;
  }

  beforeAll(async () => {
    if (!canRun) return;
    const started = Date.now();
    redis = await startPrivateRedis({ aof: true });
    bff = await startDyingService(redis.url, prefix, { LIMITER_SALE_MAX_WAIT_MS: '500', LIMITER_READ_MAX_WAIT_MS: '500', SETTLEMENTS_LOOK_MS: '200' });
    customer = bff.sandbox.fixtures.firstCustomer().key;
    pm = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    shopper = token({ sub: `shopper-${run}`, custkey: customer, scope: 'sales:create sales:read' }, { expiresIn: 600 });
    internal = token({ sub: `ledger-${run}`, scope: 'customers:any events:read settlements:read' }, { expiresIn: 600 });

    first.answerKept = await answeredWhileDown('answerKept', RECORDS_AND_EVENTS);
    first.answerLost = await answeredWhileDown('answerLost', ['idem:']);
    await warm('recordsRefused');
    acl('resetkeys', ...keysExcept(prefix, RECORDS_AND_EVENTS));
    first.recordsRefused = await sale('recordsRefused')();
    await sleep(1500);
    await bff.restart({ signal: 'SIGKILL', between: async () => { acl('allkeys'); } });

    const untilAnswered = (which: Which) => until(sale(which), (a) => a.status !== 409);
    const [a, b, c] = await Promise.all(ALL.map(untilAnswered));
    Object.assign(again, { answerKept: a, answerLost: b, recordsRefused: c });
    const keyOf = (which: Which) => first[which]?.body.key ?? '';
    const statuses = await Promise.all(ALL.map((which) => until(() => call(shopper, 'GET', `/v1/sales/${keyOf(which)}`), (v) => v.status === 200, 20_000)));
    ALL.forEach((which, i) => { views[which] = statuses[i]?.status; });
    const succeeded = (list: Answer['body']['data']) => new Set((list ?? []).filter((e) => e.type === 'sale.succeeded').map((e) => e.data.key));
    events = (await until(() => call(internal, 'GET', '/v1/events?limit=1000'), (r) => ALL.every((w) => succeeded(r.body.data).has(keyOf(w))), 5_000)).body.data;

    batch = bff.sandbox.ledger.closeBatch();
    settlement = (await until(() => call(internal, 'GET', `/v1/settlements/${batch}`), (r) => r.status === 200, 10_000)).body;
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    const members = new Set(await client.smembers(`{${prefix}:batch:${encodeURIComponent(batch)}}`));
    client.disconnect();
    indexed = Object.fromEntries(ALL.map((w) => [w, members.has(keyOf(w))]));
    tookMs = Date.now() - started;
  }, 150_000);

  afterAll(async () => {
    await bff?.stop();
    await redis?.stop();
  });

  it('when the gateway answers, then each sale is answered 201', () => {
    expect(ALL.map((w) => first[w]?.status)).toEqual([201, 201, 201]);
  });

  it('when each key is sent again to the new replica, then it answers its sale once more (replayed or reconciled), never a second sale', () => {
    for (const which of ALL) {
      const a = again[which];
      const how = a?.headers.get('idempotent-replayed') === 'true' ? 'replayed' : a?.headers.get('tokengate-reconciled') === 'true' ? 'reconciled' : 'sent again';
      expect({ which, status: a?.status, how: how === 'sent again' ? how : 'replayed or reconciled', key: a?.body.key }).toEqual({ which, status: 201, how: 'replayed or reconciled', key: first[which]?.body.key });
    }
    for (const which of ALL) {
      expect({ which, sales: bff.sandbox.ledger.entries().filter((e) => e.invoice === `inv-${which}-${run}`).length }).toEqual({ which, sales: 1 });
    }
  });

  it('then the shopper reads each sale as its own (200, not 404)', () => {
    expect(views).toEqual({ answerKept: 200, answerLost: 200, recordsRefused: 200 });
  });

  it('then the merchant\'s services are told of each sale once (sale.succeeded)', () => {
    for (const which of ALL) {
      expect({ which, told: (events ?? []).filter((e) => e.type === 'sale.succeeded' && e.data.key === first[which]?.body.key).length }).toEqual({ which, told: 1 });
    }
  });

  it('then the batch\'s settlement matches each sale as tokengate\'s, and the batch index holds it', () => {
    for (const which of ALL) {
      const line = settlement?.lines?.find((l) => l.transaction === first[which]?.body.key);
      expect({ which, verdict: line?.verdict, indexed: indexed[which] }).toEqual({ which, verdict: 'matched', indexed: true });
    }
  });

  it('takes well under a minute', () => {
    expect(tookMs).toBeLessThan(60_000);
  });
});
