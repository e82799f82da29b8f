import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { describeSchedulerContract } from './limiter-suite.contract';

/**
 * The scheduler contract (limiter-suite.contract.ts) on a 3-master Redis Cluster started on loopback: every
 * script's keys share one hash tag, or Redis refuses it with CROSSSLOT. The cluster is thrown away after, so
 * no key cleanup.
 */
let cluster: RedisCluster | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
}, 20_000);
afterAll(async () => {
  await cluster?.stop();
});

describeSchedulerContract('redis cluster', {
  kind: 'redis',
  connect: () => new Cluster((cluster as RedisCluster).nodes, { redisOptions: { maxRetriesPerRequest: 1 } }),
});
