import type { Cluster, Redis } from 'ioredis';
import { CacheUnavailableError, parseToken, serializeToken, type LockProbe, type TokenCache } from './token-cache';
import { withCacheScripts, type ScriptedClient } from './scripts';
import { guarded } from '../redis/guarded';

export interface RedisTokenCacheOptions {
  redis: Redis | Cluster;
  /** `redis.keyPrefix` from config. Keys are `{<prefix>:tok:<key>}` and `{<prefix>:tok:<key>}:lock`. */
  keyPrefix: string;
  /**
   * Each call rejects with CacheUnavailableError after this long. ioredis may otherwise hold a command in
   * its offline queue for many reconnect attempts, and a token read must not hang on a dead Redis.
   */
  opTimeoutMs?: number;
}

/**
 * TokenCache on Redis. Round trips: get 1, set 1, delete 1, getOrLock 1 (hit or lock in one script),
 * fillAndUnlock 1, unlock 1, extendLock 1. Values are JSON of the token's own fields (serializeToken).
 */
export function createRedisTokenCache(options: RedisTokenCacheOptions): TokenCache {
  const redis: ScriptedClient = withCacheScripts(options.redis);
  const timeoutMs = options.opTimeoutMs ?? 1000;
  // Caller keys are encoded so that no input can form a different key or break the hash tag.
  const valueKey = (key: string) => `{${options.keyPrefix}:tok:${encodeURIComponent(key)}}`;
  const lockKey = (key: string) => `${valueKey(key)}:lock`;

  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`token cache ${what}`, timeoutMs, op, CacheUnavailableError);

  return {
    async get(key) {
      const raw = await call('get', () => redis.get(valueKey(key)));
      return raw === null ? undefined : parseToken(raw);
    },
    async set(key, value, ttlMs) {
      await call('set', () => redis.set(valueKey(key), serializeToken(value), 'PX', Math.max(1, Math.floor(ttlMs))));
    },
    async delete(key) {
      await call('delete', () => redis.del(valueKey(key)));
    },
    async getOrLock(key, owner, lockTtlMs): Promise<LockProbe> {
      const reply = await call('getOrLock', () => redis.tgCacheGetOrLock(valueKey(key), lockKey(key), owner, Math.max(1, Math.floor(lockTtlMs))));
      if (!Array.isArray(reply)) throw new CacheUnavailableError('token cache getOrLock: unexpected reply');
      const [kind, arg] = reply as [number, unknown];
      if (kind === 1) {
        const value = parseToken(String(arg));
        // An unreadable value (older format, manual edit) counts as busy-free: overwrite it on the next load.
        if (value) return { kind: 'hit', value };
        await call('delete', () => redis.del(valueKey(key)));
        return { kind: 'busy', lockTtlMs: 0 };
      }
      if (kind === 2) return { kind: 'locked' };
      return { kind: 'busy', lockTtlMs: Math.max(0, Number(arg)) };
    },
    async fillAndUnlock(key, owner, value, ttlMs) {
      const ttl = ttlMs === undefined ? 0 : Math.max(0, Math.floor(ttlMs));
      await call('fillAndUnlock', () => redis.tgCacheFillAndUnlock(valueKey(key), lockKey(key), owner, serializeToken(value), ttl));
    },
    async unlock(key, owner) {
      await call('unlock', () => redis.tgCacheUnlock(lockKey(key), owner));
    },
    async extendLock(key, owner, lockTtlMs) {
      return Number(await call('extendLock', () => redis.tgCacheExtendLock(lockKey(key), owner, Math.max(1, Math.floor(lockTtlMs))))) === 1;
    },
  };
}

