'use strict';
/**
 * One of 3 processes sharing one Redis in the budget comparison (issue 4, item 7). Forked by bench/budget.js.
 * Env: KIND (tokengate | ratelimiter_flexible | token_bucket), REDIS_URL, KEY_PREFIX, BASE_URL (sandbox
 * /api/<endpoint key>/), LIMIT_N, WINDOW_MS, MARGIN_MS, GATEWAY_API_KEY, GATEWAY_API_PIN, CARDREF, WORKER.
 * Protocol (IPC): parent sends {go: epochMs, offsets: [ms...]}; the worker makes one sale per offset
 * (arriving at go + offset), each through its scheduler, then sends {done: calls} and waits to be stopped.
 * Every upstream call is the same real `cc:sale` through tokengate's gateway client, so only the scheduler differs.
 */
const { performance } = require('node:perf_hooks');
const Redis = require('ioredis');
const { RateLimiterRedis, RateLimiterQueue } = require('rate-limiter-flexible');
const { createGatewayClient } = require('../dist/gateway/client');
const { Secret } = require('../dist/config/secret');
const { silentLogger } = require('../dist/observability/logger');
const { createRedisScheduler } = require('../dist/limiter');
const { endpointKeyOf } = require('../dist/limiter/settings');
const { createTokenBucket } = require('./lib/token-bucket');

const env = process.env;
const KIND = env.KIND;
const N = Number(env.LIMIT_N);
const W = Number(env.WINDOW_MS);
const MARGIN = Number(env.MARGIN_MS);
const now = () => performance.timeOrigin + performance.now(); // epoch ms, comparable across processes

const logger = silentLogger();
const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: 2, lazyConnect: false });
const gateway = createGatewayClient({
  baseUrl: env.BASE_URL,
  apiKey: new Secret(env.GATEWAY_API_KEY),
  apiPin: new Secret(env.GATEWAY_API_PIN),
  timeoutMs: 10_000,
  connectTimeoutMs: 2_000,
  maxResponseBytes: 1 << 20,
  cardRefField: 'UMCardRef',
  logger,
});

/** Each scheduler as `run(call)`: waits for its permission, then calls; `onStart` marks the start. */
function makeScheduler() {
  if (KIND === 'tokengate') {
    // tokengate's own scheduler, as compose.ts builds it (sales class, no read reservation needed here).
    const budget = createRedisScheduler({
      endpointKey: endpointKeyOf(env.BASE_URL),
      limits: { perWindow: N, windowMs: W, perDay: 1_000_000, dayWindowMs: 86_400_000, marginMs: MARGIN },
      classes: { saleMaxWaitMs: 120_000, readMaxWaitMs: 10_000, saleReservedSlots: 0 },
      logger,
      redis,
      keyPrefix: env.KEY_PREFIX,
      expectedReplicas: 3,
    });
    return { run: (call) => budget.run('sale', call), close: () => budget.close() };
  }
  if (KIND === 'ratelimiter_flexible') {
    // As its README/wiki suggest for "N per minute" across servers: RateLimiterRedis {points: N, duration: the
    // window in seconds} shared by all processes, wrapped in RateLimiterQueue to wait instead of failing.
    const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: env.KEY_PREFIX, points: N, duration: W / 1000 });
    const queue = new RateLimiterQueue(limiter, { maxQueueSize: 10_000 });
    return {
      run: async (call) => {
        await queue.removeTokens(1);
        return call();
      },
      close: async () => undefined,
    };
  }
  if (KIND === 'token_bucket') {
    // A plain token bucket in Redis: capacity N, refilling N per window, FIFO per process.
    const bucket = createTokenBucket({ redis, key: `${env.KEY_PREFIX}:bucket`, capacity: N, refillPerMs: N / W });
    return {
      run: async (call) => {
        await bucket.take();
        return call();
      },
      close: async () => bucket.close(),
    };
  }
  throw new Error(`unknown KIND ${KIND}`);
}

const scheduler = makeScheduler();

async function oneCall(i, arrivedAt) {
  const rec = { worker: Number(env.WORKER), i, arrivedAt, startedAt: NaN, endedAt: NaN, status: 0, outcome: '' };
  try {
    await scheduler.run(async () => {
      // A re-queued tokengate call (after a 429/155) starts again: the latest start is the one that counts.
      rec.startedAt = now();
      return gateway.sale({ cardref: env.CARDREF, amount: '1.00', invoice: `b${env.WORKER}-${i}` });
    });
    rec.status = 200;
    rec.outcome = 'ok';
  } catch (err) {
    rec.status = typeof err?.status === 'number' ? err.status : 0;
    rec.outcome = err?.code ?? err?.name ?? 'error';
  }
  rec.endedAt = now();
  return rec;
}

process.on('message', (msg) => {
  if (!msg || typeof msg.go !== 'number') return;
  const calls = msg.offsets.map(
    (offset, i) =>
      new Promise((resolve) => {
        setTimeout(() => resolve(oneCall(i, now())), Math.max(0, msg.go + offset - now()));
      }),
  );
  Promise.all(calls).then(async (records) => {
    await scheduler.close().catch(() => undefined);
    gateway.close();
    await redis.quit().catch(() => redis.disconnect());
    process.send({ done: records }, () => process.exit(0));
  });
});
process.send({ ready: true });
process.once('SIGTERM', () => process.exit(0));
