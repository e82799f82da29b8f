import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { token, type Bff } from '../support/bff';
import { canStartRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { DIST_MAIN } from '../support/service-process';
import { backRefusingThenDie, caller, startDyingService, untilAnswered } from '../support/replica-death';

/**
 * A refund answered while Redis was down leaves two things in its replica's memory, each kept later on its own
 * (src/writes/keep-later.ts): the key's answer (src/writes/protocol.ts) and the settlement of the sale's
 * reservation (src/sales/follow-up-service.ts). Once Redis is back, one may be kept and not the other before the
 * replica dies. Made deterministic here: Redis comes back refusing (ACL) the sale records' keys, or the
 * idempotency keys, to the service; the replica is killed (SIGKILL) 1.5 s later; Redis starts again whole.
 *
 * - answer kept, settlement lost: before, the key replayed 201 while the reconciler dropped the key as final and
 *   the reservation stayed held for good (amount_refunded 0.00, the rest of the sale refused);
 * - settlement kept, answer lost: before, the reconciler found no reservation for the key, called the refund
 *   absent and released the key, and the retry refunded the same money again (guarantee 7).
 */

const canRun = canStartRedis() && existsSync(DIST_MAIN);
const suite = canRun ? describe : describe.skip;
const run = randomBytes(3).toString('hex');
const prefix = `refund-split-${run}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  headers: Headers;
  body: { key?: string; amount?: string; method?: string; amount_refunded?: string; error?: { code?: string } };
}

suite('Redis back after a refund\'s answer, and its replica dies having kept only one of answer and settlement', () => {
  let redis: PrivateRedis;
  let bff: Bff;
  let customer: string;
  let pm: string;
  let bearer: string;
  /** answerKept: its answer kept, its settlement refused; settleKept: the other way round. */
  const sales: { answerKept?: string; settleKept?: string } = {};
  const seen: {
    first?: { answerKept: Answer; settleKept: Answer };
    again?: { answerKept: Answer; settleKept: Answer };
    views?: { answerKept: Answer['body']; settleKept: Answer['body'] };
    rest?: { answerKept: Answer; settleKept: Answer };
    after?: { answerKept: Answer['body']; settleKept: Answer['body'] };
    tookMs?: number;
  } = {};

  const call = caller<Answer['body']>(() => bff.url, () => bearer);
  const refund = (which: 'answerKept' | 'settleKept') => () => call('POST', `/v1/sales/${sales[which]}/refunds`, { amount: '2.00' }, `refund-${which}-${run}`);

  /** The refund is at the gateway when Redis shuts down; Redis comes back refusing `word`'s keys; the replica dies. */
  async function refundThenDie(which: 'answerKept' | 'settleKept', refused: string): Promise<Answer> {
    const sent = refund(which)();
    await sleep(300);
    await redis.shutdown();
    const answer = await sent;
    await backRefusingThenDie(redis, bff, prefix, [refused]);
    return answer;
  }

  beforeAll(async () => {
    if (!canRun) return;
    const started = Date.now();
    redis = await startPrivateRedis({ aof: true });
    bff = await startDyingService(redis.url, prefix);
    customer = bff.sandbox.fixtures.firstCustomer().key;
    pm = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    bearer = token({ sub: `refunder-${run}`, custkey: customer, scope: 'sales:create sales:read refunds:create' }, { expiresIn: 600 });
    for (const which of ['answerKept', 'settleKept'] as const) {
      const sale = await call('POST', '/v1/sales', { customer, payment_method: pm, amount: '9.00' }, `sale-${which}-${run}`);
      expect(sale.status).toBe(201);
      sales[which] = sale.body.key as string;
    }
    seen.first = { answerKept: await refundThenDie('answerKept', 'sale:'), settleKept: await refundThenDie('settleKept', 'idem:') };
    const [answerKept, settleKept] = await Promise.all([untilAnswered(refund('answerKept')), untilAnswered(refund('settleKept'))]);
    seen.again = { answerKept, settleKept };
    seen.views = { answerKept: (await call('GET', `/v1/sales/${sales.answerKept}`)).body, settleKept: (await call('GET', `/v1/sales/${sales.settleKept}`)).body };
    const rest = (which: 'answerKept' | 'settleKept') => call('POST', `/v1/sales/${sales[which]}/refunds`, { amount: '7.00' }, `refund-rest-${which}-${run}`);
    seen.rest = { answerKept: await rest('answerKept'), settleKept: await rest('settleKept') };
    seen.after = { answerKept: (await call('GET', `/v1/sales/${sales.answerKept}`)).body, settleKept: (await call('GET', `/v1/sales/${sales.settleKept}`)).body };
    seen.tookMs = Date.now() - started;
  }, 120_000);

  afterAll(async () => {
    await bff?.stop();
    await redis?.stop();
  });

  it('when the gateway answers while Redis is down, then each refund is answered 201', () => {
    expect([seen.first?.answerKept.status, seen.first?.settleKept.status]).toEqual([201, 201]);
  });

  it('when each key is sent again to the new replica, then it answers its refund once more (replayed or reconciled), not a second refund', () => {
    for (const which of ['answerKept', 'settleKept'] as const) {
      const a = seen.again?.[which];
      const how = a?.headers.get('idempotent-replayed') === 'true' ? 'replayed' : a?.headers.get('tokengate-reconciled') === 'true' ? 'reconciled' : 'sent again';
      expect({ which, status: a?.status, how: how === 'sent again' ? how : 'replayed or reconciled', amount: a?.body.amount }).toEqual({ which, status: 201, how: 'replayed or reconciled', amount: '2.00' });
    }
  });

  it('then each sale counts its refund once (its reservation settled, not held as in flight) and the rest is refunded', () => {
    expect(seen.views?.answerKept).toMatchObject({ amount_refunded: '2.00' });
    expect(seen.views?.settleKept).toMatchObject({ amount_refunded: '2.00' });
    expect([seen.rest?.answerKept.status, seen.rest?.settleKept.status]).toEqual([201, 201]);
    // The rest fits beside a held reservation too (2.00 held + 7.00 ≤ 9.00): what the sale then counts tells.
    expect(seen.after?.answerKept).toMatchObject({ amount_refunded: '9.00', status: 'voided' });
    expect(seen.after?.settleKept).toMatchObject({ amount_refunded: '9.00', status: 'voided' });
  });

  it('then the gateway holds each refund once', () => {
    const approved = (key: string | undefined) => bff.sandbox.ledger.operations().filter((o) => o.trankey === key && o.result_code === 'A').map((o) => `${o.command} ${o.amount ?? ''}`.trim());
    expect(approved(sales.answerKept)).toEqual(['refund:adjust 2.00', 'creditvoid 7.00']);
    expect(approved(sales.settleKept)).toEqual(['refund:adjust 2.00', 'creditvoid 7.00']);
  });

  it('takes well under a minute', () => {
    expect(seen.tookMs).toBeLessThan(60_000);
  });
});
