'use strict';
/**
 * The fair peer (issue 15): the BFF a capable team assembles from popular middleware in an afternoon, with the
 * same sale route as tokengate against the same sandbox:
 *   express + express-jwt (HS256, issuer, audience)         authentication
 *   express-idempotency + its Redis adapter                  Idempotency-Key: a stored answer is replayed
 *   rate-limiter-flexible RateLimiterRedis + RateLimiterQueue  the gateway's N per minute across processes
 *   ioredis                                                  the cardref cache (GET, SET EX)
 *   undici                                                   the same signed gateway call as tokengate's
 * It does what such a service usually does: binds the token's custkey to the customer, reads the card
 * reference token once and caches it, queues for the budget, and on a gateway failure tells the idempotency
 * middleware (reportError) so the client may retry. It guarantees nothing more than its parts do.
 * Env: PORT, BASE_URL (…/api/<key>/), REDIS_URL, KEY_PREFIX, GATEWAY_API_KEY, GATEWAY_API_PIN, JWT_SECRET,
 * JWT_ISSUER, JWT_AUDIENCE, RATE_PER_WINDOW, WINDOW_MS, TIMEOUT_MS.
 */
const http = require('node:http');
const crypto = require('node:crypto');
const express = require('express');
const { expressjwt } = require('express-jwt');
const { idempotency, getSharedIdempotencyService } = require('express-idempotency');
const RedisAdapter = require('express-idempotency-redis-adapter').default;
const Redis = require('ioredis');
const { RateLimiterRedis, RateLimiterQueue } = require('rate-limiter-flexible');
const { Agent, request } = require('undici');
const { authorizationHeader } = require('../dist/gateway/signer');

const env = process.env;
const port = Number(env.PORT);
const base = env.BASE_URL;
const timeoutMs = Number(env.TIMEOUT_MS ?? 10_000);
const redis = new Redis(env.REDIS_URL, { enableAutoPipelining: true });
const prefix = env.KEY_PREFIX ?? 'peer';
const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:rl`, points: Number(env.RATE_PER_WINDOW ?? 45), duration: Number(env.WINDOW_MS ?? 60_000) / 1000 });
const queue = new RateLimiterQueue(limiter, { maxQueueSize: 10_000 });
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
const adapter = new RedisAdapter({ connectionConfig: { url: env.REDIS_URL }, ttl: 86_400 });

const sign = () => ({ authorization: authorizationHeader(env.GATEWAY_API_KEY, crypto.randomBytes(8).toString('hex'), env.GATEWAY_API_PIN), 'content-type': 'application/json' });

async function gateway(method, path, body) {
  const res = await request(`${base}${path}`, { method, headers: sign(), body: body && JSON.stringify(body), dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  return { status: res.statusCode, body: await res.body.json() };
}

async function cardref(customer, pm) {
  const key = `${prefix}:cardref:${customer}:${pm}`;
  const cached = await redis.get(key);
  if (cached) return cached;
  await queue.removeTokens(1);
  const res = await gateway('GET', `customers/${encodeURIComponent(customer)}/payment_methods/${encodeURIComponent(pm)}/cardref`);
  if (res.status !== 200) throw Object.assign(new Error('cardref'), { status: 502 });
  await redis.set(key, res.body.cardref, 'EX', 3600);
  return res.body.cardref;
}

const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '16kb' }));
app.use(expressjwt({ secret: env.JWT_SECRET, algorithms: ['HS256'], issuer: env.JWT_ISSUER, audience: env.JWT_AUDIENCE }));
app.post('/v1/sales', idempotency({ dataAdapter: adapter }), async (req, res) => {
  const service = getSharedIdempotencyService();
  if (service.isHit(req)) return;
  const { customer, payment_method: pm, amount, invoice } = req.body ?? {};
  if (typeof customer !== 'string' || typeof pm !== 'string' || typeof amount !== 'string') {
    service.reportError(req);
    return res.status(400).json({ error: { code: 'invalid_request' } });
  }
  if (req.auth.custkey && req.auth.custkey !== customer) {
    service.reportError(req);
    return res.status(404).json({ error: { code: 'not_found' } });
  }
  try {
    const ref = await cardref(customer, pm);
    await queue.removeTokens(1);
    const sale = await gateway('POST', 'transactions', { command: 'cc:sale', amount, UMCardRef: ref, custkey: customer, ...(invoice ? { invoice } : {}) });
    if (sale.status !== 200) {
      service.reportError(req);
      return res.status(502).json({ error: { code: 'gateway_error' } });
    }
    const tx = sale.body;
    if (tx.result_code === 'A' || tx.result_code === 'P') return res.status(201).json(tx);
    if (tx.result_code === 'D') return res.status(402).json({ error: { code: 'card_declined', transaction: tx } });
    service.reportError(req);
    return res.status(502).json({ error: { code: 'gateway_error' } });
  } catch (err) {
    // A timeout or a reset: the usual reaction, free the key so the client can retry.
    service.reportError(req);
    return res.status(err.status ?? 504).json({ error: { code: err.status ? 'gateway_error' : 'gateway_timeout' } });
  }
});
app.use((err, _req, res, _next) => res.status(err.status ?? 500).json({ error: { code: err.code ?? 'error' } }));

adapter.connect().then(() => {
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1', () => console.log(`peer bff on http://127.0.0.1:${port}`));
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
