import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisConfig } from '../config/types';
import type { Logger } from '../observability/logger';

export type RedisClient = Redis | Cluster;

/**
 * What connectRedis will build, without connecting: the topology and the ioredis options. Pure, so the TLS
 * and credential wiring is unit-tested without a TLS server. Holds the password in clear: never log it.
 */
export type RedisPlan =
  | { kind: 'none' }
  | { kind: 'single'; options: RedisOptions }
  | { kind: 'cluster'; nodes: { host: string; port: number }[]; options: ClusterOptions }
  | { kind: 'sentinel'; options: RedisOptions };

// Reconnect forever with capped backoff: recovery after a Redis restart or failover must be automatic.
const backoff = (times: number): number => Math.min(50 * 2 ** Math.min(times, 6), 2000);

const COMMON: RedisOptions = {
  // Commands fail fast while disconnected, so a sale never waits on a dead Redis: it answers 503.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  commandTimeout: 2000,
  retryStrategy: backoff,
  enableAutoPipelining: true,
};

function hostPort(entry: string): { host: string; port: number } {
  const [host, port] = entry.split(':');
  return { host: host as string, port: Number(port ?? 6379) };
}

/** A redis:// or rediss:// URL as explicit options; rediss:// turns TLS on, verifying the URL's host name. */
export function singleNodeOptions(rawUrl: string): RedisOptions {
  const url = new URL(rawUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined;
  return {
    ...COMMON,
    host,
    port: Number(url.port || 6379),
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(db !== undefined && Number.isInteger(db) ? { db } : {}),
    ...(url.protocol === 'rediss:' ? { tls: { servername: host } } : {}),
  };
}

export function redisPlan(config: RedisConfig): RedisPlan {
  const auth = config.password ? { password: config.password.reveal() } : {};
  const tls = config.tls ? { tls: {} } : {};
  if (config.clusterNodes.length > 0) {
    return {
      kind: 'cluster',
      nodes: config.clusterNodes.map(hostPort),
      // Auto-pipelining is the Cluster client's own option: commands go through it, not through the nodes'
      // clients, so the nodes' setting alone left every command a socket write of its own.
      options: { enableOfflineQueue: false, enableAutoPipelining: true, clusterRetryStrategy: backoff, redisOptions: { ...COMMON, ...auth, ...tls } },
    };
  }
  if (config.sentinels.length > 0) {
    return {
      kind: 'sentinel',
      options: {
        ...COMMON,
        ...auth,
        ...tls,
        sentinels: config.sentinels.map(hostPort),
        name: config.sentinelName,
        sentinelRetryStrategy: backoff,
        // Follow +switch-master at once: a deliberately failed-over master stays writable until the sentinel
        // demotes it (up to ~10 s), and writes it takes meanwhile are lost.
        failoverDetector: true,
        // A connection still on a demoted master answers READONLY: reconnect, which asks the sentinels again.
        reconnectOnError: (err: Error) => err.message.startsWith('READONLY'),
      },
    };
  }
  if (config.url) return { kind: 'single', options: singleNodeOptions(config.url.reveal()) };
  return { kind: 'none' };
}

/** One Redis connection for the whole process: single node, Redis Cluster or Sentinel (see RedisConfig). */
export function connectRedis(config: RedisConfig, logger: Logger): RedisClient | undefined {
  const plan = redisPlan(config);
  let client: RedisClient;
  if (plan.kind === 'cluster') client = new Cluster(plan.nodes, plan.options);
  else if (plan.kind === 'single' || plan.kind === 'sentinel') client = new Redis(plan.options);
  else return undefined;
  let down = false;
  client.on('error', (err: Error & { code?: string }) => {
    // The code only: a message may quote the URL, and with it a password.
    if (!down) logger.warn('redis connection error', { topology: plan.kind, code: err.code ?? err.name });
    down = true;
  });
  client.on('ready', () => {
    if (down) logger.info('redis connection restored', { topology: plan.kind });
    down = false;
  });
  return client;
}

/**
 * Closes a client from connectRedis and every socket it opened. A Sentinel client with the failover detector
 * also holds one subscription per sentinel, which quit() leaves connected (and reconnecting for ever once the
 * sentinel goes away): ioredis#1362, unfixed in 6.0.0. disconnect() is what releases them, so a Sentinel
 * client is closed with it: the socket is ended (FIN after what was written), not destroyed.
 */
export async function closeRedis(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client instanceof Redis && (client.options.sentinels?.length ?? 0) > 0) {
    // 'end' follows only the close of a live socket; a client between reconnects has none to wait for.
    const live = client.status === 'ready' || client.status === 'connect' || client.status === 'connecting';
    const ended = live ? new Promise<void>((resolve) => client.once('end', () => resolve())) : Promise.resolve();
    client.disconnect();
    await ended;
    return;
  }
  await client.quit().catch(() => client.disconnect());
}

/**
 * Resolves once the connection is ready, or after `timeoutMs` (the service then starts degraded: /readyz
 * stays 200 and lists `redis` under `degraded`, tokengate_redis_up reads 0, sales answer 503, reads use the fallback budget). Without this wait the first commands would
 * fail at once, because the offline queue is off on purpose.
 */
export function waitForRedis(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    client.on('ready', onReady);
  });
}
