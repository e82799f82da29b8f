import net from 'node:net';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { TEST_JWT_ENV, TEST_JWT_SECRET, token } from '../support/bff';
import { redisUrl, uniquePrefix } from '../support/redis';
import { runServiceToExit, startServiceProcess } from '../support/service-process';

/**
 * Boot failures of `node dist/main.js` in production: a bad configuration stops it before anything starts,
 * one line per problem, naming the setting and never its value; so does a port that is taken once Redis and
 * the gateway are set up.
 */
const API_KEY = 'startup-key-0123456789abcdef';
const API_PIN = '975310';

const run = runServiceToExit;

describe('production start-up of node dist/main.js', () => {
  test('when every required setting is missing, then it exits non-zero with one line naming each', async () => {
    const { code, out, err } = await run({ NODE_ENV: 'production' });
    expect(code).not.toBe(0);
    expect(out).toBe('');
    const lines = err.trim().split('\n');
    expect(lines.every((l) => l.startsWith('tokengate: config: '))).toBe(true);
    for (const name of ['GATEWAY_API_KEY', 'GATEWAY_API_PIN', 'JWT_ALGORITHMS', 'REDIS_URL', 'GATEWAY_BASE_URL', 'JWT_SECRET']) {
      expect(lines.filter((l) => l.includes(name)).length).toBeGreaterThanOrEqual(1);
    }
  });

  test('when settings are present but unsafe, then each is named and no value is printed', async () => {
    const shortSecret = 'short-jwt-secret-abcdefg'; // 24 chars: parses, but production wants 32
    const devPin = '123456';
    const { code, out, err } = await run({
      NODE_ENV: 'production',
      REDIS_URL: 'redis://:hunter2-redis-password@127.0.0.1:1',
      GATEWAY_BASE_URL: 'http://127.0.0.1:1/api/v2/',
      GATEWAY_API_KEY: API_KEY,
      GATEWAY_API_PIN: devPin,
      JWT_SECRET: shortSecret,
      JWT_ALGORITHMS: 'HS256',
    });
    expect(code).not.toBe(0);
    const lines = err.trim().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/GATEWAY_BASE_URL .*https/),
        expect.stringMatching(/GATEWAY_API_PIN .*development default/),
        expect.stringMatching(/JWT_SECRET .*32 characters/),
      ]),
    );
    expect(lines).toHaveLength(3);
    for (const value of [shortSecret, devPin, API_KEY, 'hunter2-redis-password']) expect(out + err).not.toContain(value);
  });

  test('when JWT_PUBLIC_KEY has a PEM header but does not parse, then one config line names it, never the key, and nothing starts', async () => {
    const key = '-----BEGIN PUBLIC KEY-----garbage-----END PUBLIC KEY-----';
    const { code, out, err } = await run({
      NODE_ENV: 'production',
      REDIS_URL: redisUrl(),
      GATEWAY_BASE_URL: 'https://gateway.example/api/v2/',
      GATEWAY_API_KEY: API_KEY,
      GATEWAY_API_PIN: API_PIN,
      JWT_ALGORITHMS: 'RS256',
      JWT_PUBLIC_KEY: key,
    });
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toBe('tokengate: config: JWT_PUBLIC_KEY (jwt.publicKey) is not a readable PEM public key\n');
    expect(err).not.toContain('garbage');
  });

  test('when production settings are given but invalid, then each is named once, never also as required', async () => {
    const pinFile = '/nonexistent/tokengate-pin';
    const { code, err } = await run({
      NODE_ENV: 'production',
      REDIS_URL: 'http://127.0.0.1:6379',
      GATEWAY_BASE_URL: 'gateway.example',
      GATEWAY_API_KEY: API_KEY,
      GATEWAY_API_PIN_FILE: pinFile,
      JWT_ALGORITHMS: 'RS256',
      JWT_JWKS_URL: 'http://idp.example.com/.well-known/jwks.json',
    });
    expect(code).toBe(1);
    expect(err.trim().split('\n').sort()).toEqual(
      [
        'tokengate: config: REDIS_URL (redis.url) must use redis: or rediss:',
        'tokengate: config: GATEWAY_BASE_URL (gateway.baseUrl) must be a URL',
        'tokengate: config: GATEWAY_API_PIN_FILE (gateway.apiPin): cannot read the file it names',
        'tokengate: config: JWT_JWKS_URL (jwt.jwksUrl) must use https: in production (http: only on a loopback host: 127.0.0.0/8, ::1, localhost)',
      ].sort(),
    );
  });

  /** Production settings that start, but for the one under test (the config is refused before any connection). */
  const fullProduction = {
    NODE_ENV: 'production',
    REDIS_URL: 'redis://127.0.0.1:1',
    GATEWAY_BASE_URL: 'https://gateway.example/api/v2/',
    GATEWAY_API_KEY: API_KEY,
    GATEWAY_API_PIN: API_PIN,
    ...TEST_JWT_ENV,
  };
  const loopbackOnly = 'http: only on a loopback host: 127.0.0.0/8, ::1, localhost';

  test('when PAYJS_URL is http on a host that is not loopback, then it exits 1 with one line saying to use https or unset it, never the URL', async () => {
    const { code, out, err } = await run({ ...fullProduction, PAYJS_URL: 'http://pay.shop.example/js/v2/pay.js' });
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toBe(`tokengate: config: PAYJS_URL (cards.payJsUrl) must use https: in production, or be unset to load Pay.js from the gateway's host (${loopbackOnly}): a card form's script fetched over http can be swapped in transit\n`);
  });

  test('when a CORS_ORIGINS entry is http on a host that is not loopback, then it exits 1 with one line naming which entry, never the origin', async () => {
    const { code, out, err } = await run({ ...fullProduction, CORS_ORIGINS: 'https://pay.shop.example,http://shop.example' });
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toBe(`tokengate: config: CORS_ORIGINS (http.corsOrigins) entry 2 must use https: in production, or be removed (${loopbackOnly}): a page served over http can be rewritten in transit to call the API with a shopper's token\n`);
  });

  test('when RECONCILE_DEADLINE_MS is shorter than the reconciler needs to prove a write absent, then it exits 1 with one line naming both settings and the minimum', async () => {
    // Issue 28: 20 s against the 120 s default RECONCILE_MAX_PROCESSING_MS started, and never-sent sales stayed 409.
    const { code, out, err } = await run({ ...fullProduction, RECONCILE_DEADLINE_MS: '20000' });
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toBe(
      'tokengate: config: RECONCILE_DEADLINE_MS (reconcile.deadlineMs) must be at least 126250, what the reconciler needs to prove a write absent ' +
        '(RECONCILE_MAX_PROCESSING_MS + 1.25 × RECONCILE_INTERVAL_MS + RECONCILE_RETRY_MS): raise RECONCILE_DEADLINE_MS; ' +
        'lower RECONCILE_MAX_PROCESSING_MS only if the gateway records every write sooner than that\n',
    );
  });

  describe('after boot', () => {
    let sandbox: RunningSandbox;
    let blocker: net.Server;
    let takenPort: number;
    beforeAll(async () => {
      sandbox = await startSandbox({ port: 0, settings: { apiKey: API_KEY, apiPin: API_PIN } });
      blocker = net.createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      takenPort = (blocker.address() as net.AddressInfo).port;
    });
    afterAll(async () => {
      await new Promise((r) => blocker.close(r));
      await sandbox.close();
    });

    /** Without ports, startServiceProcess picks free ones. */
    const bootEnv = (ports: { PORT: string; ADMIN_PORT: string } | Record<string, never> = {}) => ({
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      ...ports,
      GATEWAY_ALLOW_INSECURE: 'true',
      GATEWAY_BASE_URL: sandbox.baseUrl,
      GATEWAY_API_KEY: API_KEY,
      GATEWAY_API_PIN: API_PIN,
      REDIS_URL: redisUrl(),
      REDIS_KEY_PREFIX: uniquePrefix('boot').replace(/[^A-Za-z0-9:_-]/g, '_'),
      ...TEST_JWT_ENV,
    });

    test('when the API port is taken, then it exits 1 with one line naming PORT and the port, no stack, no secret', async () => {
      const { code, out, err } = await run(bootEnv({ PORT: String(takenPort), ADMIN_PORT: '0' }));
      expect(code).toBe(1);
      expect(err).toBe(`tokengate: PORT ${takenPort} is already in use\n`);
      expect(out + err).not.toMatch(/unhandled rejection|EADDRINUSE|\n\s+at /);
      for (const secret of [API_KEY, API_PIN, TEST_JWT_SECRET]) expect(out + err).not.toContain(secret);
    });

    test('when the admin port is taken, then it exits 1 with one line naming ADMIN_PORT and the port', async () => {
      const { code, out, err } = await run(bootEnv({ PORT: '0', ADMIN_PORT: String(takenPort) }));
      expect(code).toBe(1);
      expect(err).toBe(`tokengate: ADMIN_PORT ${takenPort} is already in use\n`);
      expect(out).not.toMatch(/unhandled rejection|EADDRINUSE/);
    });

    test('when PAYJS_URL and CORS_ORIGINS are http on loopback hosts, then production starts and serves them', async () => {
      const payJsUrl = 'http://127.0.0.1:8081/js/v2/pay.js';
      const service = await startServiceProcess({
        ...bootEnv(),
        PAYJS_URL: payJsUrl,
        CORS_ORIGINS: 'https://shop.example,http://localhost:3000,http://[::1]:5173,http://127.0.0.2:8080',
      });
      try {
        const headers = { authorization: `Bearer ${token({ sub: 'startup-loopback', scope: 'sales:create' })}`, origin: 'http://localhost:3000' };
        const res = await fetch(`${service.url}/v1/payment-config`, { headers });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { pay_js_url?: string }).pay_js_url).toBe(payJsUrl);
        expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
      } finally {
        await service.stop();
      }
    });
  });
});

describe('development start-up of node dist/main.js with settings production refuses', () => {
  test('when RECONCILE_DEADLINE_MS cannot be kept, then it starts and warns once with the line production would refuse with', async () => {
    const service = await startServiceProcess({ NODE_ENV: 'development', RECONCILE_DEADLINE_MS: '20000' });
    try {
      const warnings = service.output().split('\n').filter((l) => l.includes('RECONCILE_DEADLINE_MS'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('warn');
      expect(warnings[0]).toContain('config: RECONCILE_DEADLINE_MS (reconcile.deadlineMs) must be at least 126250');
      expect(warnings[0]).toContain('RECONCILE_MAX_PROCESSING_MS');
    } finally {
      await service.stop();
    }
  });
});
