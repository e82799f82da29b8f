import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createMemoryEventLog } from '../../src/events';
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

/**
 * A write the reconciler finds in the gateway's records: its key is resolved with the follow-through marked (one
 * step), and the follow-through runs at once; when it fails (Redis refused, a gateway read failed), the mark and the
 * due entry stay and a later pass re-applies it. Before, the failure was logged, the entry untracked, and the card
 * the sale stored was never told of (nor its view forgotten, nor `resolved` retried).
 */
test('when the follow-through of a write found in the gateway\'s records fails, then the mark stays and a later pass keeps its records and events', async () => {
  const store = createMemoryIdempotencyStore({ retentionMs: 60_000, inProgressRetryAfterSec: 1 });
  const pending = createMemoryPendingWrites();
  const events = createMemoryEventLog({ retentionMs: 60_000 });
  const write = { scope: 'shop', key: 'lost-sale-1' };
  const begun = await store.begin(write.scope, write.key, 'fp', { leaseMs: 10_000, context: { op: 'sale', customer: 'c1', amount: '5.00', save: true } });
  if (begun.kind !== 'started') throw new Error(begun.kind);
  await store.markOutcomeUnknown(write.scope, write.key, begun.attempt, { reason: 'gateway_timeout' });
  await pending.track(encodePendingWrite(write), Date.now() - 1);
  const response = { status: 201, body: { type: 'sale', key: 'sale-1', customer: 'c1', payment_method: 'pm-1' }, headers: {} };
  const added = { type: 'payment_method.added' as const, change: 'payment_method.added:pm-1', data: { key: 'pm-1', customer: 'c1' } };

  let follows = 0;
  let resolved = 0;
  const reconciler = createReconciler({
    pending,
    store,
    find: async () => ({ kind: 'found', response, transaction: 'sale-1', charged: true }),
    settings: { intervalMs: 1000, retryMs: 0, maxProcessingMs: 1000 },
    logger: createLogger({ level: 'error', stream: new Writable({ write: (_chunk, _enc, done) => done() }) }),
    metrics: createReconcileMetrics(new Registry(), { pending, deadlineMs: 60_000 }),
    events,
    followThrough: async () => {
      follows++;
      if (follows === 1) throw new Error('Redis refused the sale\'s record');
      return [added];
    },
    resolved: async () => {
      resolved++;
    },
  });
  const marked = async () => {
    const seen = await store.inspect(write.scope, write.key);
    return seen.state === 'completed' && seen.follow !== undefined;
  };

  await reconciler.runOnce();
  expect({ follows, marked: await marked(), tracked: await pending.unresolvedBefore(Date.now() + 3_600_000) }).toEqual({ follows: 1, marked: true, tracked: true });

  await new Promise((r) => setTimeout(r, 5));
  await reconciler.runOnce();
  const logged = (await events.list(undefined, 100)).map((e) => [e.type, (e.data as { key: string }).key]);
  expect({ follows, resolved, marked: await marked(), tracked: await pending.unresolvedBefore(Date.now() + 3_600_000), logged }).toEqual({
    follows: 2, resolved: 1, marked: false, tracked: false, logged: [['sale.succeeded', 'sale-1'], ['payment_method.added', 'pm-1']],
  });
  // Nothing more at a later pass: each change told once.
  await reconciler.runOnce();
  expect((await events.list(undefined, 100)).length).toBe(2);
});
