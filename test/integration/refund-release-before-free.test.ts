import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { token, type Bff } from '../support/bff';
import { canStartRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { DIST_MAIN } from '../support/service-process';
import { caller, keysExcept, untilAnswered, startDyingService } from '../support/replica-death';

/**
 * A refund the gateway refused before processing it (429, errorcode 155: nothing sent) frees its Idempotency-Key
 * and releases its reservation on the sale. When Redis takes the key's freeing but not the release (here: an ACL
 * refusing the sale records' keys, set while the refund is at the gateway) and the replica then dies, the
 * release kept in its memory was lost with it: the key was free, so no reconciler ever looked again, and the
 * reservation stayed held for good. The sale then counted 2.00 as in flight forever: its refunds were short by
 * it (the rest of the sale refused as exceeding it). Now the release goes first and the key is freed after it
 * (src/writes/protocol.ts, WriteNotSentError.before): a replica that dies first leaves the key to its lease and
 * the reconciler, which finds the refund absent at the gateway and releases the reservation itself.
 */

const canRun = canStartRedis() && existsSync(DIST_MAIN);
const suite = canRun ? describe : describe.skip;
const run = randomBytes(3).toString('hex');
const prefix = `release-first-${run}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  headers: Headers;
  body: { key?: string; amount?: string; amount_refunded?: string; status?: string; error?: { code?: string } };
}

suite('A refund refused before processing, whose reservation\'s release Redis does not take, on a replica that then dies', () => {
  let redis: PrivateRedis;
  let bff: Bff;
  let bearer: string;
  let sale: string;
  const seen: { first?: Answer; again?: Answer; view?: Answer['body']; rest?: Answer; after?: Answer['body']; tookMs?: number } = {};

  const acl = (...args: string[]) => execFileSync('redis-cli', ['-p', String(redis.port), 'ACL', 'SETUSER', 'default', ...args], { encoding: 'utf8' });
  const call = caller<Answer['body']>(() => bff.url, () => bearer);
  const refund = () => call('POST', `/v1/sales/${sale}/refunds`, { amount: '2.00' }, `refund-${run}`);

  beforeAll(async () => {
    if (!canRun) return;
    const started = Date.now();
    redis = await startPrivateRedis({ aof: true });
    bff = await startDyingService(redis.url, prefix);
    const customer = bff.sandbox.fixtures.firstCustomer().key;
    const pm = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    bearer = token({ sub: `refunder-${run}`, custkey: customer, scope: 'sales:create sales:read refunds:create' }, { expiresIn: 600 });
    const made = await call('POST', '/v1/sales', { customer, payment_method: pm, amount: '9.00' }, `sale-${run}`);
    expect(made.status).toBe(201);
    sale = made.body.key as string;

    // The refund's reservation is made at once; the gateway answers 429 (155) 800 ms later, by when Redis refuses
    // the sale records' keys (and still takes the idempotency keys).
    bff.sandbox.faults.next({ kind: '429', match: 'refund' });
    const sent = refund();
    await sleep(300);
    acl('resetkeys', ...keysExcept(prefix, ['sale:']));
    seen.first = await sent;
    await sleep(1500); // what the replica could keep, it kept
    await bff.restart({ signal: 'SIGKILL', between: async () => { acl('allkeys'); } });

    // 409 while the key is held (its lease, then the reconciler); 429/503 while the budget probes after the 429.
    seen.again = await untilAnswered(refund, [409, 429, 503]);
    seen.view = (await call('GET', `/v1/sales/${sale}`)).body;
    seen.rest = await call('POST', `/v1/sales/${sale}/refunds`, { amount: '7.00' }, `refund-rest-${run}`);
    seen.after = (await call('GET', `/v1/sales/${sale}`)).body;
    seen.tookMs = Date.now() - started;
  }, 120_000);

  afterAll(async () => {
    await bff?.stop();
    await redis?.stop();
  });

  it('when the gateway refuses the refund before processing it, then the caller is told nothing moved (not 201, not outcome_unknown)', () => {
    expect(seen.first?.status).not.toBe(201);
    expect(seen.first?.body.error?.code).not.toBe('outcome_unknown');
  });

  it('when the key is sent again to the new replica, then the refund is made once', () => {
    expect({ status: seen.again?.status, amount: seen.again?.body.amount }).toEqual({ status: 201, amount: '2.00' });
  });

  it('then the sale counts that refund alone (no reservation left held) and the rest of it can be refunded', () => {
    expect(seen.view).toMatchObject({ amount_refunded: '2.00' });
    expect(seen.rest?.status).toBe(201);
    expect(seen.after).toMatchObject({ amount_refunded: '9.00', status: 'voided' });
    const approved = bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.result_code === 'A').map((o) => `${o.command} ${o.amount ?? ''}`.trim());
    expect(approved).toEqual(['refund:adjust 2.00', 'creditvoid 7.00']);
  });

  it('takes well under a minute', () => {
    expect(seen.tookMs).toBeLessThan(60_000);
  });
});
