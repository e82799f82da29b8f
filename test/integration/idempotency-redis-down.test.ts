import Redis from 'ioredis';
import { freePort } from '../support/ports';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { createRedisIdempotencyStore, fingerprintRequest, StoreUnavailableError, type IdempotencyStore } from '../../src/idempotency';

/**
 * Redis unreachable or stalled: a closed port, and a private redis-server started here and stopped or
 * paused (never the shared one). Sales then answer 503 and charge nothing, so every operation must reject
 * with StoreUnavailableError, quickly.
 */
const settings = { retentionMs: 60_000, inProgressRetryAfterSec: 1 };
const fp = fingerprintRequest('POST', '/v1/sales', { amount: '1.00' });
const lease = { leaseMs: 10_000 };
// ioredis arms a disconnectTimeout timer (2 s) that a socket which already closed never clears: keep it short.
const quickClose = { disconnectTimeout: 20 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


async function expectUnavailable(store: IdempotencyStore): Promise<void> {
  await expect(store.begin('u1', 'k1', fp, lease)).rejects.toBeInstanceOf(StoreUnavailableError);
  await expect(store.retryUnknown('u1', 'k1', fp, lease)).rejects.toBeInstanceOf(StoreUnavailableError);
  await expect(store.complete('u1', 'k1', 'a', { status: 201, body: {}, headers: {} })).rejects.toMatchObject({ code: 'store_unavailable' });
  await expect(store.markOutcomeUnknown('u1', 'k1', 'a', { reason: 'x' })).rejects.toBeInstanceOf(StoreUnavailableError);
  await expect(store.abandon('u1', 'k1', 'a')).rejects.toBeInstanceOf(StoreUnavailableError);
}

test('when Redis refuses connections (fail-fast client), then every operation rejects with StoreUnavailableError', async () => {
  const redis = new Redis(await freePort(), '127.0.0.1', { enableOfflineQueue: false, ...quickClose });
  redis.on('error', () => undefined);
  try {
    const started = Date.now();
    await expectUnavailable(createRedisIdempotencyStore({ ...settings, redis, keyPrefix: 'tgtest:down' }));
    // Refused at once rather than queued until a connection comes back (never): a safety-net ceiling, not a speed.
    expect(Date.now() - started).toBeLessThan(60_000);
  } finally {
    redis.disconnect();
  }
});

test('when the client would keep retrying (ioredis defaults), then the store gives up after opTimeoutMs', async () => {
  const redis = new Redis(await freePort(), '127.0.0.1', quickClose);
  redis.on('error', () => undefined);
  try {
    const store = createRedisIdempotencyStore({ ...settings, redis, keyPrefix: 'tgtest:down', opTimeoutMs: 150 });
    const started = Date.now();
    await expect(store.begin('u1', 'k1', fp, lease)).rejects.toThrow(/did not answer within 150 ms/);
    // The message names the 150 ms given up on; the ceiling only catches a client that retried forever.
    expect(Date.now() - started).toBeLessThan(60_000);
  } finally {
    redis.disconnect();
  }
});

describe('with a private redis-server', () => {
  let server: PrivateRedis;
  let port: number;
  let redis: Redis;
  beforeEach(async () => {
    server = await startPrivateRedis();
    port = server.port;
    redis = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => 50, ...quickClose });
    redis.on('error', () => undefined);
  });
  afterEach(async () => {
    redis.disconnect();
    await server.stop();
  });

  test('when Redis stops and comes back, then operations fail meanwhile and work again without a restart', async () => {
    const store = createRedisIdempotencyStore({ ...settings, redis, keyPrefix: 'tgtest:down', opTimeoutMs: 500 });
    expect((await store.begin('u1', 'before', fp, lease)).kind).toBe('started');
    await server.shutdown();
    await expectUnavailable(store);
    await server.start();
    let result;
    for (let i = 0; i < 40 && !result; i++) {
      result = await store.begin('u1', 'after', fp, lease).catch(() => undefined);
      if (!result) await sleep(50);
    }
    expect(result?.kind).toBe('started');
  });

  test('when begin times out but Redis runs it later, then the key is freed again (nothing was sent)', async () => {
    const store = createRedisIdempotencyStore({ ...settings, redis, keyPrefix: 'tgtest:down', opTimeoutMs: 100 });
    await redis.ping(); // connected, scripts will be sent on this socket
    const admin = new Redis(port, '127.0.0.1', quickClose);
    try {
      await admin.call('CLIENT', 'PAUSE', '400', 'WRITE');
      await expect(store.begin('u1', 'slow', fp, lease)).rejects.toBeInstanceOf(StoreUnavailableError);
      await sleep(500);
      // Both the late begin and the abandon queued behind it did run on the server…
      const stats = await admin.info('commandstats');
      const calls = [...stats.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
      expect(calls).toBe(2);
      // …so the key is free again: a retry runs fresh instead of meeting a phantom in_progress/outcome_unknown.
      const other = createRedisIdempotencyStore({ ...settings, redis: admin, keyPrefix: 'tgtest:down' });
      expect((await other.begin('u1', 'slow', fp, lease)).kind).toBe('started');
    } finally {
      admin.disconnect();
    }
  });
});
