import { randomBytes } from 'node:crypto';
import { token, type Bff } from '../support/bff';
import { canStartRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { DIST_MAIN } from '../support/service-process';
import { caller, untilAnswered, startDyingService } from '../support/replica-death';
import { existsSync } from 'node:fs';

/**
 * A refund is at the gateway when Redis shuts down; the gateway answers; the replica that sent it dies (SIGKILL)
 * before Redis is back, so neither the key's answer nor the settlement of the sale's reservation, both kept in its
 * memory to be written later (src/writes/keep-later.ts), ever reaches Redis. A new replica on the same Redis and
 * key prefix runs on.
 *
 * The reservation is settled by the reconciler: the refund's key was claimed and tracked in the due set before
 * Redis went down (src/writes/protocol.ts), so when its lease ends the key is outcome_unknown and a look at the
 * gateway (src/reconcile/find.ts, refund-decision.ts) finds the refund and settles its reservation applied. Without
 * that (a reconciler that resolved the key and left the reservation held) the sale would count the refund in flight
 * for good: amount_refunded short and the rest refused.
 */

const canRun = canStartRedis() && existsSync(DIST_MAIN);
const suite = canRun ? describe : describe.skip;
const run = randomBytes(3).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  headers: Headers;
  body: { key?: string; status?: string; amount?: string; method?: string; amount_refunded?: string; error?: { code?: string } };
}

suite('a refund\'s replica dies while Redis is down, before it kept the refund\'s answer or its settlement', () => {
  let redis: PrivateRedis;
  let bff: Bff;
  let customer: string;
  let pm: string;
  let bearer: string;
  /** part: 2.00 of an unsettled 9.00 (refund:adjust); whole: all of an unsettled 5.00 (creditvoid); settled: 3.00 of a settled 8.00 (a credit). */
  const sales: { part?: string; whole?: string; settled?: string } = {};
  const seen: {
    first?: Record<'part' | 'whole' | 'settled', Answer>;
    again?: Record<'part' | 'whole' | 'settled', Answer>;
    views?: Record<'part' | 'whole' | 'settled', Answer['body']>;
    rest?: { part: Answer; settled: Answer };
    after?: { part: Answer['body']; settled: Answer['body'] };
    oldLogs?: string;
    tookMs?: number;
  } = {};

  const call = caller<Answer['body']>(() => bff.url, () => bearer);
  const sell = async (amount: string, key: string): Promise<string> => {
    const a = await call('POST', '/v1/sales', { customer, payment_method: pm, amount }, key);
    expect(a.status).toBe(201);
    return a.body.key as string;
  };
  const refunds = {
    part: () => call('POST', `/v1/sales/${sales.part}/refunds`, { amount: '2.00' }, `refund-part-${run}`),
    whole: () => call('POST', `/v1/sales/${sales.whole}/refunds`, undefined, `refund-whole-${run}`),
    settled: () => call('POST', `/v1/sales/${sales.settled}/refunds`, { amount: '3.00' }, `refund-settled-${run}`),
  };

  beforeAll(async () => {
    if (!canRun) return;
    const started = Date.now();
    redis = await startPrivateRedis({ aof: true });
    // The gateway takes 800 ms to answer, so the shutdown lands while the refunds are at the gateway. Short waits
    // and timeouts make the write lease (after which the reconciler looks) about 16 s. A process, so that it can
    // die (SIGKILL) with what it kept in memory.
    bff = await startDyingService(redis.url, `refund-replica-lost-${run}`);
    customer = bff.sandbox.fixtures.firstCustomer().key;
    pm = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    bearer = token({ sub: `refunder-${run}`, custkey: customer, scope: 'sales:create sales:read refunds:create' }, { expiresIn: 600 });
    sales.settled = await sell('8.00', `sale-settled-${run}`);
    bff.sandbox.ledger.closeBatch();
    sales.part = await sell('9.00', `sale-part-${run}`);
    sales.whole = await sell('5.00', `sale-whole-${run}`);
    // The settled sale's view learns it is settled (one forced read), so its part refund goes as refund:adjust of a
    // settled sale: a credit of its own, tagged with the write's reference.
    await fetch(`${bff.url}/v1/sales/${sales.settled}`, { headers: { authorization: `Bearer ${bearer}`, 'cache-control': 'no-cache' } });

    // All of an unsettled sale reads the sale first (is it settled? src/sales/follow-up-service.ts): it starts one
    // gateway latency earlier, so that all three are at the gateway when Redis shuts down.
    const wholeSent = refunds.whole();
    await sleep(800);
    const inFlight = Promise.all([refunds.part(), wholeSent, refunds.settled()]);
    await sleep(300);
    await redis.shutdown();
    const [part, whole, settled] = await inFlight;
    seen.first = { part, whole, settled };
    // The replica held the answers and settlements in memory, to keep once Redis is back: it dies first.
    await bff.restart({ signal: 'SIGKILL', between: () => redis.start() });
    seen.oldLogs = bff.logs();

    // A new replica: each key is in progress until its lease ends, then outcome_unknown until the reconciler looks.
    const [againPart, againWhole, againSettled] = await Promise.all([untilAnswered(refunds.part), untilAnswered(refunds.whole), untilAnswered(refunds.settled)]);
    seen.again = { part: againPart, whole: againWhole, settled: againSettled };
    const view = async (key: string | undefined) => (await call('GET', `/v1/sales/${key}`)).body;
    seen.views = { part: await view(sales.part), whole: await view(sales.whole), settled: await view(sales.settled) };
    seen.rest = {
      part: await call('POST', `/v1/sales/${sales.part}/refunds`, { amount: '7.00' }, `refund-part-rest-${run}`),
      settled: await call('POST', `/v1/sales/${sales.settled}/refunds`, { amount: '5.00' }, `refund-settled-rest-${run}`),
    };
    seen.after = { part: await view(sales.part), settled: await view(sales.settled) };
    seen.tookMs = Date.now() - started;
  }, 120_000);

  afterAll(async () => {
    await bff?.stop();
    await redis?.stop();
  });

  it('when the gateway answers while Redis is down, then each refund is answered and the dead replica had only kept its answer and settlement in memory', () => {
    expect([seen.first?.part.status, seen.first?.whole.status, seen.first?.settled.status]).toEqual([201, 201, 201]);
    expect(seen.oldLogs).toContain('could not record a follow-up\'s outcome on its sale now');
    expect(seen.oldLogs).toContain('could not keep all of a write\'s answer now');
    expect(seen.oldLogs).not.toContain('a write\'s answer was kept once Redis was back');
  });

  it('when each key is sent again to a new replica, then it answers the refund (reconciled), not 409 for good', () => {
    for (const which of ['part', 'whole', 'settled'] as const) {
      expect({ which, status: seen.again?.[which].status, reconciled: seen.again?.[which].headers.get('tokengate-reconciled') }).toEqual({ which, status: 201, reconciled: 'true' });
    }
    expect(seen.again?.part.body).toMatchObject({ amount: '2.00', method: 'refund' });
    expect(seen.again?.whole.body).toMatchObject({ amount: '5.00', method: 'void' });
    expect(seen.again?.settled.body).toMatchObject({ amount: '3.00', method: 'refund' });
  });

  it('then each sale counts its refund (its reservation settled, not held as in flight) and the rest is refunded', () => {
    expect(seen.views?.part).toMatchObject({ amount_refunded: '2.00' });
    expect(seen.views?.whole).toMatchObject({ status: 'voided' });
    expect(seen.views?.settled).toMatchObject({ amount_refunded: '3.00' });
    expect([seen.rest?.part.status, seen.rest?.settled.status]).toEqual([201, 201]);
    // The rest fits beside a held reservation too (held + rest ≤ captured): what the sale then counts tells.
    expect(seen.after?.part).toMatchObject({ amount_refunded: '9.00', status: 'voided' });
    expect(seen.after?.settled).toMatchObject({ amount_refunded: '8.00' });
  });

  it('then the gateway holds each refund once', () => {
    const approved = (key: string | undefined) => bff.sandbox.ledger.operations().filter((o) => o.trankey === key && o.result_code === 'A').map((o) => `${o.command} ${o.amount ?? ''}`.trim());
    expect(approved(sales.part)).toEqual(['refund:adjust 2.00', 'creditvoid 7.00']);
    expect(approved(sales.whole)).toEqual(['creditvoid 5.00']);
    expect(approved(sales.settled)).toEqual(['refund:adjust 3.00', 'refund 5.00']);
    expect(bff.sandbox.ledger.get(sales.part as string)).toMatchObject({ adjusted: '2.00', state: 'voided' });
    expect(bff.sandbox.ledger.get(sales.settled as string)).toMatchObject({ refunded: '8.00' });
  });

  it('takes well under a minute', () => {
    expect(seen.tookMs).toBeLessThan(60_000);
  });
});
