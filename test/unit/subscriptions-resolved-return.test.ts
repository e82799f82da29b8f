import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/observability/logger';
import type { Checkout } from '../../src/sales/checkout';
import { createSubscriptions } from '../../src/subscriptions';
import { RENEWALS_CALLER } from '../../src/subscriptions/renewals';
import type { SubscriptionRecord } from '../../src/subscriptions/types';
import { TEST_JWT_ENV } from '../support/bff';

/**
 * A bank renewal resolved by the reconciler after its return was already applied to the sale (docs/subscriptions.md,
 * "Bank accounts"): the return found no link then (none was written yet), so the resolution, which writes the link,
 * looks at the sale's own record and applies the return it shows. Either side sees the other, whichever comes first.
 */
const T0 = Date.parse('2027-03-01T00:00:00.000Z');
const record: SubscriptionRecord = {
  key: 'sub_r', customer: 'c1', payment_method: 'pm_bank', amount: '25.00', amount_detail: null, interval: 'month', interval_count: 1, anchor_ms: T0,
  count: null, periods_charged: 0, status: 'active', cancel_at_period_end: false, description: null, invoice_prefix: null,
  consent: { text: 'v4', accepted_at: new Date(T0).toISOString(), by: 'x' }, history: [],
  created_ms: T0, first_sale: null, due_ms: T0, version: 1, next_period: 0, attempts: 0, sending: null, blocked_method: null, fingerprint: 'f',
};

test('when a bank renewal\'s return was applied to its sale before the reconciler resolved the renewal, then the resolution applies it to the subscription too (past_due, period unpaid)', async () => {
  const config = loadConfig({ env: { NODE_ENV: 'test', ...TEST_JWT_ENV } });
  const returned = new Map([['s9', { code: 'R02' }]]);
  const subs = createSubscriptions({
    redis: undefined, config, checkout: {} as Checkout, view: { read: async () => { throw new Error('unused'); }, withMethod: async () => { throw new Error('unused'); } },
    render: () => ({ status: 201, body: {}, headers: {} }), logger: createLogger({ level: 'error' }), leaseMs: 10_000,
    saleReturn: async (sale) => returned.get(sale),
  });
  await subs.store.create(record);
  // The return came first: no link yet, so it reached no subscription.
  expect(await subs.returns.returned('s9', 'R02')).toBe(false);
  await subs.resolved({ scope: RENEWALS_CALLER.sub, key: 'renewal:sub_r:0:0' }, { op: 'sale', customer: 'c1', payment_method: 'pm_bank', bank: { authorization: 'v4', sec: 'PPD' } }, { status: 201, headers: {}, body: { key: 's9' } });
  const after = await subs.store.get('sub_r');
  expect(after).toMatchObject({ status: 'past_due', periods_charged: 0, blocked_method: 'pm_bank', due_ms: null });
  expect(after?.history.map((a) => [a.sale, a.result, a.decline_code])).toEqual([['s9', 'approved', null], ['s9', 'returned', 'R02']]);
  // Once: the return delivered again, or the resolution applied again, changes nothing.
  await subs.returns.returned('s9', 'R02');
  await subs.resolved({ scope: RENEWALS_CALLER.sub, key: 'renewal:sub_r:0:0' }, { op: 'sale', customer: 'c1', payment_method: 'pm_bank', bank: { authorization: 'v4', sec: 'PPD' } }, { status: 201, headers: {}, body: { key: 's9' } });
  expect((await subs.store.get('sub_r'))?.history).toHaveLength(2);
});

test('when a bank renewal\'s debit failure (ach.failed) was applied to its sale before the reconciler resolved the renewal, then the resolution applies it as a hard return (past_due, period unpaid, decline_code ach_failed), once', async () => {
  const config = loadConfig({ env: { NODE_ENV: 'test', ...TEST_JWT_ENV } });
  const subs = createSubscriptions({
    redis: undefined, config, checkout: {} as Checkout, view: { read: async () => { throw new Error('unused'); }, withMethod: async () => { throw new Error('unused'); } },
    render: () => ({ status: 201, body: {}, headers: {} }), logger: createLogger({ level: 'error' }), leaseMs: 10_000,
    saleReturn: async (sale) => (sale === 's8' ? { failed: true } : undefined),
  });
  await subs.store.create({ ...record, key: 'sub_f' });
  // The failure came first: no link yet, so it reached no subscription.
  expect(await subs.returns.failed('s8')).toBe(false);
  const resolve = () => subs.resolved({ scope: RENEWALS_CALLER.sub, key: 'renewal:sub_f:0:0' }, { op: 'sale', customer: 'c1', payment_method: 'pm_bank', bank: { authorization: 'v4', sec: 'PPD' } }, { status: 201, headers: {}, body: { key: 's8' } });
  await resolve();
  const after = await subs.store.get('sub_f');
  expect(after).toMatchObject({ status: 'past_due', periods_charged: 0, blocked_method: 'pm_bank', due_ms: null });
  expect(after?.history.map((a) => [a.sale, a.result, a.decline_class, a.decline_code])).toEqual([['s8', 'approved', null, null], ['s8', 'returned', 'hard', 'ach_failed']]);
  await subs.returns.failed('s8');
  await resolve();
  expect((await subs.store.get('sub_f'))?.history).toHaveLength(2);
});

test('when a card renewal, or another caller\'s write, is resolved, then no sale record is read for a return', async () => {
  const config = loadConfig({ env: { NODE_ENV: 'test', ...TEST_JWT_ENV } });
  const asked: string[] = [];
  const subs = createSubscriptions({
    redis: undefined, config, checkout: {} as Checkout, view: { read: async () => { throw new Error('unused'); }, withMethod: async () => { throw new Error('unused'); } },
    render: () => ({ status: 201, body: {}, headers: {} }), logger: createLogger({ level: 'error' }), leaseMs: 10_000,
    saleReturn: async (sale) => (asked.push(sale), undefined),
  });
  await subs.store.create({ ...record, key: 'sub_c' });
  expect(await subs.resolved({ scope: 'someone', key: 'renewal:sub_c:0:0' }, { op: 'sale', customer: 'c1' }, { status: 201, headers: {}, body: { key: 's1' } })).toBe(false);
  expect(await subs.resolved({ scope: RENEWALS_CALLER.sub, key: 'renewal:sub_c:0:0' }, { op: 'sale', customer: 'c1', payment_method: 'pm_card' }, { status: 201, headers: {}, body: { key: 's2' } })).toBe(true);
  expect(asked).toEqual([]);
  expect((await subs.store.get('sub_c'))?.periods_charged).toBe(1);
});

test('when a bank renewal\'s return reaches its link before the approval is recorded (the moment between the link and the period marked paid), then the approval landing after it does not mark the returned period paid', async () => {
  const config = loadConfig({ env: { NODE_ENV: 'test', ...TEST_JWT_ENV } });
  const subs = createSubscriptions({
    redis: undefined, config, checkout: {} as Checkout, view: { read: async () => { throw new Error('unused'); }, withMethod: async () => { throw new Error('unused'); } },
    render: () => ({ status: 201, body: {}, headers: {} }), logger: createLogger({ level: 'error' }), leaseMs: 10_000,
  });
  await subs.store.create({ ...record, key: 'sub_l' });
  // settle() has linked the debit and not yet marked the period paid when the return comes.
  await subs.store.linkSale('s7', { key: 'sub_l', period: 0, attempt: 0, payment_method: 'pm_bank' });
  expect(await subs.returns.returned('s7', 'R02')).toBe(true);
  await subs.resolved({ scope: RENEWALS_CALLER.sub, key: 'renewal:sub_l:0:0' }, { op: 'sale', customer: 'c1', payment_method: 'pm_bank', bank: { authorization: 'v4', sec: 'PPD' } }, { status: 201, headers: {}, body: { key: 's7' } });
  const after = await subs.store.get('sub_l');
  expect(after).toMatchObject({ status: 'past_due', periods_charged: 0, blocked_method: 'pm_bank', due_ms: null });
  expect(after?.history.map((a) => [a.sale, a.result, a.decline_code])).toEqual([['s7', 'approved', null], ['s7', 'returned', 'R02']]);
});
