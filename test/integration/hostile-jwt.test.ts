import { createHmac, createPublicKey, createSecretKey, generateKeyPairSync, randomBytes, sign as rsaSign } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import jwt from 'jsonwebtoken';
import { Secret } from '../../src/config/secret';
import { createAuthenticator } from '../../src/http/auth';
import { CapturingStream, createLogger } from '../../src/observability/logger';
import { AUDIENCE, ISSUER, TEST_JWT_SECRET, startBff, type Bff } from '../support/bff';

/**
 * JWT attacks against the whole service (in-process, real Redis, sandbox), not the middleware alone: one
 * service per key setup (HS256 secret, RS256 PEM public key, RS256 JWKS over loopback). Every attack answers
 * 401 unauthenticated in the error envelope, and no log line holds any part of the token. Each setup first
 * shows a valid token gets through, so the 401s are the attacks' doing.
 */

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);
const pair = () => generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
const keyA = pair();
const keyB = pair();

/** A token built by hand, so the header can say anything; `signer` signs `header.payload`. */
function craft(header: object, claims: object, signer: (input: string) => string = () => ''): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${signer(input)}`;
}
const hmac = (secret: string) => (input: string) => createHmac('sha256', secret).update(input).digest('base64url');
const rs256 = (privateKey: string) => (input: string) => rsaSign('sha256', Buffer.from(input), privateKey).toString('base64url');

let custA: string;
const claims = (extra: object = {}) => ({ sub: 'jwt-attacker', custkey: custA, scope: 'payment_methods:read', iss: ISSUER, aud: AUDIENCE, iat: now(), exp: now() + 300, ...extra });

async function probe(bff: Bff, authorization: string | undefined, path?: string): Promise<{ status: number; body: { error?: { code?: string; request_id?: string } }; id: string | null }> {
  const res = await fetch(bff.url + (path ?? `/v1/customers/${custA}/payment_methods`), { headers: authorization === undefined ? {} : { authorization } });
  return { status: res.status, body: (await res.json()) as { error?: { code?: string } }, id: res.headers.get('x-request-id') };
}

/** Sends every token: each must answer 401 unauthenticated, and no segment of any token may reach the logs. */
async function expectAllRefused(bff: Bff, attacks: Record<string, string>): Promise<void> {
  const answers: Record<string, string> = {};
  for (const [name, t] of Object.entries(attacks)) {
    const res = await probe(bff, `Bearer ${t}`);
    answers[name] = `${res.status} ${res.body.error?.code} ${res.body.error?.request_id === res.id ? 'envelope' : 'bad envelope'}`;
  }
  expect(answers).toEqual(Object.fromEntries(Object.keys(attacks).map((n) => [n, '401 unauthenticated envelope'])));
  const logs = bff.logs();
  const leaked = Object.entries(attacks).flatMap(([name, t]) => t.split('.').filter((seg) => seg.length >= 16 && logs.includes(seg.slice(0, 64))).map(() => name));
  expect(leaked).toEqual([]);
  expect(logs).toContain('authentication failed'); // the debug reason lines exist, so the scan above read real logs
}

describe('JWT attacks on the service, HS256 secret', () => {
  let bff: Bff;
  beforeAll(async () => {
    bff = await startBff({ mode: 'in-process', env: { LOG_LEVEL: 'debug' } });
    custA = bff.sandbox.fixtures.firstCustomer().key;
  });
  afterAll(() => bff?.stop());

  it('when the token is valid, then the route answers (the control for the attacks below)', async () => {
    expect((await probe(bff, `Bearer ${craft({ alg: 'HS256', typ: 'JWT' }, claims(), hmac(TEST_JWT_SECRET))}`)).status).toBe(200);
  });

  it('when tokens are unsigned, expired, not yet valid, for another issuer or audience, or badly typed, then 401 and nothing in the logs', async () => {
    const hs = (c: object, h: object = {}) => craft({ alg: 'HS256', typ: 'JWT', ...h }, c, hmac(TEST_JWT_SECRET));
    await expectAllRefused(bff, {
      algNone: craft({ alg: 'none', typ: 'JWT' }, claims()),
      algNoneUpper: craft({ alg: 'NONE' }, claims()),
      algNoneSigned: craft({ alg: 'none' }, claims(), hmac(TEST_JWT_SECRET)),
      algMissing: craft({ typ: 'JWT' }, claims(), hmac(TEST_JWT_SECRET)),
      algHs512: craft({ alg: 'HS512' }, claims(), (i) => createHmac('sha512', TEST_JWT_SECRET).update(i).digest('base64url')),
      expired: hs(claims({ exp: now() - 120 })),
      expiredAsString: hs(claims({ exp: String(now() + 300) })),
      noExp: hs(claims({ exp: undefined })),
      notYetValid: hs(claims({ nbf: now() + 300 })),
      wrongIssuer: hs(claims({ iss: 'https://evil.example' })),
      wrongAudience: hs(claims({ aud: 'someone-else' })),
      audienceList: hs(claims({ aud: ['someone-else', 'another'] })),
      subObject: hs(claims({ sub: { $ne: null } })),
      scopeArray: hs(claims({ scope: ['payment_methods:read'] })),
      custkeyWildcard: hs(claims({ custkey: '*' })),
      custkeyTraversal: hs(claims({ custkey: '../customers' })),
      wrongSecret: craft({ alg: 'HS256' }, claims(), hmac('not-the-secret-0123456789abcdef')),
      payloadSwapped: (() => {
        const [h, , s] = hs(claims()).split('.');
        return `${h}.${b64(claims({ scope: 'payment_methods:read customers:any', custkey: undefined }))}.${s}`;
      })(),
      maliciousKid: hs(claims(), { kid: '../../../../etc/passwd' }),
      kidInjection: hs(claims(), { kid: "x' OR '1'='1" }),
      kidObject: hs(claims(), { kid: { $ne: 1 } }),
      kidHuge: hs(claims(), { kid: 'k'.repeat(2000) }),
      jku: craft({ alg: 'RS256', jku: 'http://127.0.0.1:1/jwks.json', kid: 'x' }, claims(), rs256(keyB.privateKey)),
      embeddedJwk: craft({ alg: 'RS256', jwk: keyB.publicKey }, claims(), rs256(keyB.privateKey)),
      oversized: hs(claims({ pad: 'x'.repeat(9 * 1024) })),
    });
  });

  it('when a correctly signed token asks for an unknown crit extension or an unencoded payload, or its iat is text or an hour ahead, then 401 (issue 30, item 4)', async () => {
    const hs = (c: object, h: object = {}) => craft({ alg: 'HS256', typ: 'JWT', ...h }, c, hmac(TEST_JWT_SECRET));
    await expectAllRefused(bff, {
      critUnknown: hs(claims(), { crit: ['https://probe.example/ext'], 'https://probe.example/ext': true }),
      critEmpty: hs(claims(), { crit: [] }),
      critExp: hs(claims(), { crit: ['exp'] }),
      b64False: hs(claims(), { b64: false }),
      b64FalseCrit: hs(claims(), { b64: false, crit: ['b64'] }),
      b64Text: hs(claims(), { b64: 'false' }),
      iatText: hs(claims({ iat: String(now()) })),
      iatHourAhead: hs(claims({ iat: now() + 3600 })),
      iatNull: hs(claims({ iat: null })),
    });
  });

  it('when iat is a number now or within the clock tolerance, or absent, then the token is accepted (the controls of the iat rule)', async () => {
    const hs = (c: object) => craft({ alg: 'HS256', typ: 'JWT' }, c, hmac(TEST_JWT_SECRET));
    const statuses = await Promise.all([claims(), claims({ iat: now() + 2 }), claims({ iat: undefined }), claims({ iat: now() - 3600 })].map(async (c) => (await probe(bff, `Bearer ${hs(c)}`)).status));
    expect(statuses).toEqual([200, 200, 200, 200]);
  });

  it('when the credential comes in the wrong place or shape, then 401 as well', async () => {
    const valid = craft({ alg: 'HS256' }, claims(), hmac(TEST_JWT_SECRET));
    const statuses = await Promise.all([
      probe(bff, undefined, `/v1/customers/${custA}/payment_methods?access_token=${valid}`),
      probe(bff, `Basic ${Buffer.from(`u:${valid}`).toString('base64')}`),
      probe(bff, `Bearer ${valid}.extra`),
      probe(bff, `Bearer  ${valid}`),
      probe(bff, `Bearer ${'a'.repeat(12_000)}.${'b'.repeat(100)}.c`),
      probe(bff, `Bearer ${valid}, Bearer ${valid}`),
    ]);
    expect(statuses.map((s) => `${s.status} ${s.body.error?.code}`)).toEqual(statuses.map(() => '401 unauthenticated'));
  });
});

describe('JWT attacks on the service, RS256 with a PEM public key', () => {
  let bff: Bff;
  beforeAll(async () => {
    bff = await startBff({ mode: 'in-process', env: { LOG_LEVEL: 'debug', JWT_ALGORITHMS: 'RS256', JWT_PUBLIC_KEY: keyA.publicKey, JWT_SECRET: '' } });
    custA = bff.sandbox.fixtures.firstCustomer().key;
  });
  afterAll(() => bff?.stop());

  it('when an RS256 token is signed by the configured key, then the route answers (the control)', async () => {
    expect((await probe(bff, `Bearer ${jwt.sign(claims(), keyA.privateKey, { algorithm: 'RS256' })}`)).status).toBe(200);
  });

  it('when the public key PEM is used as an HMAC secret (HS/RS confusion), or another key signs, then 401', async () => {
    await expectAllRefused(bff, {
      confusionHs256: craft({ alg: 'HS256', typ: 'JWT' }, claims(), hmac(keyA.publicKey)),
      confusionHs256TrimmedPem: craft({ alg: 'HS256' }, claims(), hmac(keyA.publicKey.trim())),
      confusionHs512: craft({ alg: 'HS512' }, claims(), (i) => createHmac('sha512', keyA.publicKey).update(i).digest('base64url')),
      otherKeyPair: craft({ alg: 'RS256' }, claims(), rs256(keyB.privateKey)),
      rs256Expired: jwt.sign(claims({ exp: now() - 120 }), keyA.privateKey, { algorithm: 'RS256' }),
      rs256NotYetValid: jwt.sign(claims({ nbf: now() + 300 }), keyA.privateKey, { algorithm: 'RS256' }),
      rs256WrongIssuer: jwt.sign(claims({ iss: 'other' }), keyA.privateKey, { algorithm: 'RS256' }),
      algNone: craft({ alg: 'none' }, claims()),
    });
  });

  it('when an RS256 token signed by the configured key carries crit, b64: false, a text iat or one an hour ahead, then 401 (issue 30, item 4)', async () => {
    const rs = (c: object, h: object = {}) => craft({ alg: 'RS256', typ: 'JWT', ...h }, c, rs256(keyA.privateKey));
    await expectAllRefused(bff, {
      critUnknown: rs(claims(), { crit: ['https://probe.example/ext'], 'https://probe.example/ext': true }),
      b64False: rs(claims(), { b64: false, crit: ['b64'] }),
      iatText: rs(claims({ iat: String(now()) })),
      iatHourAhead: rs(claims({ iat: now() + 3600 })),
    });
  });
});

describe('JWT attacks on the service, RS256 keys from a JWKS endpoint on loopback', () => {
  let bff: Bff;
  let jwks: http.Server;
  let fetches = 0;
  beforeAll(async () => {
    const jwk = { ...createPublicKey(keyA.publicKey).export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' };
    jwks = http.createServer((_req, res) => {
      fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    bff = await startBff({ mode: 'in-process', env: { LOG_LEVEL: 'debug', JWT_ALGORITHMS: 'RS256', JWT_JWKS_URL: url, JWT_JWKS_COOLDOWN_MS: '60000', JWT_SECRET: '' } });
    custA = bff.sandbox.fixtures.firstCustomer().key;
  });
  afterAll(async () => {
    await bff?.stop();
    await new Promise((r) => jwks?.close(r));
  });

  it('when a token names the published kid, then it is accepted (the control)', async () => {
    expect((await probe(bff, `Bearer ${jwt.sign(claims(), keyA.privateKey, { algorithm: 'RS256', keyid: 'k1' })}`)).status).toBe(200);
  });

  it('when kids are unknown or malicious, then 401, and the JWKS endpoint is not hammered (one refetch per cooldown)', async () => {
    const before = fetches;
    await expectAllRefused(bff, {
      unknownKid: jwt.sign(claims(), keyB.privateKey, { algorithm: 'RS256', keyid: 'k2' }),
      unknownKidAgain: jwt.sign(claims(), keyB.privateKey, { algorithm: 'RS256', keyid: 'k3' }),
      knownKidOtherKey: jwt.sign(claims(), keyB.privateKey, { algorithm: 'RS256', keyid: 'k1' }),
      // Without a kid the single published key is used (jose's key selection): only its signature passes.
      noKidOtherKey: jwt.sign(claims(), keyB.privateKey, { algorithm: 'RS256' }),
      traversalKid: craft({ alg: 'RS256', kid: '../../k1' }, claims(), rs256(keyA.privateKey)),
      urlKid: craft({ alg: 'RS256', kid: 'http://127.0.0.1:1/evil' }, claims(), rs256(keyA.privateKey)),
      nulKid: craft({ alg: 'RS256', kid: 'k1\u0000' }, claims(), rs256(keyA.privateKey)),
      numberKid: craft({ alg: 'RS256', kid: 1 }, claims(), rs256(keyA.privateKey)),
      hsWithJwkModulus: craft({ alg: 'HS256', kid: 'k1' }, claims(), hmac(keyA.publicKey)),
    });
    expect(fetches - before).toBeLessThanOrEqual(1);
  });
});

describe('refused tokens by the thousand (issue 30, item 5: a refusal must not be the cheapest way to load the service)', () => {
  // The authenticator as the service builds it, logging at info as production does (its refusals log at debug).
  const logger = createLogger({ level: 'info', stream: new CapturingStream() }).child({ request_id: 'cost' });
  const { authenticate } = createAuthenticator({
    jwt: { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'], secret: new Secret(TEST_JWT_SECRET), publicKey: undefined, jwksUrl: undefined, clockToleranceSec: 30, jwksCooldownMs: 0 },
    logger,
  });
  const key = createSecretKey(Buffer.from(TEST_JWT_SECRET));
  let seq = 0;
  const signed = (extra: object) => jwt.sign({ sub: 'flood', scope: 'payment_methods:read', jti: `j${seq++}`, ...extra }, key, { algorithm: 'HS256', issuer: ISSUER, audience: AUDIENCE });
  const segment = () => randomBytes(48).toString('base64url');
  const makers: Record<string, () => string> = {
    // Each a new token: nothing remembered from an earlier one can make it cheap.
    accepted: () => signed({ exp: now() + 300 }),
    wrongSignature: () => `${signed({ exp: now() + 300 }).replace(/\.[^.]*$/, '')}.${randomBytes(32).toString('base64url')}`,
    expired: () => signed({ exp: now() - 120 }),
    garbage: () => `${segment()}.${segment()}.${segment()}`,
  };

  /** CPU µs per authentication of `tokens`, each through the middleware as a request would go (awaited). */
  async function cpuPerCall(tokens: string[], expectRefused: boolean): Promise<number> {
    let refused = 0;
    const start = process.cpuUsage();
    for (const t of tokens) {
      const req = { id: 'cost', headers: { authorization: `Bearer ${t}` }, log: logger } as unknown as Request;
      await new Promise<void>((resolve) => {
        // A refusal is answered 401 on `res` (or passed to `next`, as before issue 30); an acceptance calls `next()`.
        const res = { status: () => res, set: () => res, setHeader: () => undefined, json: () => { refused++; resolve(); } } as unknown as Response;
        authenticate(req, res, (err?: unknown) => {
          if (err) refused++;
          resolve();
        });
      });
    }
    const used = process.cpuUsage(start);
    expect(refused).toBe(expectRefused ? tokens.length : 0);
    return (used.user + used.system) / tokens.length;
  }

  it('when new valid tokens and refused ones alternate, then refusing costs less CPU than accepting a valid token the first time, whatever the refused kind', async () => {
    const kinds = ['wrongSignature', 'expired', 'garbage'];
    const perRound = 1000;
    const ratios: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
    for (const k of ['accepted', ...kinds]) await cpuPerCall(Array.from({ length: perRound }, makers[k] as () => string), k !== 'accepted'); // warm-up
    for (let round = 0; round < 7; round++) {
      for (const k of kinds) {
        // Tokens made before the clock starts; the two runs alternate which goes first.
        const valid = Array.from({ length: perRound }, makers.accepted as () => string);
        const bad = Array.from({ length: perRound }, makers[k] as () => string);
        let accepted: number;
        let refused: number;
        if (round % 2 === 0) {
          accepted = await cpuPerCall(valid, false);
          refused = await cpuPerCall(bad, true);
        } else {
          refused = await cpuPerCall(bad, true);
          accepted = await cpuPerCall(valid, false);
        }
        (ratios[k] as number[]).push(refused / accepted);
      }
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
    const medians = Object.fromEntries(kinds.map((k) => [k, Math.round(median(ratios[k] as number[]) * 100) / 100]));
    // Before the fix: 2-4x (an Error or two with their stacks, two formatted debug lines, jsonwebtoken's throw).
    expect(Object.entries(medians).filter(([, m]) => m >= 1)).toEqual([]);
  }, 120_000);
});
