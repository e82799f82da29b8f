import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { Secret } from '../../src/config/secret';
import type { JwtConfig } from '../../src/config/types';
import { assertCustomerAccess, createAuthenticator, requireAnyCustomer, requireAuth, requireScope } from '../../src/http/auth';
import { errorHandler } from '../../src/http/error-handler';
import { requestId } from '../../src/http/request-id';
import { CapturingStream, createLogger } from '../../src/observability/logger';

const SECRET = 'test-secret-0123456789-abcdefghijkl';
const hsConfig: JwtConfig = {
  issuer: 'tokengate-test', audience: 'tokengate', algorithms: ['HS256'], secret: new Secret(SECRET),
  publicKey: undefined, jwksUrl: undefined, clockToleranceSec: 5, jwksCooldownMs: 0,
};
const now = () => Math.floor(Date.now() / 1000);

function appFor(config: JwtConfig) {
  const stream = new CapturingStream();
  const logger = createLogger({ level: 'debug', stream });
  const { authenticate } = createAuthenticator({ jwt: config, logger });
  const app = express();
  app.use(requestId(logger));
  app.get('/me', authenticate, (req, res) => {
    const auth = requireAuth(req);
    res.json({ sub: auth.sub, scopes: [...auth.scopes], custkey: auth.custkey ?? null, anyCustomer: auth.anyCustomer });
  });
  app.post('/sales', authenticate, requireScope('sales:create'), (_req, res) => {
    res.status(201).json({ ok: true });
  });
  app.get('/customers', authenticate, requireScope('customers:read'), requireAnyCustomer(), (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/customers/:custkey', authenticate, (req, res) => {
    assertCustomerAccess(requireAuth(req), req.params.custkey as string);
    res.json({ ok: true });
  });
  app.get('/unguarded', (req, res) => {
    requireAuth(req);
    res.json({ ok: true });
  });
  app.use(errorHandler(logger));
  return { app, stream };
}

/** Signs a test token; an option given as undefined (e.g. expiresIn) is left out entirely. */
function hs(claims: Record<string, unknown>, options: jwt.SignOptions = {}, secret = SECRET): string {
  const merged: Record<string, unknown> = { algorithm: 'HS256', expiresIn: 300, issuer: 'tokengate-test', audience: 'tokengate', ...options };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  return jwt.sign({ sub: 'user-1', scope: 'sales:create', ...claims }, secret, merged as jwt.SignOptions);
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

async function expect401(app: express.Express, authorization: string | undefined, stream: CapturingStream, reason?: string) {
  const req = request(app).get('/me');
  if (authorization !== undefined) req.set('Authorization', authorization);
  const res = await req;
  expect(res.status).toBe(401);
  expect(res.body.error).toEqual({ code: 'unauthenticated', message: 'A valid bearer token is required.', request_id: expect.any(String) });
  expect(res.headers['www-authenticate']).toBe(/^Bearer\s+\S/i.test(authorization ?? '') ? 'Bearer error="invalid_token"' : 'Bearer');
  const token = authorization?.replace(/^Bearer /i, '') ?? '';
  if (token.length > 20) expect(stream.text()).not.toContain(token.slice(token.lastIndexOf('.') + 1) || token.slice(0, 40));
  if (reason) expect(stream.text()).toContain(`"reason":"${reason}"`);
}

describe('JWT verification (HS256)', () => {
  it('when the token is valid, then req.auth holds sub, scopes and the binding', async () => {
    const { app } = appFor(hsConfig);
    const res = await request(app).get('/me').set('Authorization', `Bearer ${hs({ custkey: 'cust-1', scope: 'sales:create  payment_methods:read' })}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ sub: 'user-1', scopes: ['sales:create', 'payment_methods:read'], custkey: 'cust-1', anyCustomer: false });
  });

  it('when the header is missing, not Bearer, or not a JWT, then 401', async () => {
    const { app, stream } = appFor(hsConfig);
    await expect401(app, undefined, stream, 'missing');
    await expect401(app, `Basic ${Buffer.from('a:b').toString('base64')}`, stream, 'malformed');
    await expect401(app, 'Bearer not-a-jwt', stream, 'malformed');
    await expect401(app, `Bearer ${hs({})} extra`, stream, 'malformed');
  });

  it('when no credential or another scheme is sent, then the 401 carries WWW-Authenticate: Bearer with no error code', async () => {
    const { app } = appFor(hsConfig);
    for (const authorization of [undefined, `Basic ${Buffer.from('a:b').toString('base64')}`, 'Bearer', 'Bearer   ', 'Token abc.def.ghi']) {
      const req = request(app).get('/me');
      if (authorization !== undefined) req.set('Authorization', authorization);
      const res = await req;
      expect([res.status, res.headers['www-authenticate']]).toEqual([401, 'Bearer']);
    }
  });

  it('when a Bearer token is sent and refused, then the 401 carries WWW-Authenticate: Bearer error="invalid_token" and nothing of the token', async () => {
    const { app } = appFor(hsConfig);
    const expired = hs({ exp: now() - 60 }, { expiresIn: undefined });
    for (const token of [expired, hs({}, {}, 'another-secret-0123456789-abcdefgh'), 'not-a-jwt', `${expired} extra`, hs({ pad: 'x'.repeat(9000) })]) {
      const res = await request(app).get('/me').set('Authorization', `bearer ${token}`);
      expect([res.status, res.headers['www-authenticate']]).toEqual([401, 'Bearer error="invalid_token"']);
    }
  });

  it('when alg is none, then 401 before any key is used', async () => {
    const { app, stream } = appFor(hsConfig);
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'u', iss: 'tokengate-test', aud: 'tokengate', exp: now() + 300 })}.`;
    await expect401(app, `Bearer ${token}`, stream, 'alg_not_allowed');
  });

  it('when the algorithm is not on the pinned list (HS384), then 401', async () => {
    const { app, stream } = appFor(hsConfig);
    await expect401(app, `Bearer ${hs({}, { algorithm: 'HS384' })}`, stream, 'alg_not_allowed');
  });

  it('when the token expired beyond the clock tolerance, then 401; within it, accepted', async () => {
    const { app, stream } = appFor(hsConfig);
    await expect401(app, `Bearer ${hs({ exp: now() - 60 }, { expiresIn: undefined })}`, stream, 'expired');
    const res = await request(app).get('/me').set('Authorization', `Bearer ${hs({ exp: now() - 2 }, { expiresIn: undefined })}`);
    expect(res.status).toBe(200);
  });

  it('when a token accepted (and remembered) before reaches its exp, then it is refused like any expired one', async () => {
    const { app, stream } = appFor({ ...hsConfig, clockToleranceSec: 0 });
    // exp a few whole seconds ahead (one second left too little on a busy box for the two accepted reads: CI saw
    // the first refused): jwt.verify refuses from that second on, and so must the remembered entry.
    const exp = now() + 3;
    const token = jwt.sign({ sub: 'user-1', scope: 'sales:create', exp }, SECRET, { algorithm: 'HS256', issuer: 'tokengate-test', audience: 'tokengate' });
    expect((await request(app).get('/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    expect((await request(app).get('/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 20));
    await expect401(app, `Bearer ${token}`, stream, 'expired');
  });

  it('when a token differs from a remembered one in its signature only, then it is verified and refused', async () => {
    const { app, stream } = appFor(hsConfig);
    const token = hs({});
    expect((await request(app).get('/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    const [h, p] = token.split('.');
    await expect401(app, `Bearer ${h}.${p}.${createHmac('sha256', 'another-secret-0123456789-abcdefgh').update(`${h}.${p}`).digest('base64url')}`, stream, 'bad_signature');
  });

  it('when nbf is in the future, then 401', async () => {
    const { app, stream } = appFor(hsConfig);
    await expect401(app, `Bearer ${hs({ nbf: now() + 120 })}`, stream, 'not_yet_valid');
  });

  it('when the header holds crit or an unencoded payload, or iat is not a number or is ahead beyond the tolerance, then 401 naming why; iat within the tolerance passes', async () => {
    const { app, stream } = appFor(hsConfig);
    // Built by hand: jsonwebtoken's sign refuses to write a text iat or exp.
    const crafted = (header: object, claims: object = {}) => {
      const input = `${b64({ alg: 'HS256', typ: 'JWT', ...header })}.${b64({ sub: 'u', iss: 'tokengate-test', aud: 'tokengate', iat: now(), exp: now() + 300, ...claims })}`;
      return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
    };
    await expect401(app, `Bearer ${crafted({ crit: ['urn:example:ext'], 'urn:example:ext': 1 })}`, stream, 'crit_unsupported');
    await expect401(app, `Bearer ${crafted({ b64: false, crit: ['b64'] })}`, stream, 'crit_unsupported');
    await expect401(app, `Bearer ${crafted({ b64: false })}`, stream, 'b64_unsupported');
    await expect401(app, `Bearer ${crafted({}, { iat: String(now()) })}`, stream, 'bad_iat');
    await expect401(app, `Bearer ${crafted({}, { iat: now() + 3600 })}`, stream, 'issued_in_future');
    await expect401(app, `Bearer ${crafted({}, { exp: 'soon' })}`, stream, 'bad_exp');
    expect((await request(app).get('/me').set('Authorization', `Bearer ${hs({ iat: now() + 4 })}`)).status).toBe(200); // tolerance 5 s
  });

  it('when iss or aud is wrong, then 401', async () => {
    const { app, stream } = appFor(hsConfig);
    await expect401(app, `Bearer ${hs({}, { issuer: 'evil' })}`, stream, 'bad_issuer');
    await expect401(app, `Bearer ${hs({}, { audience: 'other-service' })}`, stream, 'bad_audience');
  });

  it('when exp is missing, then 401', async () => {
    const { app, stream } = appFor(hsConfig);
    await expect401(app, `Bearer ${hs({}, { expiresIn: undefined })}`, stream, 'missing_exp');
  });

  it('when the signature is wrong or the payload was altered, then 401', async () => {
    const { app, stream } = appFor(hsConfig);
    await expect401(app, `Bearer ${hs({}, {}, 'another-secret-0123456789-abcdefghij')}`, stream, 'bad_signature');
    const [h, , s] = hs({}).split('.');
    const forged = `${h}.${b64({ sub: 'admin', scope: 'customers:any', iss: 'tokengate-test', aud: 'tokengate', exp: now() + 300 })}.${s}`;
    await expect401(app, `Bearer ${forged}`, stream, 'bad_signature');
  });

  it('when sub is missing or claims have the wrong type, then 401', async () => {
    const { app, stream } = appFor(hsConfig);
    await expect401(app, `Bearer ${hs({ sub: undefined })}`, stream);
    await expect401(app, `Bearer ${hs({ scope: ['sales:create'] })}`, stream, 'bad_scope');
    await expect401(app, `Bearer ${hs({ custkey: '../other' })}`, stream, 'bad_custkey');
  });

  it('when the token is over 8 KiB, then 401 without verifying it', async () => {
    const { app, stream } = appFor(hsConfig);
    await expect401(app, `Bearer ${hs({ pad: 'x'.repeat(9000) })}`, stream, 'too_large');
  });

  it('when a token is rejected, then the log names the reason at debug but never holds the token', async () => {
    const { app, stream } = appFor(hsConfig);
    const token = hs({ exp: now() - 60 }, { expiresIn: undefined });
    await request(app).get('/me').set('Authorization', `Bearer ${token}`);
    expect(stream.text()).toContain('authentication failed');
    expect(stream.text()).not.toContain(token.split('.')[1]);
    expect(stream.text()).not.toContain(token.split('.')[2]);
  });
});

describe('JWT verification (RS256, PEM public key)', () => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const rsConfig: JwtConfig = { ...hsConfig, algorithms: ['RS256'], secret: undefined, publicKey: pem };
  const rs = (claims: Record<string, unknown> = {}, options: jwt.SignOptions = {}, key: KeyObject = privateKey) =>
    jwt.sign({ sub: 'svc', scope: 'customers:read customers:any', ...claims }, key, { algorithm: 'RS256', expiresIn: 300, issuer: 'tokengate-test', audience: 'tokengate', ...options });

  it('when an RS256 token is signed by the key pair, then it is accepted', async () => {
    const { app } = appFor(rsConfig);
    const res = await request(app).get('/me').set('Authorization', `Bearer ${rs()}`);
    expect(res.status).toBe(200);
    expect(res.body.anyCustomer).toBe(true);
  });

  it('when a token is HMAC-signed with the public key PEM as secret (HS/RS confusion), then 401', async () => {
    const { app, stream } = appFor(rsConfig);
    const head = b64({ alg: 'HS256', typ: 'JWT' });
    const body = b64({ sub: 'attacker', scope: 'customers:any customers:read', iss: 'tokengate-test', aud: 'tokengate', exp: now() + 300 });
    const sig = createHmac('sha256', pem).update(`${head}.${body}`).digest('base64url');
    await expect401(app, `Bearer ${head}.${body}.${sig}`, stream, 'alg_not_allowed');
  });

  it('when a token is signed by another key pair, then 401', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const { app, stream } = appFor(rsConfig);
    await expect401(app, `Bearer ${rs({}, {}, other)}`, stream, 'bad_signature');
  });
});

describe('JWT verification (JWKS)', () => {
  const a = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const b = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = (pub: KeyObject, kid: string) => ({ ...pub.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' });
  let keys: object[] = [];
  let fetches = 0;
  let failing = false;
  let server: http.Server;
  let url = '';

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      fetches++;
      if (failing) {
        res.statusCode = 503;
        return res.end();
      }
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    keys = [jwk(a.publicKey, 'key-a')];
    fetches = 0;
    failing = false;
  });

  const jwksConfig = (cooldownMs: number): JwtConfig => ({ ...hsConfig, algorithms: ['RS256'], secret: undefined, jwksUrl: url, jwksCooldownMs: cooldownMs });
  const signed = (kid: string, key = a.privateKey) =>
    jwt.sign({ sub: 'svc', scope: 's' }, key, { algorithm: 'RS256', keyid: kid, expiresIn: 300, issuer: 'tokengate-test', audience: 'tokengate' });
  const get = (app: express.Express, token: string) => request(app).get('/me').set('Authorization', `Bearer ${token}`);

  it('when the first token arrives, then the set is fetched once and reused from the cache', async () => {
    const { app } = appFor(jwksConfig(60_000));
    expect((await get(app, signed('key-a'))).status).toBe(200);
    expect((await get(app, signed('key-a'))).status).toBe(200);
    expect(fetches).toBe(1);
  });

  it('when a key rotates in (unknown kid), then the set is refetched and the new key verifies', async () => {
    const { app } = appFor(jwksConfig(0));
    expect((await get(app, signed('key-a'))).status).toBe(200);
    keys = [jwk(a.publicKey, 'key-a'), jwk(b.publicKey, 'key-b')];
    expect((await get(app, signed('key-b', b.privateKey))).status).toBe(200);
    expect(fetches).toBe(2);
    expect((await get(app, signed('key-b', b.privateKey))).status).toBe(200);
    expect(fetches).toBe(2);
  });

  it('when unknown kids keep coming, then at most one refetch per cooldown', async () => {
    // A cooldown long enough that three concurrent verifications fit inside it on a loaded machine.
    const { app, stream } = appFor(jwksConfig(2000));
    expect((await get(app, signed('key-a'))).status).toBe(200);
    expect(fetches).toBe(1);
    await Promise.all([1, 2, 3].map(() => expect401(app, `Bearer ${signed('unknown-1')}`, stream)));
    expect(fetches).toBe(1); // inside the cooldown of the first fetch
    expect(stream.text()).toContain('"reason":"jwks_cooldown"');
    await new Promise((r) => setTimeout(r, 2100));
    await Promise.all([1, 2, 3].map(() => expect401(app, `Bearer ${signed('unknown-2')}`, stream)));
    expect(fetches).toBe(2); // one refetch for the three concurrent misses
    expect((await get(app, signed('key-a'))).status).toBe(200); // known keys still verify during the cooldown
    expect(fetches).toBe(2);
  });

  it('when the kid is not a short safe token, then 401 before any fetch', async () => {
    const { app, stream } = appFor(jwksConfig(0));
    await expect401(app, `Bearer ${signed('../../etc/passwd')}`, stream, 'bad_kid');
    await expect401(app, `Bearer ${signed('k'.repeat(200))}`, stream, 'bad_kid');
    await expect401(app, `Bearer ${signed('http://evil/jwks')}`, stream, 'bad_kid');
    expect(fetches).toBe(0);
  });

  it('when a token is signed by a key not in the set under a known kid, then 401', async () => {
    const { app, stream } = appFor(jwksConfig(0));
    await expect401(app, `Bearer ${signed('key-a', b.privateKey)}`, stream, 'bad_signature');
  });

  it('when the JWKS endpoint is down for the first token, then 401 (no key, no entry)', async () => {
    const config = { ...jwksConfig(0), jwksUrl: 'http://127.0.0.1:1/jwks.json' };
    const { app, stream } = appFor(config);
    await expect401(app, `Bearer ${signed('key-a')}`, stream, 'jwks_fetch_failed');
  });

  it('when the endpoint fails after a good fetch, then the last good set keeps verifying and no new attempt is made within the cooldown', async () => {
    const { app, stream } = appFor(jwksConfig(2000));
    expect((await get(app, signed('key-a'))).status).toBe(200);
    expect(fetches).toBe(1);
    failing = true; // the IdP's JWKS endpoint answers 503 from now on
    await new Promise((r) => setTimeout(r, 2100)); // past jose's cooldown: an unknown kid refetches
    await expect401(app, `Bearer ${signed('unknown-3')}`, stream);
    expect(fetches).toBe(2);
    // The failed fetch did not drop key-a, and unknown kids inside the cooldown of that failure fetch nothing.
    expect((await get(app, signed('key-a'))).status).toBe(200);
    await Promise.all([1, 2].map(() => expect401(app, `Bearer ${signed('unknown-4')}`, stream, 'jwks_cooldown')));
    expect(fetches).toBe(2);
  });
});

describe('scopes and customer binding', () => {
  const { app } = appFor(hsConfig);
  const call = (path: string, claims: Record<string, unknown>, method: 'get' | 'post' = 'get') =>
    request(app)[method](path).set('Authorization', `Bearer ${hs(claims)}`);

  it('when the token lacks the scope, then 403 forbidden; with it, the route runs', async () => {
    const denied = await call('/sales', { scope: 'payment_methods:read' }, 'post');
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('forbidden');
    expect((await call('/sales', { scope: 'sales:create' }, 'post')).status).toBe(201);
  });

  it('when a bound token touches another customer, then 404 not_found with no hint', async () => {
    expect((await call('/customers/cust-a', { custkey: 'cust-a' })).status).toBe(200);
    const other = await call('/customers/cust-b', { custkey: 'cust-a' });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
  });

  it('when an unbound token lacks customers:any, then no customer is reachable', async () => {
    expect((await call('/customers/cust-a', { scope: 'sales:create' })).status).toBe(404);
    expect((await call('/customers/cust-a', { scope: 'customers:any' })).status).toBe(200);
  });

  it('when a bound token also carries customers:any, then the binding still wins', async () => {
    expect((await call('/customers/cust-b', { custkey: 'cust-a', scope: 'customers:any' })).status).toBe(404);
    expect((await call('/customers', { custkey: 'cust-a', scope: 'customers:read customers:any' })).status).toBe(403);
    expect((await call('/customers', { scope: 'customers:read customers:any' })).status).toBe(200);
  });

  it('when a handler asks for auth that never ran, then it fails closed with 401', async () => {
    const res = await request(app).get('/unguarded');
    expect([res.status, res.headers['www-authenticate']]).toEqual([401, 'Bearer']);
  });
});

describe('createAuthenticator configuration', () => {
  const logger = createLogger({ stream: new CapturingStream() });
  it('when algorithm families are mixed or keys are missing, then the factory throws at boot', () => {
    expect(() => createAuthenticator({ jwt: { ...hsConfig, algorithms: ['HS256', 'RS256'] }, logger })).toThrow(/mix/);
    expect(() => createAuthenticator({ jwt: { ...hsConfig, secret: undefined }, logger })).toThrow(/secret/);
    expect(() => createAuthenticator({ jwt: { ...hsConfig, algorithms: ['RS256'], secret: undefined }, logger })).toThrow(/publicKey/);
    expect(() => createAuthenticator({ jwt: { ...hsConfig, algorithms: ['none'] }, logger })).toThrow(/algorithms/);
  });
});
