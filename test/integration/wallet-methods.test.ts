import { randomBytes } from 'node:crypto';
import type { Caller } from '../../src/access';
import type { PaymentMethod } from '../../src/gateway/types';
import { createMemoryScheduler } from '../../src/limiter';
import { callSandbox } from '../../src/sandbox/client';
import { silentLogger } from '../../src/observability/logger';
import { createRedisWalletStore } from '../../src/wallet/redis-wallet-store';
import { createWalletView } from '../../src/wallet/wallet-view';
import { startBff, token, type Bff } from '../support/bff';
import { clientFor } from '../support/gateway';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';
import { call, gatewayCalls, gatewayCallsOf, mintPaymentKey } from '../support/wallet';

/**
 * A customer's payment methods (issue 26, item 2; issue 25, item 1): the list answered from tokengate's view with
 * Cache-Status and Age, each method with `default` (exactly one); renamed, renewed, made the default on one replica
 * and seen by the next list on another with no gateway call; a refresh never overwriting a newer write.
 */

const FRESH_MS = 1500;
let bff: Bff;
let other: { url: string; stop(): Promise<void> };
const run = randomBytes(3).toString('hex');
let n = 0;
const id = (what: string) => `${what}-${run}-${++n}`;

beforeAll(async () => {
  bff = await startBff({ env: { VIEW_WALLET_FRESH_MS: String(FRESH_MS) } });
  other = await bff.replica();
});
afterAll(() => bff?.stop());

/** A fixture customer of its own per test (index), with its cards. */
const customer = (i: number) => bff.sandbox.fixtures.customers[i] as { key: string };
const methodsAt = (custkey: string) => bff.sandbox.fixtures.paymentMethods(custkey);
const shopper = (custkey: string) => token({ sub: `pm-shopper-${run}`, custkey, scope: 'payment_methods:read payment_methods:write tokens:read sales:create' });
const list = (base: string, custkey: string, headers: Record<string, string> = {}) => call(base, 'GET', `/v1/customers/${custkey}/payment_methods`, shopper(custkey), undefined, headers);
const patch = (base: string, custkey: string, pmkey: string, body: unknown) => call(base, 'PATCH', `/v1/customers/${custkey}/payment_methods/${pmkey}`, shopper(custkey), body);
type Listed = { key: string; default: boolean; method_name: string; expires: string; ccnum4last: string };
const data = (res: { body: Record<string, unknown> }) => res.body.data as Listed[];

describe('GET /v1/customers/{custkey}/payment_methods from the view', () => {
  it('when a wallet is listed twice, then the first reads the gateway once and the second none, each method with default, exactly one', async () => {
    const c = customer(3).key;
    const calls = gatewayCalls(bff);
    const first = await list(bff.url, c);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-status')).toBe('tokengate; fwd=uri-miss; stored');
    expect(first.headers.get('age')).toBe('0');
    expect(gatewayCalls(bff)).toBe(calls + 1);
    const second = await list(other.url, c);
    expect(second.headers.get('cache-status')).toMatch(/^tokengate; hit; ttl=\d+$/);
    expect(Number(second.headers.get('age'))).toBeGreaterThanOrEqual(0);
    expect(gatewayCalls(bff)).toBe(calls + 1);
    expect(data(second).map((m) => m.key).sort()).toEqual(methodsAt(c).map((m) => m.key).sort());
    expect(data(second).filter((m) => m.default)).toHaveLength(1);
    expect(second.body.total).toBe(methodsAt(c).length);
  });

  it('when the view is older than its bound, then it is answered at once as stale and refreshed behind the answer in spare budget', async () => {
    const c = customer(4).key;
    await list(bff.url, c);
    await new Promise((r) => setTimeout(r, FRESH_MS + 1100));
    const calls = gatewayCalls(bff);
    const stale = await list(bff.url, c);
    expect(stale.status).toBe(200);
    expect(stale.headers.get('cache-status')).toMatch(/^tokengate; hit; ttl=-\d+$/);
    expect(Number(stale.headers.get('age'))).toBeGreaterThanOrEqual(2);
    await eventually(() => gatewayCalls(bff) === calls + 1);
    await eventually(async () => /ttl=\d+$/.test((await list(other.url, c)).headers.get('cache-status') ?? ''));
  });

  it('when the caller sends Cache-Control: no-cache, then it gets the gateway\'s word for one read', async () => {
    const c = customer(3).key;
    const calls = gatewayCalls(bff);
    const forced = await list(bff.url, c, { 'cache-control': 'no-cache' });
    expect(forced.headers.get('cache-status')).toBe('tokengate; fwd=request; stored');
    expect(gatewayCalls(bff)).toBe(calls + 1);
  });

  it('when a card is added, then the next list shows it with no gateway call', async () => {
    const c = customer(3).key;
    await list(bff.url, c);
    const added = await call(bff.url, 'POST', `/v1/customers/${c}/payment_methods`, shopper(c), { payment_key: await mintPaymentKey(bff, shopper(c), '4000100011112224') }, { 'idempotency-key': id('add') });
    expect(added.status).toBe(201);
    const calls = gatewayCalls(bff);
    const after = await list(other.url, c);
    expect(data(after).map((m) => m.key)).toContain(added.body.key);
    expect(gatewayCalls(bff)).toBe(calls);
  });
});

describe('PATCH /v1/customers/{custkey}/payment_methods/{pmkey}', () => {
  it('when a card is renamed on one replica, then the next list on another shows the new name with no gateway call', async () => {
    const c = customer(5).key;
    const pm = (methodsAt(c)[0] as { key: string }).key;
    await list(other.url, c);
    const res = await patch(bff.url, c, pm, { method_name: 'Travel card' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ key: pm, method_name: 'Travel card', default: expect.any(Boolean) });
    const calls = gatewayCalls(bff);
    const after = await list(other.url, c);
    expect(data(after).find((m) => m.key === pm)?.method_name).toBe('Travel card');
    expect(gatewayCalls(bff)).toBe(calls);
    expect(methodsAt(c).find((m) => m.key === pm)?.method_name).toBe('Travel card');
  });

  it('when a card is made the default, then it is the only default everywhere, with no gateway call, and a refresh keeps it', async () => {
    const c = customer(18).key;
    const before = data(await list(bff.url, c));
    const target = before.find((m) => !m.default) as Listed;
    const calls = gatewayCallsOf(bff, 'payment_methods') + gatewayCallsOf(bff, 'customers');
    const res = await patch(bff.url, c, target.key, { default: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ key: target.key, default: true });
    // The gateway's PUT cannot move a default: tokengate keeps it, so nothing was sent.
    expect(gatewayCallsOf(bff, 'payment_methods') + gatewayCallsOf(bff, 'customers')).toBe(calls);
    for (const res2 of [await list(other.url, c), await list(bff.url, c, { 'cache-control': 'no-cache' })]) {
      expect(data(res2).filter((m) => m.default).map((m) => m.key)).toEqual([target.key]);
    }
  });

  it('when a renewed card\'s expiry is set, then it is kept; a past one is refused by the gateway: 400 with a neutral message', async () => {
    const c = customer(19).key;
    const pm = (methodsAt(c)[1] as { key: string }).key;
    const renewed = await patch(bff.url, c, pm, { expires: '0931' });
    expect(renewed.status).toBe(200);
    expect(renewed.body.expires).toBe('0931');
    const past = await patch(bff.url, c, pm, { expires: '0120', method_name: 'Old card 0120' });
    expect(past.status).toBe(400);
    expect(past.body.error).toMatchObject({ code: 'invalid_request', details: [{ path: 'body', rule: 'refused_by_gateway' }] });
    expect(JSON.stringify(past.body)).not.toContain('0120');
    expect(data(await list(other.url, c)).find((m) => m.key === pm)).toMatchObject({ expires: '0931' });
  });

  it('when a card was added at the gateway after the view was loaded, then renaming and removing it still find it', async () => {
    const c = customer(17).key;
    await list(bff.url, c);
    const added = await callSandbox(bff.sandbox.baseUrl, 'POST', `customers/${c}/payment_methods`, { body: [{ pay_type: 'cc', number: '4000100011112224', expiration: '0930', method_name: 'From the console' }] });
    const pm = (added.json as { key: string }[])[0]?.key as string;
    const renamed = await patch(other.url, c, pm, { method_name: 'Found' });
    expect(renamed.status).toBe(200);
    expect(data(await list(bff.url, c)).find((m) => m.key === pm)?.method_name).toBe('Found');
    expect((await call(bff.url, 'DELETE', `/v1/customers/${c}/payment_methods/${pm}`, shopper(c))).status).toBe(204);
  });

  it('when a body carries a card number, or names no change, then 422 or 400 and nothing is sent', async () => {
    const c = customer(5).key;
    const pm = (methodsAt(c)[0] as { key: string }).key;
    const calls = gatewayCalls(bff);
    const card = await patch(bff.url, c, pm, { method_name: 'card 5555 4444 3333 2226' });
    expect(card.status).toBe(422);
    expect(card.body.error?.code).toBe('card_data_forbidden');
    expect((await patch(bff.url, c, pm, {})).status).toBe(400);
    expect((await patch(bff.url, c, pm, { default: false })).status).toBe(400);
    expect((await patch(bff.url, c, pm, { sortord: 0 })).status).toBe(400);
    expect(gatewayCalls(bff)).toBe(calls);
  });

  it('when a token is bound to another customer, then PATCH and DELETE answer 404 and nothing changes', async () => {
    const c = customer(5).key;
    const pm = (methodsAt(c)[0] as { key: string }).key;
    const stranger = token({ sub: 'stranger', custkey: customer(6).key, scope: 'payment_methods:write' });
    expect((await call(bff.url, 'PATCH', `/v1/customers/${c}/payment_methods/${pm}`, stranger, { method_name: 'Mine now' })).status).toBe(404);
    expect((await call(bff.url, 'DELETE', `/v1/customers/${c}/payment_methods/${pm}`, stranger)).status).toBe(404);
    expect(methodsAt(c).map((m) => m.key)).toContain(pm);
  });
});

describe('DELETE /v1/customers/{custkey}/payment_methods/{pmkey}', () => {
  it('when a card is removed, then 204, no list on any replica shows it, its token and any sale with it answer 404, and nothing is charged', async () => {
    const c = customer(20).key;
    const pm = (methodsAt(c).find((m) => m.number.endsWith('2224') && m.number.startsWith('40001')) as { key: string }).key;
    await list(other.url, c);
    // Its token cached by a first sale.
    const first = await call(bff.url, 'POST', '/v1/sales', shopper(c), { customer: c, payment_method: pm, amount: '2.00' }, { 'idempotency-key': id('sale') });
    expect(first.status).toBe(201);
    const del = await call(bff.url, 'DELETE', `/v1/customers/${c}/payment_methods/${pm}`, shopper(c));
    expect(del.status).toBe(204);
    expect(methodsAt(c).map((m) => m.key)).not.toContain(pm);
    const calls = gatewayCalls(bff);
    const after = await list(other.url, c);
    expect(data(after).map((m) => m.key)).not.toContain(pm);
    expect(data(after).filter((m) => m.default)).toHaveLength(after.body.total === 0 ? 0 : 1);
    expect(gatewayCalls(bff)).toBe(calls);
    const charged = bff.sandbox.transactions().length;
    for (const base of [bff.url, other.url]) {
      expect((await call(base, 'GET', `/v1/customers/${c}/payment_methods/${pm}/token`, shopper(c))).status).toBe(404);
      const sale = await call(base, 'POST', '/v1/sales', shopper(c), { customer: c, payment_method: pm, amount: '2.00' }, { 'idempotency-key': id('sale') });
      expect(sale.status).toBe(404);
      expect(sale.body.error?.code).toBe('not_found');
    }
    expect(bff.sandbox.transactions()).toHaveLength(charged);
    // The same caller's retry replays the 204; another caller is told it is gone.
    expect((await call(bff.url, 'DELETE', `/v1/customers/${c}/payment_methods/${pm}`, shopper(c))).status).toBe(204);
    const svc = token({ sub: 'svc-other', scope: 'payment_methods:write customers:any' });
    expect((await call(bff.url, 'DELETE', `/v1/customers/${c}/payment_methods/${pm}`, svc)).status).toBe(404);
  });
});

describe('the wallet view against a slow gateway read', () => {
  const { prefix, redis } = suiteRedis('wallet-view');

  it('when a refresh that read the gateway before a rename lands after it, then the rename stays in the view', async () => {
    const c = customer(9).key;
    const pm = (methodsAt(c)[0] as { key: string }).key;
    const store = createRedisWalletStore({ redis, keyPrefix: prefix });
    const gateway = clientFor(bff.sandbox);
    let armed = false;
    let release = () => undefined as void;
    let taken = () => undefined as void;
    const gate = new Promise<void>((r) => (release = r));
    const readTaken = new Promise<void>((r) => (taken = r));
    // The gateway's answer is taken, then held while a write lands: a slow read racing a rename.
    const slow = {
      ...gateway,
      async getCustomer(custkey: string) {
        const answer = await gateway.getCustomer(custkey);
        if (armed) {
          taken();
          await gate;
        }
        return answer;
      },
    };
    const logger = silentLogger();
    const budget = createMemoryScheduler({
      endpointKey: 'v2', logger, limits: { perWindow: 1000, windowMs: 60_000, perDay: 100_000, dayWindowMs: 86_400_000, marginMs: 20 },
      classes: { saleMaxWaitMs: 1000, readMaxWaitMs: 1000, saleReservedSlots: 0 },
    });
    const view = createWalletView({ gateway: slow, budget, store, logger, settings: { freshMs: 60_000 } });
    const caller: Caller = { sub: 'cas-test', anyCustomer: true };
    const loaded = await view.read(caller, c);
    const original = loaded.methods.find((m) => m.key === pm) as PaymentMethod;

    armed = true;
    const refreshing = view.read(caller, c, { fresh: true });
    await readTaken;
    // What PATCH does after the gateway's PUT answered: the view updated in the same step.
    expect(await store.putMethod(c, pm, { ...original, method_name: 'Renamed meanwhile' }, false)).toBe(true);
    release();
    const answered = await refreshing;

    expect(answered.methods.find((m) => m.key === pm)?.method_name).toBe('Renamed meanwhile');
    expect((await store.read(c)).methods.find((m) => m.key === pm)?.method_name).toBe('Renamed meanwhile');
    gateway.close();
    await budget.close();
  });
});
