import type Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createRedisIdempotencyStore, fingerprintRequest, type IdempotencyStore, type StoredResponse } from '../../src/idempotency';
import { connectRedis, deletePrefix, uniquePrefix } from '../support/redis';

/** Several replicas (one connection and one store each) racing on one Redis, and replicas that restart. */
const prefix = uniquePrefix('idemconc');
const settings = { retentionMs: 60_000, inProgressRetryAfterSec: 1 };
let connections: Redis[] = [];
const replica = (): IdempotencyStore => {
  const redis = connectRedis();
  connections.push(redis);
  return createRedisIdempotencyStore({ ...settings, redis, keyPrefix: prefix });
};
afterEach(() => {
  for (const c of connections) c.disconnect();
  connections = [];
});
afterAll(async () => {
  const redis = connectRedis();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const fp = fingerprintRequest('POST', '/v1/sales', { customer: 'c1', payment_method: 'pm1', amount: '1.00' });
const answer: StoredResponse = { status: 201, body: { key: 'tx', result_code: 'A' }, headers: {} };
const newKey = () => `k-${randomBytes(4).toString('hex')}`;

test('when 20 begins race on one key across 4 connections, then exactly one is started and the rest are in progress', async () => {
  const replicas = [replica(), replica(), replica(), replica()];
  const key = newKey();
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (replicas[i % 4] as IdempotencyStore).begin('u1', key, fp, { leaseMs: 10_000 })));
  expect(results.filter((r) => r.kind === 'started')).toHaveLength(1);
  expect(results.filter((r) => r.kind === 'in_progress')).toHaveLength(19);
});

test('when 20 folding retries race on one unknown key, then exactly one re-sends', async () => {
  const replicas = [replica(), replica(), replica(), replica()];
  const key = newKey();
  const first = await (replicas[0] as IdempotencyStore).begin('u1', key, fp, { leaseMs: 10_000, invoice: 'inv' });
  if (first.kind !== 'started') throw new Error('first begin must start');
  await (replicas[0] as IdempotencyStore).markOutcomeUnknown('u1', key, first.attempt, { reason: 'gateway_timeout' });
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (replicas[i % 4] as IdempotencyStore).retryUnknown('u1', key, fp, { leaseMs: 10_000 })));
  const startedOnes = results.filter((r) => r.kind === 'started');
  expect(startedOnes).toHaveLength(1);
  expect(startedOnes[0]).toMatchObject({ invoice: 'inv', resumed: true });
});

test('when the app restarts (new connections and stores on the same Redis), then completed answers replay', async () => {
  const key = newKey();
  const before = replica();
  const r = await before.begin('u1', key, fp, { leaseMs: 10_000 });
  if (r.kind !== 'started') throw new Error('must start');
  await before.complete('u1', key, r.attempt, answer);
  for (const c of connections) c.disconnect();
  connections = [];

  const after = replica();
  expect(await after.begin('u1', key, fp, { leaseMs: 10_000 })).toEqual({ kind: 'completed', response: answer });
});

test('when a replica is killed mid-sale, then after the lease every other replica sees outcome_unknown, never started', async () => {
  const key = newKey();
  const doomed = connectRedis(); // its own connection, dropped without any transition
  const killed = createRedisIdempotencyStore({ ...settings, redis: doomed, keyPrefix: prefix });
  // A lease long enough that a stalled box still sees it held just after.
  expect((await killed.begin('u1', key, fp, { leaseMs: 800, invoice: 'inv' })).kind).toBe('started');
  doomed.disconnect();

  const others = [replica(), replica()];
  expect((await (others[0] as IdempotencyStore).begin('u1', key, fp, { leaseMs: 10_000 })).kind).toBe('in_progress');
  await new Promise((res) => setTimeout(res, 900));
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (others[i % 2] as IdempotencyStore).begin('u1', key, fp, { leaseMs: 10_000 })));
  expect(results.every((x) => x.kind === 'outcome_unknown')).toBe(true);
});
