import { createMemoryEventLog } from '../../src/events/memory-event-log';
import { createRedisSaleRecords } from '../../src/sale-records';
import { createAchEvents } from '../../src/webhooks/ach-events';
import { createRedisWebhookStore } from '../../src/webhooks/redis-webhook-store';
import { EARLY_ACH_MS } from '../../src/webhooks/types';
import { suiteRedis } from '../support/redis';

/**
 * Guarantee 14 (issue 38, caveat 2): an `ach.*` event about a sale whose record does not exist yet (its answer was
 * lost and the reconciler records it later) is kept in Redis, answered, and applied when the record appears:
 * the return changes the sale and `sale.returned` is emitted, never dropped as unmatched. On real Redis.
 */
const { prefix, redis } = suiteRedis('ach-kept');
const records = createRedisSaleRecords({ redis, keyPrefix: prefix });
const store = createRedisWebhookStore({ redis, keyPrefix: prefix });
const log = createMemoryEventLog({ retentionMs: 3_600_000 });
const ach = createAchEvents({ records, events: log, store });
let n = 0;
const saleKey = () => `keptsale${process.pid}x${++n}`;
const returned = (key: string) => ({ id: `ev-${key}-r`, type: 'ach.returned', object: { type: 'transaction', key }, changed: { status: 'R', returned: '2026-11-30', reason: 'R10: Customer Advises Not Authorized' } });
const bankRecord = () => ({
  customer: 'c1', state: 'captured' as const, authorizedCents: 3000, capturedCents: 3000, refundedCents: 0, pendingRefundCents: 0,
  fields: { refnum: '1', result_code: 'A', result: 'Approved', authcode: 'x', amount: '30.00', bank: { authorization: 'I agree', sec: 'WEB', ach_status: 'P' as const } },
});

test('when ach.returned arrives before the sale is recorded, then it is kept and, once the record appears, the sale is returned with sale.returned emitted once', async () => {
  const key = saleKey();
  expect(await ach.apply(returned(key))).toBe('kept');
  // Kept for at least the gateway's retry span (~3 days).
  expect(await redis.pttl(`{${prefix}:webhooks}:early:${key}`)).toBeGreaterThan(3 * 86_400_000);
  expect(EARLY_ACH_MS).toBeGreaterThan(3 * 86_400_000);
  expect(await ach.applyKept()).toBe(0); // no record yet: still kept
  await records.create(key, bankRecord());
  expect(await ach.applyKept()).toBe(1);
  const got = await records.get(key);
  expect(got?.fields?.bank).toMatchObject({ ach_status: 'R', return_code: 'R10', returned_at: '2026-11-30', amount_returned: '30.00' });
  const types = (await log.list(undefined, 100)).filter((e) => (e.data as { key?: string }).key === key).map((e) => e.type);
  expect(types.sort()).toEqual(['sale.returned', 'sale.settled', 'sale.submitted']);
  // Applied once: nothing kept any more, a second poll emits nothing.
  expect(await ach.applyKept()).toBe(0);
  expect((await log.list(undefined, 100)).filter((e) => (e.data as { key?: string }).key === key)).toHaveLength(3);
});

test('when the sale record lives, then it outlasts a return 60 days late (R10)', async () => {
  const key = saleKey();
  await records.create(key, bankRecord());
  const held = await redis.keys(`*${key}*`);
  expect(held.length).toBeGreaterThan(0);
  const ttl = Math.min(...(await Promise.all(held.map((k) => redis.pttl(k)))));
  expect(ttl).toBeGreaterThan(60 * 86_400_000);
});
