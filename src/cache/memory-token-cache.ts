import type { CardRefToken } from '../gateway/types';
import { parseToken, serializeToken, type LockProbe, type TokenCache } from './token-cache';

export interface MemoryTokenCacheOptions {
  /** Clock in ms; injectable for tests. */
  now?: () => number;
}

/**
 * TokenCache in process memory (development mode, unit tests), with the semantics of the Redis one:
 * values round-trip through the same JSON, TTLs and lock expiry are honoured.
 */
export function createMemoryTokenCache(options: MemoryTokenCacheOptions = {}): TokenCache {
  const now = options.now ?? Date.now;
  const values = new Map<string, { json: string; until: number }>();
  const locks = new Map<string, { owner: string; until: number }>();

  let ops = 0;
  /** Entries nobody reads again would stay forever in a long dev session: drop expired ones now and then. */
  function sweep(): void {
    if (++ops % 256 !== 0) return;
    const t = now();
    for (const map of [values, locks] as Array<Map<string, { until: number }>>) for (const [k, e] of map) if (e.until <= t) map.delete(k);
  }
  function live<T extends { until: number }>(map: Map<string, T>, key: string): T | undefined {
    const e = map.get(key);
    if (e && e.until <= now()) {
      map.delete(key);
      return undefined;
    }
    return e;
  }
  function read(key: string): CardRefToken | undefined {
    const e = live(values, key);
    return e ? parseToken(e.json) : undefined;
  }
  function write(key: string, value: CardRefToken, ttlMs: number): void {
    sweep();
    values.set(key, { json: serializeToken(value), until: now() + Math.max(1, Math.floor(ttlMs)) });
  }
  function release(key: string, owner: string): void {
    if (live(locks, key)?.owner === owner) locks.delete(key);
  }

  return {
    async get(key) {
      return read(key);
    },
    async set(key, value, ttlMs) {
      write(key, value, ttlMs);
    },
    async delete(key) {
      values.delete(key);
    },
    async getOrLock(key, owner, lockTtlMs): Promise<LockProbe> {
      const value = read(key);
      if (value) return { kind: 'hit', value };
      const lock = live(locks, key);
      if (lock) return { kind: 'busy', lockTtlMs: lock.until - now() };
      locks.set(key, { owner, until: now() + Math.max(1, Math.floor(lockTtlMs)) });
      return { kind: 'locked' };
    },
    async fillAndUnlock(key, owner, value, ttlMs) {
      const ttl = ttlMs === undefined ? 0 : Math.floor(ttlMs);
      if (ttl > 0) write(key, value, ttl);
      release(key, owner);
    },
    async unlock(key, owner) {
      release(key, owner);
    },
    async extendLock(key, owner, lockTtlMs) {
      const lock = live(locks, key);
      if (lock?.owner !== owner) return false;
      lock.until = now() + Math.max(1, Math.floor(lockTtlMs));
      return true;
    },
  };
}
