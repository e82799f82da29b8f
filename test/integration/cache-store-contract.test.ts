import { createMemoryTokenCache, createRedisTokenCache, type TokenCache } from '../../src/cache';
import { suiteRedis } from '../support/redis';
import { describeTokenCacheContract } from './cache-store.contract';

/** One suite (cache-store.contract.ts), run against the memory cache and a real Redis: both must behave the same. */
const { prefix, redis } = suiteRedis('cache');

const factories: Array<[string, () => TokenCache]> = [
  ['memory', () => createMemoryTokenCache()],
  ['redis', () => createRedisTokenCache({ redis, keyPrefix: prefix })],
];
for (const [name, make] of factories) describeTokenCacheContract(name, make);
