import { createRedisTokenCache } from '../../src/cache';
import { createRedisIdempotencyStore } from '../../src/idempotency';
import { declaredKeysOnly } from '../support/declared-keys';
import { connectRedis, suiteRedis } from '../support/redis';
import { describeTokenCacheContract } from './cache-store.contract';
import { CONTRACT_SETTINGS, describeIdempotencyStoreContract } from './idempotency-store.contract';

/**
 * Every key a store's Lua script touches is in its KEYS (Redis' EVAL contract, which a plain Redis and a Cluster
 * node do not enforce for keys of the script's own slot): the idempotency store's and the token cache's contracts
 * run with each script checked (test/support/declared-keys.ts). The settlement store's run in settlement-store.test.ts.
 */
const { prefix } = suiteRedis('declared-keys');
const checked = declaredKeysOnly(connectRedis());
afterAll(() => checked.disconnect());

describeIdempotencyStoreContract('redis, every key declared', (s) => createRedisIdempotencyStore({ ...CONTRACT_SETTINGS, ...s, redis: checked, keyPrefix: prefix }));
describeTokenCacheContract('redis, every key declared', () => createRedisTokenCache({ redis: checked, keyPrefix: prefix }));
