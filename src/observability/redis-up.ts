import { Gauge, type Registry } from 'prom-client';
import type { RedisClient } from '../redis/connect';

const PING_TIMEOUT_MS = 1000;

/**
 * `tokengate_redis_up`: 1 when Redis answers a PING within 1 s, read at scrape time (no cost between scrapes,
 * nothing on the request path). Redis is shared by every replica, so its state is a metric and an alert
 * (k8s/components/monitoring), not a readiness failure: see docs/deploy.md, "Readiness".
 */
export function registerRedisUp(registry: Registry, redis: RedisClient): void {
  new Gauge({
    name: 'tokengate_redis_up',
    help: '1 when Redis answers a PING within 1 s at scrape time, else 0 (sales answer 503 meanwhile)',
    registers: [registry],
    async collect() {
      this.set((await ping(redis)) ? 1 : 0);
    },
  });
}

async function ping(redis: RedisClient): Promise<boolean> {
  if (redis.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
  });
  try {
    return await Promise.race([redis.ping().then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
