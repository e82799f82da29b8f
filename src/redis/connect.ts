import Redis, { Cluster } from 'ioredis';
import type { RedisConfig } from '../config/types';
import type { Logger } from '../observability/logger';

export type RedisClient = Redis | Cluster;

/**
 * One Redis connection for the whole process: single node (`redis://`, `rediss://` with TLS) or Redis Cluster.
 * Commands fail fast while disconnected (no offline queue), so a sale never waits on a dead Redis: it answers 503.
 */
export function connectRedis(config: RedisConfig, logger: Logger): RedisClient | undefined {
  const common = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 2000,
    // Reconnect forever with capped backoff: recovery after a Redis restart must be automatic.
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
  };
  let client: RedisClient;
  if (config.clusterNodes.length > 0) {
    const nodes = config.clusterNodes.map((n) => {
      const [host, port] = n.split(':');
      return { host: host as string, port: Number(port ?? 6379) };
    });
    client = new Cluster(nodes, { enableOfflineQueue: false, clusterRetryStrategy: common.retryStrategy, redisOptions: common });
  } else if (config.url) {
    client = new Redis(config.url.reveal(), common);
  } else {
    return undefined;
  }
  let down = false;
  client.on('error', (err: Error & { code?: string }) => {
    if (!down) logger.warn('redis connection error', { code: err.code ?? err.name });
    down = true;
  });
  client.on('ready', () => {
    if (down) logger.info('redis connection restored');
    down = false;
  });
  return client;
}

/**
 * Resolves once the connection is ready, or after `timeoutMs` (the service then starts degraded: /readyz
 * reports Redis, sales answer 503, reads use the fallback budget). Without this wait the first commands would
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
