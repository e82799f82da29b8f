import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createMemoryIdempotencyStore } from '../../src/idempotency';
import { createLogger } from '../../src/observability/logger';
import { createMemoryPendingWrites, createReconcileMetrics, createReconciler, encodePendingWrite } from '../../src/reconcile';

/**
 * A completed key marked `follow` (its answer kept, what its write records beside it refused): the reconciler
 * re-applies the records, the events and the use case's own records (`resolved`: a first charge's subscription, a
 * renewal's period), and clears the mark only once all of them are kept. Before, a failure of `resolved` was logged
 * and the mark cleared: a first charge answered 201 whose subscription Redis refused again then never got one.
 */
test('when the use case\'s records cannot be kept at the follow-through, then the mark stays and they are kept at the next pass', async () => {
  const store = createMemoryIdempotencyStore({ retentionMs: 60_000, inProgressRetryAfterSec: 1 });
  const pending = createMemoryPendingWrites();
  const write = { scope: 'subscriptions', key: 'first-charge-1' };
  const begun = await store.begin(write.scope, write.key, 'fp', { leaseMs: 10_000, context: { op: 'sale', customer: 'c1', amount: '5.00' } });
  if (begun.kind !== 'started') throw new Error(begun.kind);
  const response = { status: 201, body: { key: 'sale-1' }, headers: {} };
  await store.complete(write.scope, write.key, begun.attempt, response);
  await store.markFollowing(write.scope, write.key);
  await pending.track(encodePendingWrite(write), Date.now() - 1);

  let calls = 0;
  const reconciler = createReconciler({
    pending,
    store,
    find: async () => ({ kind: 'absent' }),
    settings: { intervalMs: 1000, retryMs: 0, maxProcessingMs: 1000 },
    logger: createLogger({ level: 'error', stream: new Writable({ write: (_chunk, _enc, done) => done() }) }),
    metrics: createReconcileMetrics(new Registry(), { pending, deadlineMs: 60_000 }),
    followThrough: async () => [],
    resolved: async () => {
      calls++;
      if (calls === 1) throw new Error('Redis refused the subscription\'s keys');
    },
  });

  await reconciler.runOnce();
  const after = await store.inspect(write.scope, write.key);
  expect({ calls, marked: after.state === 'completed' && after.follow !== undefined }).toEqual({ calls: 1, marked: true });

  await new Promise((r) => setTimeout(r, 5));
  await reconciler.runOnce();
  const done = await store.inspect(write.scope, write.key);
  expect({ calls, marked: done.state === 'completed' && done.follow !== undefined }).toEqual({ calls: 2, marked: false });
});
