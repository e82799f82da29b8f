import { randomBytes } from 'node:crypto';
import { createReadThrough, type ReadThrough, type TokenCache } from '../../src/cache';
import type { CardRefToken } from '../../src/gateway/types';

/**
 * The token cache contract (and the read-through over it) as a describe-factory, so the same tests hold every
 * implementation: memory and single-node Redis (cache-store-contract.test.ts), Redis Cluster (cluster-stores.test.ts).
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const token = (cardref = 'ref-1'): CardRefToken => ({ type: 'token', cardref, expires: '2031-01-01', ccnumlast4: '2224', cardtype: 'Visa', custkey: 'c1', pmkey: 'pm1' });

export function describeTokenCacheContract(name: string, make: () => TokenCache): void {
  describe(`token cache (${name})`, () => {
    let cache: TokenCache;
    let key: string;
    beforeEach(() => {
      cache = make();
      key = `c1:pm-${randomBytes(4).toString('hex')}`;
    });

    test('when a token is set, then it is read back until its TTL passes', async () => {
      await cache.set(key, token(), 800); // long enough that a stalled box still reads it back before it ends
      expect(await cache.get(key)).toEqual(token());
      await sleep(900);
      expect(await cache.get(key)).toBeUndefined();
    });

    test('when a token is deleted, then it reads as a miss', async () => {
      await cache.set(key, token(), 10_000);
      await cache.delete(key);
      expect(await cache.get(key)).toBeUndefined();
    });

    test('when one owner holds the lock, then others are told it is busy until the owner fills the value', async () => {
      expect(await cache.getOrLock(key, 'a', 5_000)).toEqual({ kind: 'locked' });
      const busy = await cache.getOrLock(key, 'b', 5_000);
      expect(busy.kind).toBe('busy');
      if (busy.kind === 'busy') expect(busy.lockTtlMs).toBeGreaterThan(4_000);
      await cache.fillAndUnlock(key, 'a', token(), 10_000);
      expect(await cache.getOrLock(key, 'b', 5_000)).toEqual({ kind: 'hit', value: token() });
    });

    test('when a stranger unlocks, then the lock stays; when its owner unlocks, then the next caller takes it', async () => {
      await cache.getOrLock(key, 'a', 5_000);
      await cache.unlock(key, 'b');
      expect((await cache.getOrLock(key, 'b', 5_000)).kind).toBe('busy');
      await cache.unlock(key, 'a');
      expect(await cache.getOrLock(key, 'b', 5_000)).toEqual({ kind: 'locked' });
    });

    test('when the lock expires, then another owner takes it, and the old owner cannot release it', async () => {
      await cache.getOrLock(key, 'a', 50);
      await sleep(80);
      expect(await cache.getOrLock(key, 'b', 5_000)).toEqual({ kind: 'locked' });
      await cache.fillAndUnlock(key, 'a', token(), undefined);
      expect((await cache.getOrLock(key, 'c', 5_000)).kind).toBe('busy');
    });

    // Timings leave a stalled CI box room: the renewal has 400 ms to land before the first TTL ends, the
    // "still held" check 700 ms before the renewed one ends. A stall only makes the last check later (safe).
    test('when the owner renews its lock, then it outlives its first TTL; a stranger cannot renew it', async () => {
      await cache.getOrLock(key, 'a', 400);
      expect(await cache.extendLock(key, 'b', 5_000)).toBe(false);
      expect(await cache.extendLock(key, 'a', 1_200)).toBe(true);
      await sleep(500);
      expect((await cache.getOrLock(key, 'b', 5_000)).kind).toBe('busy');
      await sleep(800);
      expect(await cache.extendLock(key, 'a', 200)).toBe(false);
      expect(await cache.getOrLock(key, 'b', 5_000)).toEqual({ kind: 'locked' });
    });

    test('when filled with no TTL, then nothing is cached but the lock is released', async () => {
      await cache.getOrLock(key, 'a', 5_000);
      await cache.fillAndUnlock(key, 'a', token(), undefined);
      expect(await cache.get(key)).toBeUndefined();
      expect(await cache.getOrLock(key, 'b', 5_000)).toEqual({ kind: 'locked' });
    });

    describe('read-through', () => {
      const readThrough = (c: TokenCache, ttlOf: () => number | undefined = () => 60_000, lockTtlMs = 2_000): ReadThrough =>
        createReadThrough({ cache: c, ttlOf, lockTtlMs, lockWaitMs: 10 });

      test('when the first read misses, then it loads once and the next read is a hit', async () => {
        const rt = readThrough(cache);
        const load = jest.fn(async () => token());
        expect(await rt.getOrLoad(key, load)).toEqual({ value: token(), cacheStatus: 'miss', degraded: false });
        expect(await rt.getOrLoad(key, load)).toEqual({ value: token(), cacheStatus: 'hit', degraded: false });
        expect(load).toHaveBeenCalledTimes(1);
      });

      test('when the loaded token must not be cached (ttl undefined), then it is returned and the next read loads again', async () => {
        const rt = readThrough(cache, () => undefined);
        const load = jest.fn(async () => token());
        expect((await rt.getOrLoad(key, load)).cacheStatus).toBe('miss');
        expect((await rt.getOrLoad(key, load)).cacheStatus).toBe('miss');
        expect(load).toHaveBeenCalledTimes(2);
      });

      test('when 30 reads in one process miss together, then one load serves them all', async () => {
        const rt = readThrough(cache);
        const load = jest.fn(async () => (await sleep(30), token()));
        const results = await Promise.all(Array.from({ length: 30 }, () => rt.getOrLoad(key, load)));
        expect(load).toHaveBeenCalledTimes(1);
        expect(results.every((r) => r.value.cardref === 'ref-1')).toBe(true);
      });

      test('when the load fails, then every waiter gets the error, nothing is cached, and the lock is freed at once', async () => {
        const rt = readThrough(cache, () => 60_000, 60_000);
        const failing = jest.fn(async () => {
          await sleep(20);
          throw new Error('upstream down');
        });
        const results = await Promise.allSettled(Array.from({ length: 5 }, () => rt.getOrLoad(key, failing)));
        expect(results.every((r) => r.status === 'rejected' && (r.reason as Error).message === 'upstream down')).toBe(true);
        expect(failing).toHaveBeenCalledTimes(1);
        expect(await cache.get(key)).toBeUndefined();
        const started = Date.now();
        expect((await rt.getOrLoad(key, async () => token('ref-2'))).value.cardref).toBe('ref-2');
        expect(Date.now() - started).toBeLessThan(30_000); // not held up by the 60 s lock (a safety-net ceiling; issue 41: 15 s)
      });

      test('when two replicas miss together, then one loads and the other waits and reads the cached value', async () => {
        const [a, b] = [readThrough(cache), readThrough(cache)];
        const load = jest.fn(async () => (await sleep(60), token()));
        const [ra, rb] = await Promise.all([a.getOrLoad(key, load), b.getOrLoad(key, load)]);
        expect(load).toHaveBeenCalledTimes(1);
        expect([ra.cacheStatus, rb.cacheStatus].sort()).toEqual(['hit', 'miss']);
      });

      test('when a load takes longer than the lock TTL, then the lock is renewed and the other replica still waits', async () => {
        // Lock TTL 300 ms, renewed every 100 ms: a stall under 200 ms cannot let the lock lapse.
        const [a, b] = [readThrough(cache, () => 60_000, 300), readThrough(cache, () => 60_000, 300)];
        const load = jest.fn(async () => (await sleep(700), token()));
        const first = a.getOrLoad(key, load);
        await sleep(20);
        const [ra, rb] = await Promise.all([first, b.getOrLoad(key, load)]);
        expect(load).toHaveBeenCalledTimes(1);
        expect([ra.cacheStatus, rb.cacheStatus]).toEqual(['miss', 'hit']);
      });

      test('when the lock holder dies without releasing, then a waiter takes over after the lock TTL', async () => {
        // Timed from before the lock is taken: the lock expires 100 ms after Redis set it, never earlier than 100 ms
        // after this line, however late the answer to getOrLock arrives on a busy machine.
        const started = Date.now();
        await cache.getOrLock(key, 'dead-replica', 100);
        const rt = readThrough(cache);
        expect((await rt.getOrLoad(key, async () => token())).cacheStatus).toBe('miss');
        expect(Date.now() - started).toBeGreaterThanOrEqual(80);
      });

      test('when a token is evicted (a sale said it is invalid), then the next read loads a fresh one', async () => {
        const rt = readThrough(cache);
        await rt.getOrLoad(key, async () => token('old'));
        await rt.evict(key);
        expect(await rt.getOrLoad(key, async () => token('new'))).toMatchObject({ value: { cardref: 'new' }, cacheStatus: 'miss' });
        expect((await rt.getOrLoad(key, async () => token('newer'))).value.cardref).toBe('new');
      });
    });
  });
}
