import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { describeSharesContract } from './limiter-shares.contract';
import { describeSchedulerContract, type SchedulerBackend } from './limiter-suite.contract';

/**
 * The scheduler contracts (limiter-suite.contract.ts, limiter-shares.contract.ts) on a 3-master Redis Cluster started on loopback: every
 * script's keys share one hash tag, or Redis refuses it with CROSSSLOT. The cluster is thrown away after, so
 * no key cleanup.
 */
let cluster: RedisCluster | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
});
afterAll(async () => {
  await cluster?.stop();
});

const backend: SchedulerBackend = {
  kind: 'redis',
  connect: () => new Cluster((cluster as RedisCluster).nodes, { redisOptions: { maxRetriesPerRequest: 1 } }),
};
describeSchedulerContract('redis cluster', backend);
describeSharesContract('redis cluster', backend);
