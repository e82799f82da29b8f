import { createMemoryIdempotencyStore, createRedisIdempotencyStore, type IdempotencyStoreSettings } from '../../src/idempotency';
import { suiteRedis } from '../support/redis';
import { CONTRACT_SETTINGS, describeIdempotencyStoreContract, type MakeIdempotencyStore } from './idempotency-store.contract';

/** One suite (idempotency-store.contract.ts), run against the memory store and a real Redis: both must behave the same. */
const { prefix, redis } = suiteRedis('idem');

const settings: IdempotencyStoreSettings = CONTRACT_SETTINGS;
const factories: Array<[string, MakeIdempotencyStore]> = [
  ['memory', (s) => createMemoryIdempotencyStore({ ...settings, ...s })],
  ['redis', (s) => createRedisIdempotencyStore({ ...settings, ...s, redis, keyPrefix: prefix })],
];

for (const [name, make] of factories) describeIdempotencyStoreContract(name, make);
