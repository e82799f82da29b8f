import type Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createReadThrough, createRedisTokenCache, type ReadThrough } from '../../src/cache';
import type { CardRefToken } from '../../src/gateway/types';
import { connectRedis, deletePrefix, uniquePrefix } from '../support/redis';

/** Replicas (one connection each) racing for one payment method's token on a real Redis. */
const prefix = uniquePrefix('cacheconc');
let connections: Redis[] = [];
beforeEach(() => {
  connections = [connectRedis(), connectRedis(), connectRedis()];
});
afterEach(() => {
  for (const c of connections) c.disconnect();
});
afterAll(async () => {
  const redis = connectRedis();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const token: CardRefToken = { type: 'token', cardref: 'ref-1', expires: '2031-01-01', ccnumlast4: '2224', cardtype: 'Visa', custkey: 'c1', pmkey: 'pm1' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const replica = (redis: Redis): ReadThrough =>
  createReadThrough({ cache: createRedisTokenCache({ redis, keyPrefix: prefix }), ttlOf: () => 60_000, lockTtlMs: 5_000, lockWaitMs: 10 });

test('when 30 reads on 3 replicas miss one key together, then exactly one load runs', async () => {
  const replicas = connections.map(replica);
  const key = `c1:pm-${randomBytes(4).toString('hex')}`;
  const load = jest.fn(async () => (await sleep(50), token));
  const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (replicas[i % 3] as ReadThrough).getOrLoad(key, load)));
  expect(load).toHaveBeenCalledTimes(1);
  expect(results.every((r) => r.value.cardref === 'ref-1')).toBe(true);
  expect(results.filter((r) => r.cacheStatus === 'miss').length).toBeLessThanOrEqual(10); // the loader's process only
});

test('when 30 separate read-throughs on 3 connections race (no per-process sharing), then the Redis lock alone allows one load', async () => {
  const readers = Array.from({ length: 30 }, (_, i) => replica(connections[i % 3] as Redis));
  const key = `c1:pm-${randomBytes(4).toString('hex')}`;
  const load = jest.fn(async () => (await sleep(50), token));
  const results = await Promise.all(readers.map((r) => r.getOrLoad(key, load)));
  expect(load).toHaveBeenCalledTimes(1);
  expect(results.filter((r) => r.cacheStatus === 'hit')).toHaveLength(29);
});

test('when the loading replica fails, then the others take over promptly and one of them loads it', async () => {
  const readers = Array.from({ length: 6 }, (_, i) => replica(connections[i % 3] as Redis));
  const key = `c1:pm-${randomBytes(4).toString('hex')}`;
  let calls = 0;
  const load = jest.fn(async () => {
    await sleep(30);
    if (++calls === 1) throw new Error('first load fails');
    return token;
  });
  const results = await Promise.allSettled(readers.map((r) => r.getOrLoad(key, load)));
  expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
  expect(load).toHaveBeenCalledTimes(2);
});
