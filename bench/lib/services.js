'use strict';
/** Starting what the benchmark measures, each as its own process on 127.0.0.1. */
const crypto = require('node:crypto');
const path = require('node:path');
const jwt = require('jsonwebtoken');
const Redis = require('ioredis');
const { ROOT, freePort, start, waitFor } = require('./procs');
const { imageNodeArgsOf } = require('./image');

const NODE = process.execPath;
const BASE_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };

/** Credentials made up per run (production mode refuses the documented development defaults). */
function makeCredentials() {
  return {
    apiKey: `bench_${crypto.randomBytes(12).toString('hex')}`,
    apiPin: crypto.randomBytes(4).toString('hex'),
    jwtSecret: crypto.randomBytes(32).toString('hex'),
    issuer: 'tokengate-bench',
    audience: 'tokengate',
  };
}

/** A dedicated redis-server on a free loopback port, no persistence: the bench's Redis counters are ours alone. */
async function startRedis() {
  const port = await freePort();
  const proc = start('redis', 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--loglevel', 'warning'], BASE_ENV);
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  client.on('error', () => undefined); // refused until redis-server listens; waitFor retries
  await waitFor(async () => {
    if (client.status !== 'ready') await client.connect().catch(() => undefined);
    return (await client.ping()) === 'PONG';
  }, 10_000, 'redis-server', proc);
  return { url, port, proc, client };
}

/** `node dist/sandbox/main.js` with SANDBOX_* variables; admin routes over HTTP. */
async function startSandboxProcess(creds, settings = {}) {
  const port = await freePort();
  const env = {
    ...BASE_ENV,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    SANDBOX_HOST: '127.0.0.1',
    SANDBOX_PORT: String(port),
    SANDBOX_API_KEY: creds.apiKey,
    SANDBOX_API_PIN: creds.apiPin,
    SANDBOX_RATE_PER_MINUTE: String(settings.ratePerMinute ?? 1_000_000),
    SANDBOX_RATE_PER_DAY: String(settings.ratePerDay ?? 100_000_000),
    SANDBOX_RATE_MODE: settings.rateMode ?? 'fixed',
    SANDBOX_LATENCY_MS: '0',
    SANDBOX_JITTER_MS: '0',
  };
  const proc = start('sandbox', NODE, [path.join(ROOT, 'dist', 'sandbox', 'main.js')], env);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/ping`)).status === 200, 15_000, 'sandbox', proc);
  const admin = async (method, route, body) => {
    const res = await fetch(`${url}/_sandbox/${route}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`sandbox ${method} ${route}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return {
    url,
    port,
    baseUrl: `${url}/api/v2/`,
    proc,
    stats: () => admin('GET', 'stats'),
    transactions: () => admin('GET', 'transactions'),
    update: (s) => admin('POST', 'settings', s),
    reset: () => admin('POST', 'reset'),
    fixtures: () => admin('GET', 'fixtures'),
    fault: (f) => admin('POST', 'faults', f),
    settings: () => admin('GET', 'settings'),
    clearFaults: () => fetch(`${url}/_sandbox/faults`, { method: 'DELETE' }),
    /** What a merchant's console puts in the open batch (settlements: src/sandbox/console.ts). */
    console: (entry) => admin('POST', 'batches/current/console', entry),
    closeBatch: () => admin('POST', 'batches/close'),
  };
}

/** `node dist/main.js` (of `root`, this checkout by default), with the image's node flags, in production mode against the sandbox and the bench Redis; waits for /readyz. */
async function startTokengate(name, creds, { redisUrl, keyPrefix, gatewayBaseUrl, extraEnv = {}, nodeArgs = [], root = ROOT }) {
  const port = await freePort();
  const adminPort = await freePort();
  const env = {
    ...BASE_ENV,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    // warn: per-request info logs are not what we measure (production may log at info; see the summary).
    LOG_LEVEL: 'warn',
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: keyPrefix,
    GATEWAY_BASE_URL: gatewayBaseUrl,
    GATEWAY_ALLOW_INSECURE: 'true',
    GATEWAY_API_KEY: creds.apiKey,
    GATEWAY_API_PIN: creds.apiPin,
    GATEWAY_TIMEOUT_MS: '10000',
    JWT_SECRET: creds.jwtSecret,
    JWT_ISSUER: creds.issuer,
    JWT_AUDIENCE: creds.audience,
    JWT_ALGORITHMS: 'HS256',
    ...extraEnv,
  };
  const proc = start(name, NODE, [...imageNodeArgsOf(root), ...nodeArgs, path.join(root, 'dist', 'main.js')], env);
  const url = `http://127.0.0.1:${port}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  await waitFor(async () => (await fetch(`${adminUrl}/readyz`)).status === 200, 20_000, name, proc);
  return { url, adminUrl, proc };
}

async function startNaiveProxy(target, gatewayAuth) {
  const port = await freePort();
  const proc = start('naive-proxy', NODE, [path.join(ROOT, 'bench', 'naive-proxy.js')], { ...BASE_ENV, NODE_ENV: 'production', PORT: String(port), TARGET: target, GATEWAY_AUTH: gatewayAuth });
  const url = `http://127.0.0.1:${port}`;
  // Any HTTP answer means it listens (GET / is a 404 of Express).
  await waitFor(async () => (await fetch(`${url}/`)).status > 0, 10_000, 'naive proxy', proc);
  return { url, proc };
}

/** The floor of a BFF that reads the body (bench/reading-proxy.js), calling the gateway with a fixed signed header and cardref. */
async function startReadingProxy(target, gatewayAuth, cardref) {
  const port = await freePort();
  const proc = start('reading-proxy', NODE, [path.join(ROOT, 'bench', 'reading-proxy.js')], {
    ...BASE_ENV, NODE_ENV: 'production', PORT: String(port), TARGET: target, GATEWAY_AUTH: gatewayAuth, CARDREF: cardref,
  });
  const url = `http://127.0.0.1:${port}`;
  // Any HTTP answer means it listens (GET / is a 404 of Express).
  await waitFor(async () => (await fetch(`${url}/`)).status > 0, 10_000, 'reading proxy', proc);
  return { url, proc };
}

/** The fair peer (bench/peer-bff.js) with its own Redis prefix and budget; BASE_URL names its endpoint key. */
async function startPeer(creds, { redisUrl, keyPrefix, baseUrl, ratePerWindow = 1_000_000, windowMs = 60_000, timeoutMs = 10_000 }) {
  const port = await freePort();
  const proc = start('peer-bff', NODE, [path.join(ROOT, 'bench', 'peer-bff.js')], {
    ...BASE_ENV,
    NODE_ENV: 'production',
    PORT: String(port),
    BASE_URL: baseUrl,
    REDIS_URL: redisUrl,
    KEY_PREFIX: keyPrefix,
    GATEWAY_API_KEY: creds.apiKey,
    GATEWAY_API_PIN: creds.apiPin,
    JWT_SECRET: creds.jwtSecret,
    JWT_ISSUER: creds.issuer,
    JWT_AUDIENCE: creds.audience,
    RATE_PER_WINDOW: String(ratePerWindow),
    WINDOW_MS: String(windowMs),
    TIMEOUT_MS: String(timeoutMs),
  });
  const url = `http://127.0.0.1:${port}`;
  // Any HTTP answer means it listens (GET / is a 401 of express-jwt).
  await waitFor(async () => (await fetch(`${url}/`)).status > 0, 10_000, 'peer bff', proc);
  return { url, proc };
}

function mintJwt(creds, claims) {
  return jwt.sign(claims, creds.jwtSecret, { algorithm: 'HS256', expiresIn: 3600, issuer: creds.issuer, audience: creds.audience });
}

/** Sum of a Prometheus counter's samples whose labels include every given label. */
function sumMetric(text, name, labels = {}) {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(\{([^}]*)\})?\s+([0-9.eE+-]+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[3] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[4]);
  }
  return sum;
}

module.exports = { makeCredentials, startRedis, startSandboxProcess, startTokengate, startNaiveProxy, startReadingProxy, startPeer, mintJwt, sumMetric };
