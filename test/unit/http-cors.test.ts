import express from 'express';
import request from 'supertest';
import { cors } from '../../src/http/cors';

function app(origins: string[]) {
  const server = express();
  server.use(cors({ http: { corsOrigins: origins } }));
  server.get('/v1/x', (_req, res) => {
    res.json({ ok: true });
  });
  return server;
}

const SHOP = 'https://shop.example.com';

describe('cors', () => {
  it('when a listed origin calls, then its exact origin is echoed with the exposed headers, never *', async () => {
    const res = await request(app([SHOP])).get('/v1/x').set('Origin', SHOP);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(res.headers['access-control-expose-headers']).toBe('X-Request-Id, Idempotent-Replayed, Cache-Status, Retry-After, WWW-Authenticate');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('when an unlisted or look-alike origin calls, then no CORS header is sent', async () => {
    for (const origin of ['https://evil.example.com', 'https://shop.example.com.evil.io', 'http://shop.example.com', 'null']) {
      const res = await request(app([SHOP])).get('/v1/x').set('Origin', origin);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('when a listed origin sends a preflight, then 204 with methods and headers incl. Authorization and Idempotency-Key', async () => {
    const res = await request(app([`${SHOP}/`])).options('/v1/x').set('Origin', SHOP).set('Access-Control-Request-Method', 'POST').set('Access-Control-Request-Headers', 'authorization, idempotency-key, content-type');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(res.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS');
    expect(res.headers['access-control-allow-headers']).toBe('Authorization, Content-Type, Idempotency-Key, X-Request-Id');
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
  });

  it('when an unlisted origin sends a preflight, then 204 without any allow header', async () => {
    const res = await request(app([SHOP])).options('/v1/x').set('Origin', 'https://evil.example.com').set('Access-Control-Request-Method', 'POST');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-headers']).toBeUndefined();
  });

  it('when no origins are configured, then nobody gets CORS headers', async () => {
    const res = await request(app([])).get('/v1/x').set('Origin', SHOP);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
