import { ConfigError, loadConfig } from '../../src/config';
import { Secret } from '../../src/config/secret';
import type { RedisConfig } from '../../src/config/types';
import { redisPlan } from '../../src/redis/connect';

/**
 * The topology settings without a server: which ioredis client and options each one yields (TLS and
 * credentials included), and the config rules (one topology at a time; production accepts any of the three).
 */
const none: RedisConfig = { url: undefined, clusterNodes: [], sentinels: [], sentinelName: undefined, password: undefined, tls: false, keyPrefix: 'tg', writeReplicas: 0, writeReplicasTimeoutMs: 500 };

const prodEnv = {
  NODE_ENV: 'production',
  GATEWAY_BASE_URL: 'https://gateway.example/api/v2/',
  GATEWAY_API_KEY: 'live_key_0123456789',
  GATEWAY_API_PIN: '8y3-pin',
  JWT_ALGORITHMS: 'HS256',
  JWT_SECRET: 'x'.repeat(40),
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ env });
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  return [];
}

describe('redisPlan', () => {
  test('when REDIS_URL is rediss://, then the single-node options turn TLS on for the URL host and carry its credentials and db', () => {
    const plan = redisPlan({ ...none, url: new Secret('rediss://svc:p%40ss@redis.example.internal:6380/2') });
    expect(plan.kind).toBe('single');
    if (plan.kind !== 'single') return;
    expect(plan.options).toMatchObject({ host: 'redis.example.internal', port: 6380, username: 'svc', password: 'p@ss', db: 2, tls: { servername: 'redis.example.internal' } });
    expect(plan.options.enableOfflineQueue).toBe(false);
  });

  test('when REDIS_URL is redis://, then there is no TLS and the port defaults to 6379', () => {
    const plan = redisPlan({ ...none, url: new Secret('redis://10.0.0.5') });
    expect(plan).toMatchObject({ kind: 'single', options: { host: '10.0.0.5', port: 6379 } });
    if (plan.kind === 'single') expect(plan.options.tls).toBeUndefined();
  });

  test('when REDIS_CLUSTER_NODES is set with a password and TLS, then a Cluster plan lists the seeds and every node gets both', () => {
    const plan = redisPlan({ ...none, clusterNodes: ['10.0.0.1:7000', 'redis-1.internal'], password: new Secret('cluster-pw'), tls: true });
    expect(plan).toMatchObject({
      kind: 'cluster',
      nodes: [{ host: '10.0.0.1', port: 7000 }, { host: 'redis-1.internal', port: 6379 }],
      options: { enableOfflineQueue: false, enableAutoPipelining: true, redisOptions: { password: 'cluster-pw', tls: {}, enableOfflineQueue: false, enableAutoPipelining: true } },
    });
  });

  test('when REDIS_SENTINELS is set, then a Sentinel plan names the master and follows failovers', () => {
    const plan = redisPlan({ ...none, sentinels: ['s1:26379', 's2:26380'], sentinelName: 'mymaster', password: new Secret('master-pw') });
    expect(plan).toMatchObject({
      kind: 'sentinel',
      options: { sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26380 }], name: 'mymaster', password: 'master-pw' },
    });
    if (plan.kind !== 'sentinel') return;
    expect(plan.options.tls).toBeUndefined();
    const reconnect = plan.options.reconnectOnError as (err: Error) => boolean;
    expect(reconnect(new Error("READONLY You can't write against a read only replica."))).toBe(true);
    expect(reconnect(new Error('ERR wrong number of arguments'))).toBe(false);
  });

  test('when nothing is set, then there is no Redis (in-memory stores outside production)', () => {
    expect(redisPlan(none)).toEqual({ kind: 'none' });
  });
});

describe('Redis topology settings', () => {
  test('when production has any one topology, then it starts', () => {
    expect(problemsOf({ ...prodEnv, REDIS_URL: 'rediss://redis:6380' })).toEqual([]);
    expect(problemsOf({ ...prodEnv, REDIS_CLUSTER_NODES: 'r1:7000,r2:7000', REDIS_PASSWORD: 'pw' })).toEqual([]);
    expect(problemsOf({ ...prodEnv, REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_NAME: 'mymaster', REDIS_TLS: 'true' })).toEqual([]);
    const c = loadConfig({ env: { ...prodEnv, REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'mymaster' } });
    expect(c.redis).toMatchObject({ sentinels: ['s1:26379'], sentinelName: 'mymaster', clusterNodes: [], tls: false });
  });

  test('when production has none, then the line names all three', () => {
    expect(problemsOf(prodEnv)).toEqual([expect.stringMatching(/REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS .*required in production/)]);
  });

  test('when two topologies are set, then it refuses and names them', () => {
    expect(problemsOf({ ...prodEnv, REDIS_URL: 'redis://r:6379', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'm' })).toEqual(['REDIS_URL and REDIS_SENTINELS are both set: keep one']);
    expect(problemsOf({ ...prodEnv, REDIS_CLUSTER_NODES: 'r1:7000', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'm' })).toEqual(['REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: keep one']);
  });

  test('when the sentinel settings are incomplete or misplaced, then each problem is named without the password', () => {
    expect(problemsOf({ ...prodEnv, REDIS_SENTINELS: 's1:26379' })).toEqual([expect.stringContaining('REDIS_SENTINEL_NAME (redis.sentinelName) is required with REDIS_SENTINELS')]);
    const problems = problemsOf({ ...prodEnv, REDIS_URL: 'redis://r:6379', REDIS_PASSWORD: 'do-not-print-me', REDIS_TLS: 'true', REDIS_SENTINEL_NAME: 'm' });
    expect(problems).toEqual(
      expect.arrayContaining([expect.stringContaining('REDIS_PASSWORD'), expect.stringContaining('REDIS_TLS'), expect.stringContaining('REDIS_SENTINEL_NAME (redis.sentinelName) needs REDIS_SENTINELS')]),
    );
    expect(problems.join('\n')).not.toContain('do-not-print-me');
  });
});
