import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { Secret } from '../../src/config/secret';
import type { JwtConfig } from '../../src/config/types';
import { mintDevToken } from '../../src/cli/token';
import {
  assertCustomerAccess, cardGuard, cors, createAuthenticator, docsRouter, errorHandler, helmetOptions, jsonBody, notFoundHandler,
  parseIdempotencyKey, parseListQuery, parsePathKey, parseSaleRequest, requestId, requireAuth, requireScope,
} from '../../src/http';
import { CapturingStream, createLogger } from '../../src/observability/logger';
import { exemptFromOpenapiCheck } from '../support/openapi-setup';

exemptFromOpenapiCheck("the edge's middleware is composed around stub handlers, not tokengate's routes");

const jwtConfig: JwtConfig = {
  issuer: 'tokengate-test', audience: 'tokengate', algorithms: ['HS256'], secret: new Secret('edge-test-secret-0123456789abcdef'),
  publicKey: undefined, jwksUrl: undefined, clockToleranceSec: 30, jwksCooldownMs: 30000,
};

/** The middleware in the order src/http/index.ts recommends, with stub handlers in place of the use cases. */
function edgeApp() {
  // Built by hand, not loadConfig: these tests are about the middleware, not config files.
  const config = {
    env: 'test' as const,
    jwt: { ...jwtConfig },
    http: { bodyLimitBytes: 16384, corsOrigins: ['https://shop.example.com'], shutdownGraceMs: 0 },
  };
  const stream = new CapturingStream();
  const logger = createLogger({ level: 'debug', stream, secrets: [config.jwt.secret] });
  const { authenticate } = createAuthenticator({ jwt: config.jwt, logger });
  const app = express();
  app.disable('x-powered-by');
  app.use(requestId(logger));
  app.use(helmet(helmetOptions));
  app.use(cors(config));
  app.use(docsRouter());
  app.use(jsonBody(config));
  app.use(cardGuard());
  app.post('/v1/sales', authenticate, requireScope('sales:create'), (req, res) => {
    const key = parseIdempotencyKey(req.headers['idempotency-key']);
    const sale = parseSaleRequest(req.body);
    assertCustomerAccess(requireAuth(req), sale.customer);
    res.status(201).json({ key, sale });
  });
  app.get('/v1/customers', authenticate, (req, res) => {
    res.json({ type: 'list', ...parseListQuery(req.query), data: [], total: 0 });
  });
  app.get('/v1/customers/:custkey/payment_methods', authenticate, requireScope('payment_methods:read'), (req, res) => {
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    assertCustomerAccess(requireAuth(req), custkey);
    res.json({ type: 'list', limit: 20, offset: 0, data: [], total: 0 });
  });
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  const token = (claims: { sub: string; custkey?: string; scope?: string }) => `Bearer ${mintDevToken(config, claims, 300)}`;
  return { app, stream, token };
}

describe('the HTTP edge composed', () => {
  it('when a bound frontend posts a valid sale, then the handler receives the parsed input', async () => {
    const { app, token } = edgeApp();
    const res = await request(app).post('/v1/sales').set('Authorization', token({ sub: 'u1', custkey: 'cust1', scope: 'sales:create' }))
      .set('Idempotency-Key', 'order-0001').send({ customer: 'cust1', payment_method: 'pm1', amount: '10.00' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ key: 'order-0001', sale: { customer: 'cust1', paymentMethod: 'pm1', amount: '10.00', amountCents: 1000, capture: true } });
    expect(res.headers['x-request-id']).toBeDefined();
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('when card data arrives even without a token, then 422 comes first and nothing echoes it', async () => {
    const { app, stream } = edgeApp();
    const res = await request(app).post('/v1/sales').send({ customer: 'c', creditcard: { number: '4000100011112224', cvc: '123' } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('card_data_forbidden');
    expect(res.text + stream.text()).not.toContain('4000100011112224');
  });

  it('when the Idempotency-Key is missing, then 400 invalid_request naming the header', async () => {
    const { app, token } = edgeApp();
    const res = await request(app).post('/v1/sales').set('Authorization', token({ sub: 'u1', custkey: 'cust1', scope: 'sales:create' }))
      .send({ customer: 'cust1', payment_method: 'pm1', amount: '10.00' });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'header.idempotency-key', rule: 'required' }]);
  });

  it('when a bound token reads another customer, then 404 like an unknown one', async () => {
    const { app, token } = edgeApp();
    const auth = token({ sub: 'u1', custkey: 'cust1', scope: 'payment_methods:read' });
    expect((await request(app).get('/v1/customers/cust1/payment_methods').set('Authorization', auth)).status).toBe(200);
    const other = await request(app).get('/v1/customers/cust2/payment_methods').set('Authorization', auth);
    const unknownRoute = await request(app).get('/v1/nothing-here').set('Authorization', auth);
    expect([other.status, unknownRoute.status]).toEqual([404, 404]);
    expect(other.body.error.message).toBe(unknownRoute.body.error.message);
  });

  it('when a path key tries to reach another gateway path, then 400 before any use case', async () => {
    const { app, token } = edgeApp();
    const res = await request(app).get('/v1/customers/cust1..%2F/payment_methods').set('Authorization', token({ sub: 'u1', custkey: 'cust1', scope: 'payment_methods:read' }));
    expect(res.status).toBe(400);
  });

  it('when list paging is out of bounds, then 400; defaults apply otherwise', async () => {
    const { app, token } = edgeApp();
    const auth = token({ sub: 'svc', scope: 'customers:read customers:any' });
    expect((await request(app).get('/v1/customers?limit=101').set('Authorization', auth)).status).toBe(400);
    const ok = await request(app).get('/v1/customers').set('Authorization', auth);
    expect(ok.body).toMatchObject({ limit: 20, offset: 0 });
  });

  it('when the docs are fetched with card data in the query or a header, then 422 card_data_forbidden before anything is served', async () => {
    const { app, stream } = edgeApp();
    for (const res of [
      await request(app).get('/openapi.json?q=4000100011112224'),
      await request(app).get('/docs').set('X-Note', '4000 1000 1111 2224'),
      await request(app).get('/docs/swagger-ui.css?cvv=123'),
    ]) {
      expect([res.status, res.body.error?.code]).toEqual([422, 'card_data_forbidden']);
      expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
      expect(res.text).not.toMatch(/4000.?1000.?1111.?2224/);
    }
    expect(stream.text()).not.toMatch(/4000.?1000.?1111.?2224/);
  });

  it('when the docs are fetched without a token, then they are served', async () => {
    const { app } = edgeApp();
    expect((await request(app).get('/docs')).status).toBe(200);
    expect((await request(app).get('/openapi.json')).body.openapi).toBe('3.1.0');
  });

  it('when a browser preflights from the allowed origin, then CORS answers before authentication', async () => {
    const { app } = edgeApp();
    const res = await request(app).options('/v1/sales').set('Origin', 'https://shop.example.com').set('Access-Control-Request-Method', 'POST');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-headers']).toContain('Idempotency-Key');
  });
});
