import { randomBytes } from 'node:crypto';
import { createRedisIdempotencyStore, fingerprintRequest, type StoredResponse } from '../../src/idempotency';
import { silentLogger } from '../../src/observability/logger';
import { createRedisPendingWrites, encodePendingWrite } from '../../src/reconcile';
import { createWriteProtocol, type WriteSpec } from '../../src/writes';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/**
 * The write protocol and the reconciler's sets on a real Redis: a finished write leaves nothing for the
 * reconciler, whether it finished in time or after its lease ran out and the reconciler had opened it as unknown.
 */
const { prefix, redis } = suiteRedis('wpp');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const answer: StoredResponse = { status: 201, body: { key: 'tx-1', result_code: 'A' }, headers: {} };

function setup() {
  const keyPrefix = `${prefix}:${randomBytes(3).toString('hex')}`;
  const idempotency = createRedisIdempotencyStore({ redis, keyPrefix, retentionMs: 60_000, inProgressRetryAfterSec: 1 });
  const pending = createRedisPendingWrites({ redis, keyPrefix, flushMs: 20 });
  const writes = createWriteProtocol({ idempotency, pending, logger: silentLogger(), duplicateFolding: false, unknownRetryAfterSec: 5 });
  const key = `k-${randomBytes(4).toString('hex')}`;
  const spec = (leaseMs: number): WriteSpec => ({
    scope: 'u1', key, leaseMs, context: { op: 'sale', customer: 'c1', amount: '1.00' },
    fingerprint: fingerprintRequest('POST', '/v1/sales', { customer: 'c1', amount: '1.00' }),
  });
  return { idempotency, pending, writes, key, spec, dueKey: `{${keyPrefix}:reconcile}:due` };
}

test('when a write answers within its lease, then the reconciler has nothing due and nothing open', async () => {
  const { pending, writes, spec, dueKey } = setup();
  await writes.execute(spec(50), async () => ({ response: answer }));
  expect(await redis.zcard(dueKey)).toBe(1); // tracked while it ran; forgotten in the next batch (flushMs)
  await eventually(async () => (await redis.zcard(dueKey)) === 0);
  await sleep(80); // past the lease end
  expect(await pending.claimDue(10, 1000)).toEqual([]);
  expect(await pending.stats()).toEqual({ open: 0, oldestSinceMs: undefined });
});

test('when a write answers after its lease ran out and the reconciler opened it as unknown, then the late answer closes it', async () => {
  const { idempotency, pending, writes, key, spec } = setup();
  const member = encodePendingWrite({ scope: 'u1', key });
  let answerNow = () => {};
  const answered = new Promise<void>((resolve) => (answerNow = resolve));
  const done = writes.execute(spec(40), async () => {
    await answered; // the gateway answers only after the reconciler has opened the write
    return { response: answer };
  });
  // What the reconciler does at the lease end: the record turns unknown and is counted open.
  let seen = await idempotency.inspect('u1', key);
  await eventually(async () => (seen = await idempotency.inspect('u1', key)).state === 'unknown');
  if (seen.state === 'unknown') await pending.markUnknown(member, seen.record.sinceMs, Date.now() + 60_000);
  expect((await pending.stats()).open).toBe(1);

  answerNow();
  await expect(done).resolves.toEqual({ response: answer, replayed: false });
  expect(await pending.stats()).toEqual({ open: 0, oldestSinceMs: undefined });
  expect(await idempotency.begin('u1', key, spec(40).fingerprint, { leaseMs: 40 })).toEqual({ kind: 'completed', response: answer });
});

test('when a write says the gateway processed nothing (a 4xx refusal), then its answer is sent but not kept: the key is free and nothing is due', async () => {
  const { idempotency, writes, key, spec, dueKey } = setup();
  const refusal: StoredResponse = { status: 400, body: { error: { code: 'invalid_request' } }, headers: {} };
  await expect(writes.execute(spec(5_000), async () => ({ response: refusal, nothingMoved: true }))).resolves.toEqual({ response: refusal, replayed: false });
  expect(await idempotency.inspect('u1', key)).toEqual({ state: 'absent' });
  expect(await redis.zcard(dueKey)).toBe(0);
  // The same key carries the next request, run fresh.
  await expect(writes.execute(spec(5_000), async () => ({ response: answer }))).resolves.toEqual({ response: answer, replayed: false });
});

test.each([201, 402, 502])('when a write claims nothing moved but answers %i, then its key keeps that answer all the same', async (status) => {
  const { idempotency, writes, key, spec } = setup();
  const response: StoredResponse = { status, body: {}, headers: {} };
  await writes.execute(spec(5_000), async () => ({ response, nothingMoved: true }));
  expect(await idempotency.inspect('u1', key)).toEqual({ state: 'completed' });
});
