import { randomBytes } from 'node:crypto';
import { Secret } from '../../src/config/secret';
import type { RedisConfig } from '../../src/config/types';
import { silentLogger } from '../../src/observability/logger';
import { closeRedis, connectRedis, waitForRedis, type RedisClient } from '../../src/redis/connect';
import { redisUrl } from '../support/redis';
import { redisCli } from '../support/redis-process';
import { startRedisSentinel, type RedisSentinel } from '../support/redis-sentinel';

/**
 * connectRedis against real servers: the shared single node through REDIS_URL, and a private master + replica
 * watched by one sentinel (redis-server --sentinel) through REDIS_SENTINELS, including a forced failover.
 * (Redis Cluster: cluster-*.test.ts.)
 */
const none: RedisConfig = { url: undefined, clusterNodes: [], sentinels: [], sentinelName: undefined, password: undefined, tls: false, keyPrefix: 'tg', writeReplicas: 0, writeReplicasTimeoutMs: 500 };
const key = (name: string) => `tgtest:connect:${name}:${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connected(config: RedisConfig): Promise<RedisClient> {
  const client = connectRedis(config, silentLogger());
  if (!client) throw new Error('connectRedis returned no client');
  if (!(await waitForRedis(client, 5000))) {
    client.disconnect();
    throw new Error('not ready within 5 s');
  }
  return client;
}

test('when REDIS_URL names the shared single node, then connectRedis reaches it', async () => {
  const client = await connected({ ...none, url: new Secret(redisUrl()) });
  const k = key('single');
  try {
    await client.set(k, 'v', 'PX', 5000);
    expect(await client.get(k)).toBe('v');
  } finally {
    await client.del(k);
    await client.quit();
  }
});

describe('Redis Sentinel (redis-server --sentinel)', () => {
  let sentinel: RedisSentinel | undefined;
  let client: RedisClient | undefined;
  beforeAll(async () => {
    sentinel = await startRedisSentinel({ replicas: 1 });
  });
  let failedOverAt = 0;
  afterAll(async () => {
    if (client) await closeRedis(client);
    await sentinel?.stop();
    // After a failover ioredis 6.0.0 cleans the old failover detector twice (on +switch-master, then on the
    // reconnect); the second disconnect of its already closed sentinel clients arms a 2 s destroy timer that
    // nothing clears (AbstractConnector.disconnect). Let it run out, or the Jest worker that ends with this
    // file is force-exited.
    if (failedOverAt) await sleep(failedOverAt + 2100 - Date.now());
  });

  /** Connections the sentinel holds in SUBSCRIBE: one per failover detector. */
  async function subscriptions(): Promise<number> {
    const s = sentinel as RedisSentinel;
    const list = await redisCli(s.sentinel.port, 'CLIENT', 'LIST');
    return list.split('\n').filter((line) => / cmd=subscribe /.test(line)).length;
  }

  async function settle(expected: number): Promise<number> {
    const deadline = Date.now() + 3000;
    let n = await subscriptions();
    while (n !== expected && Date.now() < deadline) {
      await sleep(50);
      n = await subscriptions();
    }
    return n;
  }

  test('when REDIS_SENTINELS and REDIS_SENTINEL_NAME are set, then connectRedis finds the master through the sentinel and writes to it', async () => {
    const s = sentinel as RedisSentinel;
    client = await connected({ ...none, sentinels: [s.sentinelsEnv], sentinelName: s.name });
    const k = key('sentinel');
    await client.set(k, 'through-sentinel');
    expect(await client.get(k)).toBe('through-sentinel');
    // It is the sentinel's master that holds it, not some other Redis.
    const direct = await connected({ ...none, url: new Secret(`redis://${s.master.host}:${s.master.port}`) });
    expect(await direct.get(k)).toBe('through-sentinel');
    await direct.quit();
  });

  test('when a Sentinel client is closed, then its failover-detector subscription to the sentinel closes too', async () => {
    const s = sentinel as RedisSentinel;
    const before = await subscriptions();
    const other = await connected({ ...none, sentinels: [s.sentinelsEnv], sentinelName: s.name });
    expect(await settle(before + 1)).toBe(before + 1);
    await closeRedis(other);
    // quit() alone left it subscribed, and reconnecting every 60 s once the sentinel stopped (ioredis#1362).
    expect(await settle(before)).toBe(before);
    expect(other.status).toBe('end');
  });

  test('when the sentinel fails the master over, then the same client writes to the new master without a restart', async () => {
    const s = sentinel as RedisSentinel;
    const c = client as RedisClient;
    const promoted = await s.failover();
    expect(promoted.port).not.toBe(s.master.port);
    const direct = await connected({ ...none, url: new Secret(`redis://${promoted.host}:${promoted.port}`) });
    // Commands fail fast during the switch (no offline queue, by design): retry as a caller would. The old
    // master stays writable until the sentinel demotes it (up to ~10 s): only the failover detector's
    // +switch-master subscription moves the client in time, so this also proves it is on.
    const k = key('after-failover');
    const deadline = Date.now() + 10_000;
    let landed = false;
    for (let i = 0; !landed && Date.now() < deadline; i++) {
      await c.set(k, `after-${i}`).catch(() => undefined);
      landed = (await direct.get(k)) === `after-${i}`;
      if (!landed) await sleep(100);
    }
    failedOverAt = Date.now();
    expect(landed).toBe(true);
    await direct.quit();
  });
});
