import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createMemoryIdempotencyStore } from '../../src/idempotency';
import { createLogger } from '../../src/observability/logger';
import { createMemoryPendingWrites, createReconcileMetrics, createReconciler, type PendingWrites } from '../../src/reconcile';
import { eventually } from '../support/wait';

/**
 * While Redis is down every replica's reconcile pass fails each interval: the log says so once when passes
 * start failing and once when they succeed again, not once a second per replica.
 */
test('when reconcile passes keep failing and then succeed, then one warning and one recovery line are logged', async () => {
  const lines: { level: string; message: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: string; message: string });
      done();
    },
  });
  const logger = createLogger({ level: 'info', stream });
  const memory = createMemoryPendingWrites();
  let down = true;
  let passes = 0;
  const pending: PendingWrites = {
    ...memory,
    async claimDue(batch, claimMs) {
      passes++;
      if (down) throw new Error('Redis did not answer');
      return memory.claimDue(batch, claimMs);
    },
  };
  const reconciler = createReconciler({
    pending,
    store: createMemoryIdempotencyStore({ retentionMs: 60_000, inProgressRetryAfterSec: 1 }),
    find: async () => ({ kind: 'absent' }) as never,
    settings: { intervalMs: 20, retryMs: 20, maxProcessingMs: 1000 },
    logger,
    metrics: createReconcileMetrics(new Registry(), { pending, deadlineMs: 60_000 }),
  });
  reconciler.start();
  try {
    await eventually(() => passes >= 5);
    down = false;
    await eventually(() => lines.some((l) => l.message === 'reconcile: passes succeed again'));
  } finally {
    await reconciler.stop();
  }
  const about = lines.filter((l) => l.message.startsWith('reconcile: pass'));
  expect(about.map((l) => [l.level, l.message])).toEqual([
    ['warn', 'reconcile: pass failed; quiet until a pass succeeds'],
    ['info', 'reconcile: passes succeed again'],
  ]);
});
