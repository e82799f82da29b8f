/** Card reference token cache: TTL rule, storage (Redis and memory) and the cross-replica read-through. */
export { tokenTtlMs, tokenTtlFromConfig, startOfUtcDay } from './token-ttl';
export { CacheUnavailableError, serializeToken, parseToken, type TokenCache, type LockProbe } from './token-cache';
export { createRedisTokenCache, type RedisTokenCacheOptions } from './redis-token-cache';
export { createMemoryTokenCache, type MemoryTokenCacheOptions } from './memory-token-cache';
export { createReadThrough, type ReadThrough, type ReadThroughOptions, type ReadResult } from './read-through';
