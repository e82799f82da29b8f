import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';

/** The Redis the global setup found or started. */
export function redisUrl(): string {
  return process.env.REDIS_URL || 'redis://127.0.0.1:6379';
}

/** A fresh key prefix so each test arranges its own data without touching anyone else's. */
export function uniquePrefix(name = 'test'): string {
  return `tgtest:${name}:${randomBytes(6).toString('hex')}`;
}

export function connectRedis(): Redis {
  return new Redis(redisUrl(), { maxRetriesPerRequest: 1, lazyConnect: false });
}

/**
 * A suite's own connection and key prefix: connected as the test file loads (the global setup has started
 * Redis by then), its keys deleted and the connection closed after the file's tests.
 */
export function suiteRedis(name: string): { prefix: string; redis: Redis } {
  const prefix = uniquePrefix(name);
  const redis = connectRedis();
  afterAll(async () => {
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });
  return { prefix, redis };
}

/** Deletes every key under a prefix (SCAN, never KEYS or FLUSH). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

/** Every key under a prefix with its value as text (strings, hashes, lists, sets, sorted sets, streams): to prove what Redis never holds. */
export async function valuesUnder(redis: Redis, prefix: string): Promise<{ key: string; text: string }[]> {
  const out: { key: string; text: string }[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      const value: unknown =
        type === 'string' ? await redis.get(key)
        : type === 'hash' ? await redis.hgetall(key)
        : type === 'list' ? await redis.lrange(key, 0, -1)
        : type === 'set' ? await redis.smembers(key)
        : type === 'zset' ? await redis.zrange(key, '0', '-1', 'WITHSCORES')
        : type === 'stream' ? await redis.xrange(key, '-', '+')
        : null;
      out.push({ key, text: JSON.stringify(value) });
    }
  } while (cursor !== '0');
  return out;
}
