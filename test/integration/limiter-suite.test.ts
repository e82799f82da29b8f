import type Redis from 'ioredis';
import { declaredKeysOnly } from '../support/declared-keys';
import { connectRedis, deletePrefix } from '../support/redis';
import { describeSharesContract } from './limiter-shares.contract';
import { describeSchedulerContract, type SchedulerBackend } from './limiter-suite.contract';

/** The scheduler contracts (limiter-suite.contract.ts, limiter-shares.contract.ts) held by the memory scheduler and by Redis on one node. */
const redis: SchedulerBackend = { kind: 'redis', connect: () => connectRedis(), cleanup: (client, prefix) => deletePrefix(client as Redis, prefix) };
describeSchedulerContract('memory', { kind: 'memory' });
describeSchedulerContract('redis', redis);
describeSharesContract('memory', { kind: 'memory' });
describeSharesContract('redis', redis);
// The scheduler's script checked: every key it touches named in its KEYS (support/declared-keys.ts).
const checked: SchedulerBackend = { ...redis, connect: () => declaredKeysOnly(connectRedis()) };
describeSchedulerContract('redis, every key declared', checked);
describeSharesContract('redis, every key declared', checked);
