import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, DEFAULT_CONFIG_DIR, configWarnings, loadConfig } from '../../src/config';

const prodEnv = {
  NODE_ENV: 'production',
  REDIS_URL: 'redis://redis:6379',
  GATEWAY_BASE_URL: 'https://gateway.example/api/v2/',
  GATEWAY_API_KEY: 'live_key_0123456789',
  GATEWAY_API_PIN: '8y3-pin',
  JWT_ALGORITHMS: 'HS256',
  JWT_SECRET: 'x'.repeat(40),
};

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('when nothing is set, then development defaults load, frozen', () => {
    const c = loadConfig({ env: {} });
    expect(c.env).toBe('development');
    expect(c.port).toBe(8080);
    expect(c.gateway.ratePerMinute).toBe(45);
    expect(c.gateway.cardRefField).toBe('UMCardRef');
    expect(c.jwt.algorithms).toEqual(['HS256']);
    expect(c.gateway.baseUrl).toBeUndefined();
    expect(Object.isFrozen(c.gateway)).toBe(true);
    expect(JSON.stringify(c)).not.toContain('123456');
  });

  it('when the environment sets values, then they override the files', () => {
    const c = loadConfig({ env: { PORT: '7000', GATEWAY_FAILOVER_HOSTS: 'a.example, b.example:8443', GATEWAY_DUPLICATE_FOLDING: 'true' } });
    expect(c.port).toBe(7000);
    expect(c.gateway.failoverHosts).toEqual(['a.example', 'b.example:8443']);
    expect(c.gateway.duplicateFolding).toBe(true);
  });

  it('when a value is bad, then the error names the variable and never echoes the value', () => {
    const problems = problemsOf(() => loadConfig({ env: { PORT: 'eighty', GATEWAY_TIMEOUT_MS: '-5', JWT_CLOCK_TOLERANCE_SEC: '300', GATEWAY_API_PIN: '' , GATEWAY_CARDREF_FIELD: 'magic-secret-value' } }));
    expect(problems.join('\n')).toMatch(/PORT \(port\)/);
    expect(problems.join('\n')).toMatch(/GATEWAY_TIMEOUT_MS/);
    expect(problems.join('\n')).toMatch(/JWT_CLOCK_TOLERANCE_SEC/);
    expect(problems.join('\n')).toMatch(/GATEWAY_CARDREF_FIELD/);
    expect(problems.join('\n')).not.toContain('magic-secret-value');
  });

  it('when production lacks every required setting, then each is named', () => {
    const problems = problemsOf(() => loadConfig({ env: { NODE_ENV: 'production' } })).join('\n');
    for (const name of ['GATEWAY_API_KEY', 'GATEWAY_API_PIN', 'JWT_ALGORITHMS', 'REDIS_URL', 'GATEWAY_BASE_URL']) expect(problems).toContain(name);
  });

  it('when production is fully configured, then it loads', () => {
    const c = loadConfig({ env: prodEnv });
    expect(c.env).toBe('production');
    expect(c.gateway.apiPin.reveal()).toBe('8y3-pin');
  });

  it('when production uses a development default or plain http, then it refuses', () => {
    const problems = problemsOf(() => loadConfig({ env: { ...prodEnv, GATEWAY_API_PIN: '123456', GATEWAY_BASE_URL: 'http://gw.local/api/v2/', JWT_SECRET: 'tokengate-dev-secret-do-not-use-in-production' } })).join('\n');
    expect(problems).toContain('GATEWAY_API_PIN (gateway.apiPin) is the development default');
    expect(problems).toContain('must use https:');
    expect(problems).toContain('JWT_SECRET (jwt.secret) is the development default');
    expect(loadConfig({ env: { ...prodEnv, GATEWAY_BASE_URL: 'http://127.0.0.1:1/api/v2/', GATEWAY_ALLOW_INSECURE: 'true' } }).gateway.baseUrl).toContain('http:');
  });

  it('when production has a missing setting and a bad one across settings, then one start names both, each once', () => {
    const { JWT_SECRET: _secret, ...noJwtKey } = prodEnv;
    const problems = problemsOf(() => loadConfig({ env: { ...noJwtKey, GATEWAY_BASE_URL: 'http://gw.example/api/v2/', GATEWAY_API_PIN: '123456' } }));
    expect(problems).toEqual([
      'JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL is required in production',
      'GATEWAY_BASE_URL (gateway.baseUrl) must use https: in production (GATEWAY_ALLOW_INSECURE=true for loopback tests only)',
      'GATEWAY_API_PIN (gateway.apiPin) is the development default',
    ]);
    // A value that does not parse is named with the checks that do not depend on it.
    const mixed = problemsOf(() => loadConfig({ env: { ...prodEnv, GATEWAY_RATE_PER_MINUTE: 'many', GATEWAY_BASE_URL: 'http://gw.example/api/v2/' } })).join('\n');
    expect(mixed).toMatch(/GATEWAY_RATE_PER_MINUTE/);
    expect(mixed).toContain('must use https:');
  });

  describe('JWT_PUBLIC_KEY', () => {
    const { JWT_SECRET: _secret, ...noSecret } = prodEnv;
    const pem = (key: ReturnType<typeof generateKeyPairSync>['publicKey']) => key.export({ type: 'spki', format: 'pem' }).toString();
    const rsa = pem(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey);
    const ec256 = pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey);
    const withKey = (key: string, algorithms: string) => ({ ...noSecret, JWT_ALGORITHMS: algorithms, JWT_PUBLIC_KEY: key });

    it('when the key has a PEM header but a body that does not parse, then one line names it and never prints it', () => {
      const garbage = '-----BEGIN PUBLIC KEY-----garbage-----END PUBLIC KEY-----';
      const problems = problemsOf(() => loadConfig({ env: withKey(garbage, 'RS256') }));
      expect(problems).toEqual(['JWT_PUBLIC_KEY (jwt.publicKey) is not a readable PEM public key']);
      expect(problems.join('\n')).not.toContain('garbage');
    });

    it('when a key of one family meets an allow-list of the other, then one line names the key and the algorithms', () => {
      expect(problemsOf(() => loadConfig({ env: withKey(ec256, 'RS256') }))).toEqual(['JWT_PUBLIC_KEY (jwt.publicKey) is an EC P-256 key: it cannot verify JWT_ALGORITHMS (RS256)']);
      expect(problemsOf(() => loadConfig({ env: withKey(rsa, 'ES256') }))).toEqual(['JWT_PUBLIC_KEY (jwt.publicKey) is an RSA key: it cannot verify JWT_ALGORITHMS (ES256)']);
      // ES384 needs P-384: a P-256 key can never verify it either.
      expect(problemsOf(() => loadConfig({ env: withKey(ec256, 'ES384') })).join('\n')).toContain('is an EC P-256 key');
    });

    it('when the key fits an algorithm of the list, then it loads', () => {
      expect(loadConfig({ env: withKey(rsa, 'RS256') }).jwt.publicKey).toBe(rsa);
      expect(loadConfig({ env: withKey(rsa, 'PS256,RS512') }).jwt.algorithms).toEqual(['PS256', 'RS512']);
      expect(loadConfig({ env: withKey(ec256, 'ES256') }).jwt.publicKey).toBe(ec256);
    });

    it('when the value is a private key, then it is refused without printing it', () => {
      const priv = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const problems = problemsOf(() => loadConfig({ env: withKey(priv + ec256, 'ES256') }));
      expect(problems).toEqual(['JWT_PUBLIC_KEY (jwt.publicKey) holds a private key: give the public key only']);
    });
  });

  describe('one line per setting', () => {
    it('when a production setting is given but invalid, then it is named once, not also as required', () => {
      const { JWT_SECRET: _secret, REDIS_URL: _redis, ...rest } = prodEnv;
      const cases: [Record<string, string>, string][] = [
        [{ ...prodEnv, GATEWAY_BASE_URL: 'not a url' }, 'GATEWAY_BASE_URL (gateway.baseUrl) must be a URL'],
        [{ ...prodEnv, REDIS_URL: 'http://redis:6379' }, 'REDIS_URL (redis.url) must use redis: or rediss:'],
        [{ ...rest, JWT_SECRET: 'x'.repeat(40), REDIS_CLUSTER_NODES: 'a b,c' }, 'REDIS_CLUSTER_NODES (redis.clusterNodes) has an invalid format'],
        [{ ...prodEnv, JWT_SECRET: 'too-short' }, 'JWT_SECRET (jwt.secret) must be at least 16 characters'],
        [{ ...prodEnv, JWT_SECRET: '', JWT_ALGORITHMS: 'RS256', JWT_JWKS_URL: 'ftp://idp.example/jwks' }, 'JWT_JWKS_URL (jwt.jwksUrl) must use https: or http:'],
        [{ ...prodEnv, JWT_SECRET: '', JWT_ALGORITHMS: 'RS256', JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----AAAA-----END PUBLIC KEY-----' }, 'JWT_PUBLIC_KEY (jwt.publicKey) is not a readable PEM public key'],
      ];
      for (const [env, line] of cases) expect(problemsOf(() => loadConfig({ env }))).toEqual([line]);
    });

    it('when a *_FILE cannot be read, then that line alone names the setting', () => {
      const problems = problemsOf(() => loadConfig({ env: { ...prodEnv, GATEWAY_API_PIN: undefined, GATEWAY_API_PIN_FILE: '/nonexistent/tokengate-pin' } }));
      expect(problems).toEqual(['GATEWAY_API_PIN_FILE (gateway.apiPin): cannot read the file it names']);
      const both = problemsOf(() => loadConfig({ env: { ...prodEnv, GATEWAY_API_PIN_FILE: '/nonexistent/tokengate-pin' } }));
      expect(both).toEqual(['GATEWAY_API_PIN and GATEWAY_API_PIN_FILE are both set: keep one']);
    });

    it('when development has an invalid JWT_SECRET, then it is not also named as required for HS*', () => {
      expect(problemsOf(() => loadConfig({ env: { JWT_SECRET: 'too-short' } }))).toEqual(['JWT_SECRET (jwt.secret) must be at least 16 characters']);
    });
  });

  describe('plain http in production', () => {
    const { JWT_SECRET: _secret, ...noSecret } = prodEnv;
    const jwks = (url: string) => ({ ...noSecret, JWT_ALGORITHMS: 'RS256', JWT_JWKS_URL: url });
    const refusal = 'JWT_JWKS_URL (jwt.jwksUrl) must use https: in production (http: only on a loopback host: 127.0.0.0/8, ::1, localhost)';

    it('when JWT_JWKS_URL is http on a non-loopback host, then it refuses with one line', () => {
      expect(problemsOf(() => loadConfig({ env: jwks('http://idp.example.com/.well-known/jwks.json') }))).toEqual([refusal]);
      expect(problemsOf(() => loadConfig({ env: jwks('HTTP://10.0.0.7/jwks') }))).toEqual([refusal]);
      // GATEWAY_ALLOW_INSECURE is the gateway's: it never lets a JWKS in over http.
      expect(problemsOf(() => loadConfig({ env: { ...jwks('http://idp.example.com/jwks'), GATEWAY_ALLOW_INSECURE: 'true' } }))).toEqual([refusal]);
    });

    it('when JWT_JWKS_URL is https, or http on a loopback host, then it loads', () => {
      for (const url of ['https://idp.example.com/jwks', 'http://127.0.0.1:4000/jwks', 'http://127.1.2.3/jwks', 'http://[::1]:4000/jwks', 'http://localhost:4000/jwks']) {
        expect(loadConfig({ env: jwks(url) }).jwt.jwksUrl).toBe(url);
      }
    });

    it('when JWT_JWKS_URL is http in development, then it loads (the rule is production\'s)', () => {
      expect(loadConfig({ env: { JWT_ALGORITHMS: 'RS256', JWT_SECRET: '', JWT_JWKS_URL: 'http://idp.example.com/jwks' } }).jwt.jwksUrl).toContain('http:');
    });

    it('when GATEWAY_BASE_URL spells its scheme in capitals, then http is still refused without GATEWAY_ALLOW_INSECURE', () => {
      expect(problemsOf(() => loadConfig({ env: { ...prodEnv, GATEWAY_BASE_URL: 'HTTP://gw.example/api/v2/' } })).join('\n')).toContain('GATEWAY_BASE_URL (gateway.baseUrl) must use https: in production');
    });

    const payJsRefusal = "PAYJS_URL (cards.payJsUrl) must use https: in production, or be unset to load Pay.js from the gateway's host (http: only on a loopback host: 127.0.0.0/8, ::1, localhost): a card form's script fetched over http can be swapped in transit";
    const corsRefusal = (which: string) => `CORS_ORIGINS (http.corsOrigins) ${which} must use https: in production, or be removed (http: only on a loopback host: 127.0.0.0/8, ::1, localhost): a page served over http can be rewritten in transit to call the API with a shopper's token`;

    it('when PAYJS_URL is http on a non-loopback host, then it refuses with one line that never prints the URL', () => {
      for (const url of ['http://pay.example/js/v2/pay.js', 'HTTP://10.0.0.7/js/v2/pay.js', 'http://localhost.evil.example/pay.js']) {
        expect(problemsOf(() => loadConfig({ env: { ...prodEnv, PAYJS_URL: url } }))).toEqual([payJsRefusal]);
      }
      // GATEWAY_ALLOW_INSECURE is the gateway's: it never lets the card form's script in over http.
      expect(problemsOf(() => loadConfig({ env: { ...prodEnv, PAYJS_URL: 'http://pay.example/pay.js', GATEWAY_ALLOW_INSECURE: 'true' } }))).toEqual([payJsRefusal]);
    });

    it('when a CORS_ORIGINS entry is http on a non-loopback host, then one line names which entries, never their values', () => {
      expect(problemsOf(() => loadConfig({ env: { ...prodEnv, CORS_ORIGINS: 'http://shop.example' } }))).toEqual([corsRefusal('entry 1')]);
      const problems = problemsOf(() => loadConfig({ env: { ...prodEnv, CORS_ORIGINS: 'http://a.example,https://b.example,HTTP://c.example,http://localhost:3000,http://d.example' } }));
      expect(problems).toEqual([corsRefusal('entries 1, 3 and 5')]);
      expect(problems.join('\n')).not.toMatch(/[a-d]\.example/);
    });

    it('when PAYJS_URL and CORS_ORIGINS are https, or http on a loopback host, or PAYJS_URL is unset, then production loads', () => {
      for (const url of ['https://pay.example/js/v2/pay.js', 'http://127.0.0.1:8081/js/v2/pay.js', 'http://127.9.9.9/pay.js', 'http://[::1]:8081/pay.js', 'http://localhost:8081/pay.js']) {
        expect(loadConfig({ env: { ...prodEnv, PAYJS_URL: url } }).cards.payJsUrl).toBe(url);
      }
      const origins = ['https://shop.example', 'http://localhost:3000', 'http://127.0.0.1:5173', 'http://[::1]:8080'];
      expect(loadConfig({ env: { ...prodEnv, CORS_ORIGINS: origins.join(',') } }).http.corsOrigins).toEqual(origins);
      expect(loadConfig({ env: prodEnv }).cards.payJsUrl).toBeUndefined();
    });

    it('when PAYJS_URL and CORS_ORIGINS are http in development, then it loads (the rule is production\'s)', () => {
      const c = loadConfig({ env: { PAYJS_URL: 'http://pay.example/pay.js', CORS_ORIGINS: 'http://shop.example' } });
      expect(c.cards.payJsUrl).toBe('http://pay.example/pay.js');
      expect(c.http.corsOrigins).toEqual(['http://shop.example']);
    });
  });

  describe('REDIS_WRITE_REPLICAS (issue 28: a Sentinel failover lost claims)', () => {
    const { REDIS_URL: _url, ...noUrl } = prodEnv;
    it('when set with Sentinel, then it loads; when set with a Cluster, then one line refuses it', () => {
      const sentinel = loadConfig({ env: { ...noUrl, REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'm', REDIS_WRITE_REPLICAS: '1' } });
      expect(sentinel.redis).toMatchObject({ writeReplicas: 1, writeReplicasTimeoutMs: 500 });
      expect(loadConfig({ env: prodEnv }).redis.writeReplicas).toBe(0);
      expect(problemsOf(() => loadConfig({ env: { ...noUrl, REDIS_CLUSTER_NODES: 'n1:7000', REDIS_WRITE_REPLICAS: '1' } }))).toEqual([
        'REDIS_WRITE_REPLICAS (redis.writeReplicas) works with REDIS_URL or REDIS_SENTINELS, not REDIS_CLUSTER_NODES',
      ]);
    });
  });

  describe('RECONCILE_DEADLINE_MS against what the reconciler needs (issue 28)', () => {
    // Defaults: 120000 + 1.25 × 1000 + 5000.
    const refusal = (need: number) =>
      `RECONCILE_DEADLINE_MS (reconcile.deadlineMs) must be at least ${need}, what the reconciler needs to prove a write absent (RECONCILE_MAX_PROCESSING_MS + 1.25 × RECONCILE_INTERVAL_MS + RECONCILE_RETRY_MS): raise RECONCILE_DEADLINE_MS; lower RECONCILE_MAX_PROCESSING_MS only if the gateway records every write sooner than that`;

    it('when production has a deadline shorter than the proof of absence, then one line names both settings and the minimum', () => {
      expect(problemsOf(() => loadConfig({ env: { ...prodEnv, RECONCILE_DEADLINE_MS: '20000' } }))).toEqual([refusal(126_250)]);
      expect(problemsOf(() => loadConfig({ env: { ...prodEnv, RECONCILE_DEADLINE_MS: '126249' } }))).toEqual([refusal(126_250)]);
      // Every term counts: a longer processing time, a slower loop or a slower retry each raise the minimum.
      expect(problemsOf(() => loadConfig({ env: { ...prodEnv, RECONCILE_MAX_PROCESSING_MS: '600000' } }))).toEqual([refusal(606_250)]);
      expect(problemsOf(() => loadConfig({ env: { ...prodEnv, RECONCILE_INTERVAL_MS: '400000' } }))).toEqual([refusal(625_000)]);
      expect(problemsOf(() => loadConfig({ env: { ...prodEnv, RECONCILE_RETRY_MS: '480000' } }))).toEqual([refusal(601_250)]);
    });

    it('when the deadline covers the proof of absence, then production loads', () => {
      expect(loadConfig({ env: prodEnv }).reconcile.deadlineMs).toBe(600_000);
      expect(loadConfig({ env: { ...prodEnv, RECONCILE_DEADLINE_MS: '126250' } }).reconcile.deadlineMs).toBe(126_250);
      expect(loadConfig({ env: { ...prodEnv, RECONCILE_DEADLINE_MS: '20000', RECONCILE_MAX_PROCESSING_MS: '10000', RECONCILE_RETRY_MS: '5000' } }).reconcile.deadlineMs).toBe(20_000);
    });

    it('when development or test has a deadline that cannot be kept, then it loads and the same line is a warning', () => {
      for (const NODE_ENV of ['development', 'test']) {
        const c = loadConfig({ env: { NODE_ENV, RECONCILE_DEADLINE_MS: '20000' } });
        expect(configWarnings(c)).toEqual([refusal(126_250)]);
      }
      expect(configWarnings(loadConfig({ env: {} }))).toEqual([]);
      // The shrunk timings of the reconcile suites keep their deadline.
      expect(configWarnings(loadConfig({ env: { NODE_ENV: 'test', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '200', RECONCILE_MAX_PROCESSING_MS: '1500' } }))).toEqual([]);
    });
  });

  it('when production takes the gateway\'s webhooks without GATEWAY_MERCHANT_KEY, then it starts and warns that any merchant\'s signed event would apply (issue 36)', () => {
    const hooks = { ...prodEnv, GATEWAY_WEBHOOK_SECRET: 'signature-key-0123' };
    expect(configWarnings(loadConfig({ env: hooks }))).toEqual([expect.stringContaining('GATEWAY_MERCHANT_KEY')]);
    expect(configWarnings(loadConfig({ env: { ...hooks, GATEWAY_MERCHANT_KEY: '5qwnn5b51gnkd1b' } }))).toEqual([]);
    expect(configWarnings(loadConfig({ env: prodEnv }))).toEqual([]);
    expect(problemsOf(() => loadConfig({ env: { ...hooks, GATEWAY_MERCHANT_KEY: 'no spaces' } })).join('\n')).toContain('GATEWAY_MERCHANT_KEY');
  });

  it('when JWT algorithms mix HS and RS, then it refuses (key confusion)', () => {
    expect(problemsOf(() => loadConfig({ env: { ...prodEnv, JWT_ALGORITHMS: 'HS256,RS256' } })).join('\n')).toContain('must not mix');
  });

  it('when PORT and ADMIN_PORT are the same port, then it refuses with one line (0, any free port, may repeat)', () => {
    expect(problemsOf(() => loadConfig({ env: { PORT: '8080', ADMIN_PORT: '8080' } }))).toEqual(['ADMIN_PORT (adminPort) must differ from PORT']);
    expect(loadConfig({ env: { PORT: '0', ADMIN_PORT: '0' } }).adminPort).toBe(0);
  });

  it('when a secret comes from a *_FILE, then it is read from the file', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-cfg-'));
    writeFileSync(path.join(dir, 'pin'), 'file-pin\n');
    const c = loadConfig({ env: { ...prodEnv, GATEWAY_API_PIN: undefined, GATEWAY_API_PIN_FILE: path.join(dir, 'pin') } });
    expect(c.gateway.apiPin.reveal()).toBe('file-pin');
  });

  it('when a config file has an unknown key, then it is named', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-cfg-'));
    writeFileSync(path.join(dir, 'default.json'), JSON.stringify({ gateway: { timeoutMS: 5 } }));
    expect(problemsOf(() => loadConfig({ env: {}, dir })).join('\n')).toContain('config key "gateway.timeoutMS" is unknown');
  });

  it('when SANDBOX_WIRE_FORMAT is set, then spec (default) or wire is taken and anything else is named', () => {
    expect(loadConfig({ env: {} }).sandbox.wireFormat).toBe('spec');
    expect(loadConfig({ env: { SANDBOX_WIRE_FORMAT: 'wire' } }).sandbox.wireFormat).toBe('wire');
    expect(problemsOf(() => loadConfig({ env: { SANDBOX_WIRE_FORMAT: 'xml' } })).join('\n')).toContain('SANDBOX_WIRE_FORMAT');
  });

  it('when SANDBOX_DELETED_CARDREF is set, then refused (default) or honoured is taken and anything else is named', () => {
    expect(loadConfig({ env: {} }).sandbox.deletedCardref).toBe('refused');
    expect(loadConfig({ env: { SANDBOX_DELETED_CARDREF: 'honoured' } }).sandbox.deletedCardref).toBe('honoured');
    expect(problemsOf(() => loadConfig({ env: { SANDBOX_DELETED_CARDREF: 'sometimes' } })).join('\n')).toContain('SANDBOX_DELETED_CARDREF');
  });

  it('when the limiter\'s shares are set, then a share in (0, 1] is taken and anything else is named', () => {
    const limiter = loadConfig({ env: {} }).limiter;
    expect([limiter.readDayShare, limiter.backgroundDayShare, limiter.callerShare, limiter.callerDayShare]).toEqual([0.5, 0.25, 0.25, 0.1]);
    expect(loadConfig({ env: { LIMITER_READ_DAY_SHARE: '0.3', LIMITER_CALLER_SHARE: '.5' } }).limiter).toMatchObject({ readDayShare: 0.3, callerShare: 0.5 });
    for (const bad of ['0', '1.5', 'half', '-0.2', '1.']) {
      expect(problemsOf(() => loadConfig({ env: { LIMITER_CALLER_DAY_SHARE: bad } })).join('\n')).toContain('LIMITER_CALLER_DAY_SHARE');
    }
    expect(problemsOf(() => loadConfig({ env: { GATEWAY_RATE_PER_DAY: '3', LIMITER_BACKGROUND_DAY_SHARE: '0.25' } })).join('\n')).toContain('LIMITER_BACKGROUND_DAY_SHARE');
  });

  it('when SANDBOX_WEBHOOK_* are set, then the receivers, the key and the schedule are read, and a bad value is named without itself', () => {
    const none = loadConfig({ env: {} }).sandbox;
    expect(none).toMatchObject({ webhookUrls: [], webhookSecret: undefined, webhookRetryScheduleMs: undefined, webhookDisorderMs: 0, webhookDuplicatePercent: 0 });
    const set = loadConfig({ env: { SANDBOX_WEBHOOK_URLS: 'http://127.0.0.1:9999/a, https://hooks.example/b', SANDBOX_WEBHOOK_SECRET: 'hook-key', SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS: '100, 200,300', SANDBOX_WEBHOOK_DUPLICATE_PERCENT: '5' } }).sandbox;
    expect(set.webhookUrls).toEqual(['http://127.0.0.1:9999/a', 'https://hooks.example/b']);
    expect(set.webhookSecret?.reveal()).toBe('hook-key');
    expect(set.webhookRetryScheduleMs).toEqual([100, 200, 300]);
    expect(set.webhookDuplicatePercent).toBe(5);
    const problems = problemsOf(() => loadConfig({ env: { SANDBOX_WEBHOOK_URLS: 'ftp://u:pw-secret@host/', SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS: '100,soon' } })).join('\n');
    expect(problems).toContain('SANDBOX_WEBHOOK_URLS');
    expect(problems).toContain('SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS');
    expect(problems).not.toContain('pw-secret');
  });

  it('when the events and gateway webhook settings are set, then they are read, a bad or missing secret is named without its value, and the secrets never print', () => {
    const none = loadConfig({ env: {} });
    expect(none.events).toMatchObject({ webhookUrls: [], webhookSecret: undefined, retryScheduleMs: [5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000], timeoutMs: 15000 });
    expect(none.gateway.webhookSecret).toBeUndefined();
    const [a, b] = [`whsec_${Buffer.alloc(32, 1).toString('base64')}`, `whsec_${Buffer.alloc(24, 2).toString('base64')}`];
    const set = loadConfig({ env: { EVENTS_WEBHOOK_URLS: 'http://orders.shop.svc/hooks', EVENTS_WEBHOOK_SECRET: `${a} ${b}`, EVENTS_RETRY_SCHEDULE_MS: '10,20', GATEWAY_WEBHOOK_SECRET: 'console-signature-key' } });
    expect(set.events.webhookSecret?.reveal()).toBe(`${a} ${b}`);
    expect(set.events.retryScheduleMs).toEqual([10, 20]);
    expect(JSON.stringify(set)).not.toContain('console-signature-key');
    expect(JSON.stringify(set)).not.toContain(a);
    // URLs without a secret; a secret that is not whsec_ + base64 of 24 to 64 bytes (the second entry here).
    expect(problemsOf(() => loadConfig({ env: { EVENTS_WEBHOOK_URLS: 'http://orders/hooks' } }))).toEqual(['EVENTS_WEBHOOK_SECRET (events.webhookSecret) is required when EVENTS_WEBHOOK_URLS is set']);
    const bad = problemsOf(() => loadConfig({ env: { EVENTS_WEBHOOK_URLS: 'http://orders/hooks', EVENTS_WEBHOOK_SECRET: `${a} whsec_c2hvcnQ=` } }));
    expect(bad).toEqual(['EVENTS_WEBHOOK_SECRET (events.webhookSecret) entry 2 must be whsec_ followed by base64 of 24 to 64 bytes']);
    expect(bad.join('\n')).not.toContain('c2hvcnQ');
  });

  it('when the shipped default.json is read, then it holds every setting', () => {
    expect(DEFAULT_CONFIG_DIR).toMatch(/config$/);
  });
});
