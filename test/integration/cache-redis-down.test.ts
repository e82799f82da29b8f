import Redis from 'ioredis';
import { freePort } from '../support/ports';
import { startPrivateRedis } from '../support/private-redis';
import { createReadThrough, createRedisTokenCache, type ReadThrough } from '../../src/cache';
import type { CardRefToken } from '../../src/gateway/types';

/**
 * Token reads with Redis refusing, stalled or restarting (a closed port, or a private redis-server started
 * here: never the shared one). Reads must keep working, straight upstream, and caching must come back.
 */
// ioredis arms a disconnectTimeout timer (2 s) that a socket which already closed never clears: keep it short.
const quickClose = { disconnectTimeout: 20 };
const token: CardRefToken = { type: 'token', cardref: 'ref-1', expires: '2031-01-01', ccnumlast4: '2224', cardtype: 'Visa', custkey: 'c1', pmkey: 'pm1' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const readThrough = (redis: Redis, opTimeoutMs = 300, bypassMs = 200): ReadThrough =>
  createReadThrough({ cache: createRedisTokenCache({ redis, keyPrefix: 'tgtest:cachedown', opTimeoutMs }), ttlOf: () => 60_000, lockTtlMs: 1_000, lockWaitMs: 10, bypassMs });

test('when Redis refuses connections, then token reads still load upstream, uncached, and evict does not throw', async () => {
  const redis = new Redis(await freePort(), '127.0.0.1', { enableOfflineQueue: false, ...quickClose });
  redis.on('error', () => undefined);
  try {
    const rt = readThrough(redis);
    const load = jest.fn(async () => token);
    expect(await rt.getOrLoad('c1:pm1', load)).toEqual({ value: token, cacheStatus: 'miss', degraded: true });
    expect(await rt.getOrLoad('c1:pm1', load)).toEqual({ value: token, cacheStatus: 'miss', degraded: true });
    expect(load).toHaveBeenCalledTimes(2);
    await expect(rt.evict('c1:pm1')).resolves.toBeUndefined();
    expect(rt.bypassing()).toBe(true);
  } finally {
    redis.disconnect();
  }
});

test('when Redis hangs, then one read pays the timeout and the next ones skip the cache (still one load per key per process)', async () => {
  const redis = new Redis(await freePort(), '127.0.0.1', quickClose); // default client: would retry for a long time
  redis.on('error', () => undefined);
  try {
    // A timeout long enough that a loaded box's stall is never taken for a second timeout paid.
    const rt = readThrough(redis, 600, 60_000);
    const load = jest.fn(async () => (await sleep(20), token));
    const t = Date.now();
    expect((await rt.getOrLoad('c1:pm1', load)).degraded).toBe(true);
    expect(Date.now() - t).toBeGreaterThanOrEqual(590);
    // The next ones skip the cache: not one more command goes to the hung Redis, so none can wait on its timeout
    // (issue 41: this was a 3 s wall-clock bound on the ten reads, which a busy box failed).
    const sent = jest.spyOn(redis, 'sendCommand');
    const many = await Promise.all(Array.from({ length: 10 }, () => rt.getOrLoad('c1:pm1', load)));
    expect(sent).not.toHaveBeenCalled();
    expect(many.every((r) => r.degraded)).toBe(true);
    expect(load).toHaveBeenCalledTimes(2);
  } finally {
    redis.disconnect();
  }
});

test('when a private Redis stops and comes back, then reads work throughout and caching resumes by itself', async () => {
  const server = await startPrivateRedis();
  const redis = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => 50, ...quickClose });
  redis.on('error', () => undefined);
  try {
    const rt = readThrough(redis, 300, 100);
    const load = jest.fn(async () => token);
    expect((await rt.getOrLoad('k', load)).cacheStatus).toBe('miss');
    expect((await rt.getOrLoad('k', load)).cacheStatus).toBe('hit');

    await server.shutdown();
    expect(await rt.getOrLoad('k', load)).toMatchObject({ cacheStatus: 'miss', degraded: true });

    await server.start(); // empty: no persistence
    let last;
    for (let i = 0; i < 40; i++) {
      last = await rt.getOrLoad('k', load);
      if (last.cacheStatus === 'hit') break;
      await sleep(50);
    }
    expect(last).toMatchObject({ cacheStatus: 'hit', degraded: false });
  } finally {
    redis.disconnect();
    await server.stop();
  }
});
