import { createMemoryTokenCache, createReadThrough, type TokenCache } from '../../src/cache';
import type { CardRefToken } from '../../src/gateway/types';
import { CapturingStream, createLogger } from '../../src/observability/logger';

/** Read-through behaviour that needs a cache failing on purpose (a wrapper over the memory cache). */
const token: CardRefToken = { type: 'token', cardref: 'ref-1', expires: '2031-01-01', ccnumlast4: '2224', cardtype: 'Visa', custkey: 'c1', pmkey: 'pm1' };

function failing(cache: TokenCache, ops: ReadonlySet<keyof TokenCache>): TokenCache {
  const boom = async (): Promise<never> => {
    throw new Error('connection refused');
  };
  return {
    get: ops.has('get') ? boom : cache.get,
    set: ops.has('set') ? boom : cache.set,
    delete: ops.has('delete') ? boom : cache.delete,
    getOrLock: ops.has('getOrLock') ? boom : cache.getOrLock,
    fillAndUnlock: ops.has('fillAndUnlock') ? boom : cache.fillAndUnlock,
    unlock: ops.has('unlock') ? boom : cache.unlock,
    extendLock: ops.has('extendLock') ? boom : cache.extendLock,
  };
}

test('when storing the loaded token fails, then the read still answers and the cache is bypassed for a while', async () => {
  let now = 1_000;
  const stream = new CapturingStream();
  const rt = createReadThrough({
    cache: failing(createMemoryTokenCache(), new Set(['fillAndUnlock'])),
    ttlOf: () => 60_000, lockTtlMs: 1_000, lockWaitMs: 10, bypassMs: 500, now: () => now,
    logger: createLogger({ stream }),
  });
  expect(await rt.getOrLoad('k', async () => token)).toEqual({ value: token, cacheStatus: 'miss', degraded: false });
  expect(rt.bypassing()).toBe(true);
  expect(stream.text()).toContain('token cache unavailable');
  expect(stream.text()).not.toContain('ref-1');
  now += 501;
  expect(rt.bypassing()).toBe(false);
});

test('when the bypass window is over and the cache works again, then reads are cached again', async () => {
  let now = 0;
  let broken = true;
  const memory = createMemoryTokenCache();
  const flaky: TokenCache = { ...memory, getOrLock: (...a) => (broken ? Promise.reject(new Error('down')) : memory.getOrLock(...a)) };
  const rt = createReadThrough({ cache: flaky, ttlOf: () => 60_000, lockTtlMs: 1_000, lockWaitMs: 10, bypassMs: 100, now: () => now });
  expect((await rt.getOrLoad('k', async () => token)).degraded).toBe(true);
  broken = false;
  expect((await rt.getOrLoad('k', async () => token)).degraded).toBe(true); // still inside the window
  now = 200;
  expect(await rt.getOrLoad('k', async () => token)).toMatchObject({ cacheStatus: 'miss', degraded: false });
  expect(await rt.getOrLoad('k', async () => token)).toMatchObject({ cacheStatus: 'hit', degraded: false });
});

test('when the load fails and the unlock fails too, then the caller still gets the load error', async () => {
  const rt = createReadThrough({ cache: failing(createMemoryTokenCache(), new Set(['unlock'])), ttlOf: () => 1, lockTtlMs: 1_000, lockWaitMs: 10 });
  await expect(rt.getOrLoad('k', async () => Promise.reject(new Error('gateway 404')))).rejects.toThrow('gateway 404');
});

test('when a read of a different key runs concurrently, then it is not merged with another key', async () => {
  const rt = createReadThrough({ cache: createMemoryTokenCache(), ttlOf: () => 60_000, lockTtlMs: 1_000, lockWaitMs: 10 });
  const [a, b] = await Promise.all([rt.getOrLoad('a', async () => ({ ...token, pmkey: 'a' })), rt.getOrLoad('b', async () => ({ ...token, pmkey: 'b' }))]);
  expect([a.value.pmkey, b.value.pmkey]).toEqual(['a', 'b']);
});

test('when peeking, then a cached token is returned and a miss takes no lock, so the next read loads at once', async () => {
  const memory = createMemoryTokenCache();
  const rt = createReadThrough({ cache: memory, ttlOf: () => 60_000, lockTtlMs: 60_000, lockWaitMs: 10 });
  expect(await rt.peek('k')).toBeUndefined();
  // Had the peek locked the key, this read would wait for the lock instead of loading.
  expect(await memory.getOrLock('k', 'someone', 1_000)).toEqual({ kind: 'locked' });
  await memory.unlock('k', 'someone');
  let loads = 0;
  expect(await rt.getOrLoad('k', async () => (loads++, token))).toMatchObject({ cacheStatus: 'miss' });
  expect(await rt.peek('k')).toEqual(token);
  expect(loads).toBe(1);
});

test('when peeking at a failing cache, then it reads as a miss, never throws, and starts the bypass window', async () => {
  const rt = createReadThrough({ cache: failing(createMemoryTokenCache(), new Set(['get'])), ttlOf: () => 60_000, lockTtlMs: 1_000, lockWaitMs: 10, bypassMs: 500 });
  await expect(rt.peek('k')).resolves.toBeUndefined();
  expect(rt.bypassing()).toBe(true);
});
