import { Cluster } from 'ioredis';
import { createRedisTokenCache } from '../../src/cache';
import { createRedisIdempotencyStore } from '../../src/idempotency';
import { createRedisSettlementStore } from '../../src/settlements';
import { createRedisWebhookStore } from '../../src/webhooks/redis-webhook-store';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { redisPersistence } from '../../src/redis/persistence';
import { uniquePrefix } from '../support/redis';
import { describeTokenCacheContract } from './cache-store.contract';
import { CONTRACT_SETTINGS, describeIdempotencyStoreContract } from './idempotency-store.contract';

/**
 * The idempotency store and token cache contracts on a 3-master Redis Cluster started on loopback, through an
 * ioredis Cluster client: the same tests the memory and single-node implementations pass. Each script's keys
 * must share one hash tag (else CROSSSLOT), and keys of different callers spread over the masters.
 */
let cluster: RedisCluster | undefined;
let client: Cluster;
const prefix = uniquePrefix('cluster');

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
  client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
});
afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

describeIdempotencyStoreContract('redis cluster', (s) => createRedisIdempotencyStore({ ...CONTRACT_SETTINGS, ...s, redis: client, keyPrefix: prefix }));
describeTokenCacheContract('redis cluster', () => createRedisTokenCache({ redis: client, keyPrefix: prefix }));

test('when a settlement is kept on a cluster, then its sales\' index keys (declared in its script\'s KEYS) are written with it', async () => {
  const store = createRedisSettlementStore({ redis: client, keyPrefix: prefix });
  const line = (sale: string) => ({ transaction: sale, sale, amount: '1.00', gateway_amount: '1.00', kind: 'sale' as const, verdict: 'matched' as const });
  await store.claim('cb1', 'o', 60_000);
  const kept = await store.save({ type: 'settlement', batch: 'cb1', closed_at: '2026-11-27 20:00:00', totals: { sales: '2.00', credits: '0.00', count: 2 }, counts: { matched: 2, amount_differs: 0, not_ours: 0, missing: 0 }, lines: [line('cs1'), line('cs2')] }, 'o', Date.now());
  expect(kept).toBe(true);
  expect(await store.heldIn(['cs1', 'cs2'])).toEqual(new Map([['cs1', 'cb1'], ['cs2', 'cb1']]));
});

test('when the webhook store keeps a sale\'s evidence and a bank step early on a cluster, then its MULTIs run (their keys share one slot)', async () => {
  const store = createRedisWebhookStore({ redis: client, keyPrefix: prefix });
  await store.keepSale('inv-cluster', { key: 'ctx1' });
  expect(await store.salesByInvoice('inv-cluster')).toEqual([{ key: 'ctx1' }]);
  expect(await store.keepEarlyAch('ctx1', 'submitted', 'B')).toBe(true);
  await store.dropEarlyAch('ctx1');
  expect(await store.earlyAchSales(10)).toEqual([]);
});

test('when the contracts ran, then their keys landed on more than one master (the cluster really was exercised)', async () => {
  const counts = await Promise.all(client.nodes('master').map((node) => node.dbsize()));
  expect(counts.filter((n) => n > 0).length).toBeGreaterThan(1);
});

test('when persistence is checked on a cluster, then every master is asked, and none of these throwaway ones has AOF', async () => {
  await client.ping();
  const report = await redisPersistence(client);
  expect(report.map((n) => Number(n.node.split(':')[1])).sort()).toEqual((cluster as RedisCluster).nodes.map((n) => n.port).sort());
  expect(report.every((n) => n.aof === false)).toBe(true);
});

test('when a batch is marked due on a cluster, then it is taken, rescheduled and done (its two keys in one MULTI, one slot)', async () => {
  const store = createRedisSettlementStore({ redis: client, keyPrefix: prefix });
  const t = Date.now();
  await store.markDue('cd1', t, t);
  expect(await store.takeDue(t, 10_000, 10)).toEqual([{ batch: 'cd1', heardMs: t, tries: 0 }]);
  await store.dueAgain({ batch: 'cd1', heardMs: t, tries: 1 }, t + 1);
  expect(await store.takeDue(t + 1, 10_000, 10)).toEqual([{ batch: 'cd1', heardMs: t, tries: 1 }]);
  await store.dueDone('cd1');
  expect(await store.takeDue(t + 60_000, 10_000, 10)).toEqual([]);
});
