import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createRedisTokenCache } from '../../src/cache';
import { createRedisEventLog } from '../../src/events';
import type { PaymentMethod } from '../../src/gateway/types';
import { createRedisIdempotencyStore } from '../../src/idempotency';
import { createRedisBackend } from '../../src/limiter/redis-backend';
import { silentLogger } from '../../src/observability/logger';
import { encodePendingWrite } from '../../src/reconcile/pending-write';
import { createRedisPendingWrites } from '../../src/reconcile/pending-writes';
import { createRedisSaleRecords, type SaleFields } from '../../src/sale-records';
import { createRedisSettlementStore, type Settlement } from '../../src/settlements';
import { createRedisSubscriptionStore } from '../../src/subscriptions/redis-subscription-store';
import type { SubscriptionRecord } from '../../src/subscriptions/types';
import { createRedisWalletStore } from '../../src/wallet/redis-wallet-store';
import type { CustomerRecord } from '../../src/wallet/types';
import { declaredKeysOnly, ranDeclaredKeysCheck } from '../support/declared-keys';
import { otherTestsAllRan } from '../support/file-runs';
import { connectRedis, suiteRedis } from '../support/redis';
import { describeTokenCacheContract } from './cache-store.contract';
import { CONTRACT_SETTINGS, describeIdempotencyStoreContract } from './idempotency-store.contract';

/**
 * Every key a store's Lua script touches is in its KEYS (Redis' EVAL contract, which a plain Redis and a Cluster
 * node do not enforce for keys of the script's own slot): the idempotency store's and the token cache's contracts
 * run with each script checked (test/support/declared-keys.ts), and below, at least one call of every other
 * script. Their own suites run some of them checked as well (settlement-store.test.ts, sale-records.test.ts,
 * wallet-sale-guard.test.ts, reconcile-pending-writes.test.ts, limiter-suite.test.ts); the last test here fails
 * for any .lua file under src/ that this file did not run checked, so a new script cannot skip the check.
 */
const { prefix } = suiteRedis('declared-keys');
const checked = declaredKeysOnly(connectRedis());
afterAll(() => checked.disconnect());
const unique = (name: string) => `${name}${randomBytes(4).toString('hex')}`;

describe('the check itself', () => {
  it('when a script touches a key its KEYS do not name, then it fails and writes nothing; named, the same script runs', async () => {
    const key = `${prefix}:self:${unique('k')}`;
    const lua = "redis.call('SET', ARGV[1], 'x') return redis.call('GET', ARGV[1])";
    await expect(checked.eval(lua, 0, key)).rejects.toThrow(`UNDECLARED ${key}`);
    expect(await checked.get(key)).toBeNull();
    expect(await checked.eval(lua, 1, key, key)).toBe('x');
  });

  it('when a script\'s KEYS fall in two hash slots, then it fails as Redis Cluster would (CROSSSLOT) and writes nothing', async () => {
    const [a, b] = [`${prefix}:self:${unique('a')}`, `${prefix}:self:${unique('b')}`];
    const lua = "redis.call('SET', KEYS[1], 'x') redis.call('SET', KEYS[2], 'y') return 1";
    await expect(checked.eval(lua, 2, a, b)).rejects.toThrow(/^CROSSSLOT /);
    expect(await checked.exists(a, b)).toBe(0);
  });
});

describeIdempotencyStoreContract('redis, every key declared', (s) => createRedisIdempotencyStore({ ...CONTRACT_SETTINGS, ...s, redis: checked, keyPrefix: prefix }));
describeTokenCacheContract('redis, every key declared', () => createRedisTokenCache({ redis: checked, keyPrefix: prefix }));

describe('wallet store (redis, every key declared)', () => {
  const store = createRedisWalletStore({ redis: checked, keyPrefix: prefix });
  const customer = (name: string) => ({ custkey: name, customerid: name, first_name: 'Ada' }) as unknown as CustomerRecord;
  const method = (key: string, name: string) => ({ type: 'customerpaymentmethod', key, method_name: name, pay_type: 'cc' }) as unknown as PaymentMethod;

  it('when a customer is created, its methods written, refreshed from the gateway and one removed, then the view shows each step', async () => {
    const c = unique('cust');
    await store.putCustomer(c, customer(c), true);
    expect((await store.read(c)).customer).toEqual(customer(c));
    expect(await store.putMethod(c, 'pm1', method('pm1', 'first'), true)).toBe(true);
    const written = await store.read(c);
    expect(written.methods.map((m) => m.method_name)).toEqual(['first']);
    expect(written.chosenDefault).toBe('pm1');
    await store.putCustomer(c, { ...customer(c), first_name: 'Grace' } as CustomerRecord, false);
    expect(await store.refresh(c, (await store.read(c)).version, customer(c), [method('pm1', 'renamed'), method('pm2', 'second')])).toBe('applied');
    expect((await store.read(c)).methods.map((m) => m.method_name).sort()).toEqual(['renamed', 'second']);
    expect(await store.enter(c, 'pm2', 'a1', 'sending', 60_000)).toBe(true);
    expect(await store.tombstone(c, 'pm2', 60_000)).toEqual(['a1']);
    expect(await store.stillSending(c, ['a1'])).toBe(1);
    expect((await store.read(c)).methods.map((m) => m.method_name)).toEqual(['renamed']);
    expect(await store.tombstone(c, '', 60_000)).toEqual(['a1']);
    expect((await store.read(c)).deleted).toBe(true);
  });

  it('when a customerid is claimed, its create settled and the claim later freed, then each next claim answers accordingly', async () => {
    const id = unique('id');
    expect(await store.claimCustomerId(id, 'a1')).toEqual({ kind: 'claimed' });
    await store.settleCustomerId(id, 'a1', 'ck1');
    expect(await store.claimCustomerId(id, 'a2')).toEqual({ kind: 'exists', custkey: 'ck1' });
    await store.releaseCustomerId(id, { custkey: 'ck1' });
    expect(await store.claimCustomerId(id, 'a3')).toEqual({ kind: 'claimed' });
  });
});

describe('sale records (redis, every key declared): what webhooks and refreshes fold in', () => {
  const records = createRedisSaleRecords({ redis: checked, keyPrefix: prefix });
  const captured = { customer: 'c1', state: 'captured' as const, authorizedCents: 1000, capturedCents: 1000, refundedCents: 0, pendingRefundCents: 0 };
  const bank: SaleFields = { refnum: '1', result_code: 'A', result: 'Approved', authcode: 'x', amount: '10.00', bank: { authorization: 'I agree', sec: 'WEB', ach_status: 'P' } } as SaleFields;

  it('when a webhook tells of a refund and a refresh reads the gateway, then the record holds what they say', async () => {
    const sale = unique('tx');
    await records.create(sale, captured);
    const refund = { key: unique('rf'), refnum: '9', cents: 300, created: '2026-11-28 05:00:00', statusCode: 'A' };
    expect(await records.hear(sale, { kind: 'refunded', refund })).toBe('applied');
    expect((await records.get(sale))?.refundedCents).toBe(300);
    const { version } = (await records.view(sale)) ?? { version: -1 };
    expect(await records.refresh(sale, version, { refundedCents: 500, capturedCents: 1000, voided: false, settled: true, gatewayRefunds: [refund, { ...refund, key: unique('rf'), cents: 200 }] })).toBe(true);
    expect((await records.get(sale))?.refundedCents).toBe(500);
  });

  it('when a bank payment is submitted and then returned, then its ACH status moves forward and the return is kept with the amount taken back', async () => {
    const sale = unique('tx');
    await records.create(sale, { ...captured, fields: bank });
    expect(await records.advanceAch(sale, 'B')).toEqual({ before: 'P', after: 'B' });
    expect(await records.advanceAch(sale, 'R', { code: 'R01', date: '2026-11-28' })).toEqual({ before: 'B', after: 'R' });
    expect((await records.get(sale))?.fields?.bank).toMatchObject({ ach_status: 'R', return_code: 'R01', returned_at: '2026-11-28', amount_returned: '10.00' });
  });
});

describe('event log (redis, every key declared)', () => {
  const log = createRedisEventLog({ redis: checked, keyPrefix: `${prefix}:${unique('ev')}`, retentionMs: 3_600_000 });
  const draft = (change: string) => ({ type: 'sale.captured' as const, change, data: { change } });

  it('when events are appended alone and several in one turn, each change once, then a destination takes each once and a failed one again when due', async () => {
    await log.ensureDestination('https://d.example/hook');
    await log.append([draft('one')]);
    await Promise.all([log.append([draft('two')]), log.append([draft('three')]), log.append([draft('one')])]);
    expect((await log.list(undefined, 10)).map((e) => (e.data as { change: string }).change)).toEqual(['one', 'two', 'three']);
    const taken = await log.takeNew('https://d.example/hook', 'c1', 10);
    expect(taken).toHaveLength(3);
    expect(await log.takeDue('https://d.example/hook', 'c2', [0], 10)).toHaveLength(3);
  });
});

describe('subscription store (redis, every key declared)', () => {
  const store = createRedisSubscriptionStore({ redis: checked, keyPrefix: prefix });
  const record = (key: string): SubscriptionRecord => ({ key, customer: 'c1', due_ms: 1000, version: 1, created_ms: Date.now(), status: 'active' }) as unknown as SubscriptionRecord;

  it('when a subscription is created twice, changed over its version and its renewal claimed and given back, then each answers as stored', async () => {
    const key = unique('sub');
    expect((await store.create(record(key))).created).toBe(true);
    expect((await store.create({ ...record(key), customer: 'c2' })).created).toBe(false);
    expect(await store.swap({ ...record(key), version: 2, due_ms: null })).toBe(true);
    expect(await store.swap({ ...record(key), version: 2 })).toBe(false);
    expect((await store.get(key))?.due_ms).toBeNull();
    expect(await store.claim(key, 'one', 60_000)).toBe(true);
    await store.release(key, 'one');
    expect(await store.claim(key, 'two', 60_000)).toBe(true);
  });

  it('when a first charge\'s terms are kept, kept again by a folding retry and replaced by a fresh attempt, then each read answers the terms that hold', async () => {
    const key = unique('sub');
    const first = { record: record(key), card: 'pm1', bank: false };
    expect(await store.keepFirstCharge(first, true)).toEqual(first);
    expect(await store.keepFirstCharge({ ...first, card: 'pm2' }, false)).toEqual(first);
    expect(await store.firstCharge(key)).toEqual(first);
    expect(await store.keepFirstCharge({ ...first, card: 'pm3' }, true)).toEqual({ ...first, card: 'pm3' });
    expect((await store.firstCharge(key))?.card).toBe('pm3');
  });
});


describe('sale records (redis, every key declared): reservations, observed amounts and descriptions', () => {
  const records = createRedisSaleRecords({ redis: checked, keyPrefix: prefix });
  const captured = { customer: 'c1', state: 'captured' as const, authorizedCents: 1000, capturedCents: 1000, refundedCents: 0, pendingRefundCents: 0 };

  it('when a refund is reserved and settled, the gateway is seen to have refunded more, and the sale is described in a batch, then the record and the batch hold it', async () => {
    const sale = unique('tx');
    await records.create(sale, captured);
    expect(await records.reserve(sale, 'refund', 'r1', 300)).toEqual({ ok: true, amountCents: 300, whole: false });
    await records.settle(sale, 'refund', 'r1', 'applied', 300, unique('rf'));
    expect((await records.get(sale))?.refundedCents).toBe(300);
    expect(await records.observe(sale, 300, { refundedCents: 500, voided: false })).toBe(true);
    const batch = unique('batch');
    await records.describe(sale, { refnum: '1', result_code: 'A', result: 'Approved', authcode: 'x', amount: '10.00', batch: { key: batch } } as SaleFields, 'update');
    expect(await records.batchSales(batch)).toEqual([sale]);
  });
});

describe('settlement store (redis, every key declared)', () => {
  const store = createRedisSettlementStore({ redis: checked, keyPrefix: `${prefix}:${unique('st')}` });
  const line = { transaction: 't1', sale: 't1', amount: '10.00', gateway_amount: '10.00', kind: 'sale' as const, verdict: 'matched' as const };
  const settlement: Settlement = {
    type: 'settlement', batch: 'b1', closed_at: '2026-11-27 20:00:00', totals: { sales: '10.00', credits: '0.00', count: 1 },
    counts: { matched: 1, amount_differs: 0, not_ours: 0, missing: 0 }, lines: [line],
  };

  it('when a batch is claimed, given back, claimed again, kept and amended, and a sweep claimed and ended, then each step answers as stored', async () => {
    expect(await store.claim('b1', 'one', 60_000)).toBe('claimed');
    await store.release('b1', 'one');
    expect(await store.claim('b1', 'two', 60_000)).toBe('claimed');
    expect(await store.save(settlement, 'two', Date.now())).toBe(true);
    const differs = { ...line, gateway_amount: '0.00', verdict: 'amount_differs' as const };
    expect(await store.amend('b1', [differs])).toEqual([differs]);
    const now = Date.now();
    expect(await store.claimSweep('one', now - 86_400_000, 60_000)).toBe(true);
    await store.sweepDone('one', now);
    expect(await store.claimSweep('two', now - 86_400_000, 60_000)).toBe(false);
  });
});

describe('pending writes (redis, every key declared)', () => {
  it('when a write is due, then one claim takes it', async () => {
    const pending = createRedisPendingWrites({ redis: checked, keyPrefix: `${prefix}:${unique('pw')}`, flushMs: 50 });
    const member = encodePendingWrite({ scope: 'u1', key: unique('k') });
    await pending.track(member, Date.now() - 1);
    expect((await pending.claimDue(10, 60_000)).map((d) => d.member)).toEqual([member]);
  });
});

describe('upstream budget (redis, every key declared)', () => {
  it('when a sale reserves a slot and gives it back, then the script grants and releases it', async () => {
    const backend = createRedisBackend({
      redis: checked, keyPrefix: `${prefix}:${unique('lim')}`, endpointKey: 'v2', logger: silentLogger(),
      limits: { perWindow: 5, windowMs: 60_000, perDay: 100, dayWindowMs: 86_400_000, marginMs: 1000 },
      classes: { saleMaxWaitMs: 5000, readMaxWaitMs: 3000, saleReservedSlots: 1 },
    });
    const grant = await backend.reserve('sale', 1000, { promise: true });
    expect(grant.ok).toBe(true);
    if (grant.ok) await grant.release();
  });
});

/**
 * Scripts no call above can run checked, each with why. Keep it short: a script belongs here only when the check
 * cannot run it at all (none today).
 */
const EXEMPT: Readonly<Record<string, string>> = {};

/** Every .lua file under `dir`, relative to it. */
function luaFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.lua')).map((f) => f.split(path.sep).join('/')).sort();
}

// Last in this file: the suites above have run every script they call. Judged only when they all ran (a `-t`
// filter or an `.only` leaves some out: test/support/file-runs.ts).
describe('every script under src/ runs checked', () => {
  const src = path.join(__dirname, '../../src');

  it('when the suites above have run, then each .lua file under src/ was sent through the checking client (or is exempt, with a reason)', () => {
    if (!otherTestsAllRan()) return void process.stdout.write('declared-keys: not every test of the file ran (a filter): the scripts\' coverage is not judged\n');
    const files = luaFiles(src);
    expect(files.length).toBeGreaterThan(0);
    const unchecked = files.filter((f) => !(f in EXEMPT) && !ranDeclaredKeysCheck(readFileSync(path.join(src, f), 'utf8')));
    expect(unchecked).toEqual([]);
    // An exemption for a file that is gone, or that runs checked after all, is stale.
    expect(Object.keys(EXEMPT).filter((f) => !files.includes(f) || ranDeclaredKeysCheck(readFileSync(path.join(src, f), 'utf8')))).toEqual([]);
  });
});
