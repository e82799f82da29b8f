import { randomUUID } from 'node:crypto';
import type { CardRefToken } from '../gateway/types';
import type { Logger } from '../observability/logger';
import type { TokenCache } from './token-cache';

export interface ReadThroughOptions {
  cache: TokenCache;
  /** TTL for a loaded token (tokenTtlFromConfig); undefined = return it but do not cache it. */
  ttlOf: (value: CardRefToken) => number | undefined;
  /** `cache.lockTtlMs`: how long one replica may load before another may take over. */
  lockTtlMs: number;
  /** `cache.lockWaitMs`: poll interval (jittered ±50 %) of a replica waiting for another's load. */
  lockWaitMs: number;
  logger?: Logger;
  /** After a cache failure, skip the cache this long so a dead Redis costs one timeout, not one per read. */
  bypassMs?: number;
  now?: () => number;
  random?: () => number;
}

export interface ReadResult {
  value: CardRefToken;
  /** For the `Cache-Status` header: 'hit' when no upstream call was made for this read. */
  cacheStatus: 'hit' | 'miss';
  /** True when the cache was unusable (Redis down) and the value was loaded without lock or caching. */
  degraded: boolean;
}

export interface ReadThrough {
  /**
   * The cached token for `key`, or `load()`'s result. Concurrent misses for one key run ONE load across
   * all replicas: callers in this process share one promise (and its error); across replicas a Redis lock
   * lets one load while the others poll until the value appears or the lock goes away, then retry.
   * A failed load releases the lock and caches nothing (another replica's waiters then load themselves).
   * With the cache down, loads go straight upstream (still one per key per process).
   * Round trips: hit 1; miss 2 (getOrLock, fillAndUnlock) plus 1 per lockTtlMs/3 of a slow load (lock
   * renewal); a waiting replica 1 per poll (~lockWaitMs).
   */
  getOrLoad(key: string, load: () => Promise<CardRefToken>): Promise<ReadResult>;
  /**
   * The cached token for `key` or undefined: one plain read that never locks, loads or throws (a failing
   * cache starts the bypass window and reads as a miss). Lets a caller look ahead, in the same Redis write
   * as its other work, before it knows it will need the token; a miss then goes through getOrLoad.
   */
  peek(key: string): Promise<CardRefToken | undefined>;
  /**
   * Drops a cached token (a sale said it is invalid). Never throws: with the cache unreachable it logs and
   * starts the bypass window, during which nobody reads the stale entry either.
   */
  evict(key: string): Promise<void>;
  /** True while the cache is bypassed after a failure (for /readyz and metrics). */
  bypassing(): boolean;
}

export function createReadThrough(options: ReadThroughOptions): ReadThrough {
  const { cache, ttlOf, lockTtlMs, lockWaitMs, logger } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const bypassMs = options.bypassMs ?? 1000;
  const flights = new Map<string, Promise<ReadResult>>();
  let bypassUntil = 0;

  const bypassing = () => now() < bypassUntil;
  function trip(what: string, err: unknown): void {
    if (!bypassing()) logger?.warn('token cache unavailable, reading upstream without caching', { op: what, error: (err as Error).message, bypassMs });
    bypassUntil = now() + bypassMs;
  }
  async function direct(load: () => Promise<CardRefToken>): Promise<ReadResult> {
    return { value: await load(), cacheStatus: 'miss', degraded: true };
  }

  async function loadAndFill(key: string, owner: string, load: () => Promise<CardRefToken>): Promise<ReadResult> {
    // A load may sit in the upstream limiter's queue longer than lockTtlMs: renew the lock while we are
    // alive, so other replicas keep waiting instead of loading a second time. If we die, it lapses.
    const renew = setInterval(() => {
      cache.extendLock(key, owner, lockTtlMs).catch(() => undefined);
    }, Math.max(10, Math.floor(lockTtlMs / 3)));
    renew.unref();
    let value: CardRefToken;
    try {
      value = await load();
    } catch (err) {
      clearInterval(renew);
      // Free the lock at once so waiting replicas retry now rather than after lockTtlMs.
      await cache.unlock(key, owner).catch((e: unknown) => trip('unlock', e));
      throw err;
    }
    clearInterval(renew);
    try {
      await cache.fillAndUnlock(key, owner, value, ttlOf(value));
    } catch (err) {
      trip('fillAndUnlock', err);
    }
    return { value, cacheStatus: 'miss', degraded: false };
  }

  async function run(key: string, load: () => Promise<CardRefToken>): Promise<ReadResult> {
    if (bypassing()) return direct(load);
    const owner = randomUUID();
    for (;;) {
      let probe;
      try {
        probe = await cache.getOrLock(key, owner, lockTtlMs);
      } catch (err) {
        trip('getOrLock', err);
        return direct(load);
      }
      if (probe.kind === 'hit') return { value: probe.value, cacheStatus: 'hit', degraded: false };
      if (probe.kind === 'locked') return loadAndFill(key, owner, load);
      const base = Math.max(1, Math.min(lockWaitMs, probe.lockTtlMs + 1));
      await new Promise((resolve) => setTimeout(resolve, base * (0.5 + random())));
    }
  }

  return {
    getOrLoad(key, load) {
      const inflight = flights.get(key);
      if (inflight) return inflight;
      const p = run(key, load).finally(() => flights.delete(key));
      flights.set(key, p);
      return p;
    },
    async peek(key) {
      if (bypassing()) return undefined;
      try {
        return await cache.get(key);
      } catch (err) {
        trip('get', err);
        return undefined;
      }
    },
    async evict(key) {
      try {
        await cache.delete(key);
      } catch (err) {
        trip('evict', err);
      }
    },
    bypassing,
  };
}
