import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { startBff, token, TEST_JWT_ENV, type Bff } from '../support/bff';
import { canStartRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { redisUrl } from '../support/redis';
import { DIST_MAIN, startServiceProcess, type ServiceProcess } from '../support/service-process';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * Guarantee 13 across the faults of issue 37, item 3, judged from the sandbox's ledger: Redis restarted while a
 * renewal is at the gateway, and the replica running a renewal killed (SIGKILL) with its charge made and its
 * answer lost. Either way the period is charged once and the subscription takes that charge as paid.
 */
jest.setTimeout(120_000);

const DAY = 86_400_000;
const run = randomBytes(3).toString('hex');
const service = () => token({ sub: `billing-${run}`, scope: 'customers:any subscriptions:read subscriptions:write' }, { expiresIn: 600 });

async function clock(adminUrl: string, advance?: number): Promise<number> {
  const res = await fetch(`${adminUrl}/test/clock`, advance === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: advance }) });
  return Date.parse(((await res.json()) as { now: string }).now);
}
/** Gateway sales received so far (counted as each arrives, before it is processed). */
const salesArrived = (bff: Bff) => Object.values(bff.sandbox.stats().endpoints).reduce((n, e) => n + (e.acceptedByKind.sale ?? 0), 0);

async function subscribe(base: string, adminUrl: string, custkey: string, pmkey: string, invoices: string): Promise<string> {
  const start = new Date((await clock(adminUrl)) + DAY).toISOString().slice(0, 10);
  const made = await call(base, 'POST', `/v1/customers/${custkey}/subscriptions`, service(),
    { amount: '6.50', interval: 'month', start, payment_method: pmkey, invoice_prefix: invoices, consent: { text: 'v1' } }, { 'Idempotency-Key': `sub-${invoices}` });
  expect(made.status).toBe(201);
  return made.body.key as string;
}

const suite = canStartRedis() ? describe : describe.skip;
suite('Redis restarted while a renewal is at the gateway', () => {
  let redis: PrivateRedis;
  let bff: Bff;
  afterAll(async () => {
    await bff?.stop();
    await redis?.stop();
  });

  test('when Redis restarts during the renewal\'s gateway call, then the period is charged once and paid', async () => {
    redis = await startPrivateRedis({ aof: true });
    bff = await startBff({
      env: {
        REDIS_URL: redis.url, REDIS_KEY_PREFIX: `subs-restart-${run}`, SUBSCRIPTION_POLL_MS: '25', GATEWAY_TIMEOUT_MS: '3000',
        LIMITER_SALE_MAX_WAIT_MS: '1000', LIMITER_READ_MAX_WAIT_MS: '1000', RECONCILE_INTERVAL_MS: '200', RECONCILE_RETRY_MS: '300',
      },
      sandbox: { latencyMs: 1200 },
    });
    const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
    if (!found) throw new Error('fixture card missing');
    const invoices = `rr${run}`;
    const k = await subscribe(bff.url, bff.adminUrl, found.customer.key, found.method.key, invoices);
    const charged = () => bff.sandbox.transactions().filter((t) => t.invoice === `${invoices}-1`);
    const before = salesArrived(bff);
    await clock(bff.adminUrl, DAY + 1000);
    // The renewal's sale is at the gateway (1.2 s to answer): Redis goes down under it and comes back.
    await eventually(() => salesArrived(bff) > before, 20_000);
    await redis.shutdown();
    await eventually(() => charged().length === 1, 10_000);
    await redis.start();
    await eventually(async () => (await call(bff.url, 'GET', `/v1/subscriptions/${k}`, service())).body.periods_charged === 1, 60_000, 100);
    const sub = (await call(bff.url, 'GET', `/v1/subscriptions/${k}`, service())).body;
    expect(sub).toMatchObject({ status: 'active', periods_charged: 1 });
    expect(sub.history).toEqual([expect.objectContaining({ period: 0, result: 'approved' })]);
    // The period has moved on, so no pass can charge it again: the ledger holds one charge for it.
    expect(charged().map((t) => t.result_code)).toEqual(['A']);
  });
});

const built = existsSync(DIST_MAIN) ? describe : describe.skip;
built('a replica killed in the middle of a renewal', () => {
  let bff: Bff;
  const replicas: ServiceProcess[] = [];
  afterAll(async () => {
    for (const r of replicas) await r.stop('SIGKILL').catch(() => undefined);
    await bff?.stop();
  });

  test('when the replica running a renewal dies after the gateway charged it, then another settles that charge and the period is charged once', async () => {
    // The in-process service only lends its sandbox (another key prefix: it never sees these subscriptions).
    bff = await startBff({ env: { REDIS_KEY_PREFIX: `subs-kill-idle-${run}` } });
    const env = {
      NODE_ENV: 'test', REDIS_URL: redisUrl(), REDIS_KEY_PREFIX: `subs-kill-${run}`, GATEWAY_BASE_URL: bff.sandbox.baseUrl,
      GATEWAY_RATE_PER_MINUTE: '100000', GATEWAY_RATE_PER_DAY: '1000000', LIMITER_SALE_RESERVED_SLOTS: '0', ...TEST_JWT_ENV,
      SUBSCRIPTION_POLL_MS: '25', GATEWAY_TIMEOUT_MS: '2000', LIMITER_SALE_MAX_WAIT_MS: '1000', LIMITER_READ_MAX_WAIT_MS: '1000',
      RECONCILE_INTERVAL_MS: '200', RECONCILE_RETRY_MS: '300',
    };
    const first = await startServiceProcess(env);
    replicas.push(first);
    const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
    if (!found) throw new Error('fixture card missing');
    const invoices = `rk${run}`;
    const k = await subscribe(first.url, first.adminUrl, found.customer.key, found.method.key, invoices);
    const charged = () => bff.sandbox.transactions().filter((t) => t.invoice === `${invoices}-1`);
    // The gateway processes the renewal and never answers; the replica is killed while it waits.
    bff.sandbox.faults.next({ kind: 'hang', match: 'sale' });
    await clock(first.adminUrl, DAY + 1000);
    await eventually(() => charged().length === 1, 20_000);
    await first.stop('SIGKILL');
    const second = await startServiceProcess(env);
    replicas.push(second);
    await eventually(async () => (await call(second.url, 'GET', `/v1/subscriptions/${k}`, service())).body.periods_charged === 1, 90_000, 200);
    const sub = (await call(second.url, 'GET', `/v1/subscriptions/${k}`, service())).body;
    expect(sub).toMatchObject({ status: 'active', periods_charged: 1 });
    expect(sub.history).toEqual([expect.objectContaining({ period: 0, result: 'approved' })]);
    expect(charged().map((t) => t.result_code)).toEqual(['A']);
  });
});
