import type Redis from 'ioredis';
import { connectRedis, deletePrefix } from '../support/redis';
import { describeSchedulerContract } from './limiter-suite.contract';

/** The scheduler contract (limiter-suite.contract.ts) held by the memory scheduler and by Redis on one node. */
describeSchedulerContract('memory', { kind: 'memory' });
describeSchedulerContract('redis', { kind: 'redis', connect: () => connectRedis(), cleanup: (redis, prefix) => deletePrefix(redis as Redis, prefix) });
