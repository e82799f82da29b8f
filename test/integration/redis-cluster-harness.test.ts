import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';

// Proves the harness: a real 3-master cluster on loopback, reached through ioredis's Cluster client.
// Multi-key scripts only work when every key shares one hash tag, the rule all our Lua keys follow.

const SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]); redis.call('SET', KEYS[2], ARGV[1]); return redis.call('MGET', KEYS[1], KEYS[2])";

describe('Redis Cluster test harness', () => {
  let cluster: RedisCluster | undefined;
  let client: Cluster | undefined;

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  });

  // Always clean up, even when a test or beforeAll failed half-way.
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('when started, then three masters own every slot and nodesEnv lists them', async () => {
    expect(cluster?.nodes).toHaveLength(3);
    expect(cluster?.nodesEnv).toMatch(/^127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
    const info = await client!.cluster('INFO');
    expect(String(info)).toContain('cluster_state:ok');
    expect(client!.nodes('master')).toHaveLength(3);
  });

  it('when a script touches keys with one hash tag, then it runs on their node', async () => {
    const tag = `{tokengate:test-${Date.now()}}`;
    await expect(client!.eval(SCRIPT, 2, `${tag}:a`, `${tag}:b`, 'v')).resolves.toEqual(['v', 'v']);
  });

  it('when a script touches keys in different slots, then Redis refuses it with CROSSSLOT', async () => {
    // Without a hash tag the two keys hash to different slots (CLUSTER KEYSLOT), so no node holds both.
    await expect(client!.eval(SCRIPT, 2, 'tokengate:a', 'tokengate:b', 'v')).rejects.toThrow(/CROSSSLOT/);
  });
});
