import express from 'express';
import request from 'supertest';
import {
  GatewayAccessDeniedError, GatewayAuthFailedError, GatewayBadRequestError, GatewayConnectionResetError, GatewayNotFoundError,
  GatewayRateLimitedError, GatewayServerError, GatewayTimeoutError, GatewayUnavailableError, GatewayUnreadableError, type GatewayError,
} from '../../src/gateway/errors';
import {
  ApiError, CardDataForbidden, CardDeclined, Forbidden, GatewayErrorApi, GatewayTimeout, IdempotencyInProgress, IdempotencyKeyReused,
  InvalidRequest, NotFound, OutcomeUnknown, PayloadTooLarge, RateLimited, Unauthenticated, Unavailable, fromGatewayError,
} from '../../src/http/errors';
import { errorHandler, notFoundHandler } from '../../src/http/error-handler';
import { StoreUnavailableError } from '../../src/redis/errors';
import { jsonBody } from '../../src/http/json-body';
import { requestId } from '../../src/http/request-id';
import { CapturingStream, createLogger } from '../../src/observability/logger';

function appThrowing(err: unknown, stream = new CapturingStream()) {
  const logger = createLogger({ level: 'debug', stream });
  const app = express();
  app.use(requestId(logger));
  app.use(jsonBody({ http: { bodyLimitBytes: 16384 } }));
  app.all('/throw', () => {
    throw err;
  });
  app.post('/echo', (req, res) => {
    res.json({ ok: true, keys: Object.keys(req.body as object) });
  });
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return { app, stream };
}

describe('error classes', () => {
  const rows: [ApiError, number, string][] = [
    [new InvalidRequest([{ path: 'body.amount', rule: 'pattern' }]), 400, 'invalid_request'],
    [new Unauthenticated(), 401, 'unauthenticated'],
    [new Forbidden(), 403, 'forbidden'],
    [new NotFound(), 404, 'not_found'],
    [new IdempotencyInProgress(2), 409, 'idempotency_in_progress'],
    [new OutcomeUnknown(), 409, 'outcome_unknown'],
    [new CardDeclined({ result_code: 'D' }), 402, 'card_declined'],
    [new PayloadTooLarge(), 413, 'payload_too_large'],
    [new CardDataForbidden(), 422, 'card_data_forbidden'],
    [new IdempotencyKeyReused(), 422, 'idempotency_key_reused'],
    [new RateLimited(7), 429, 'rate_limited'],
    [new GatewayErrorApi('gateway_error'), 502, 'gateway_error'],
    [new GatewayErrorApi('gateway_access_denied'), 502, 'gateway_access_denied'],
    [new GatewayErrorApi('gateway_auth_failed'), 502, 'gateway_auth_failed'],
    [new Unavailable(3), 503, 'unavailable'],
    [new GatewayTimeout(), 504, 'gateway_timeout'],
  ];
  it.each(rows)('when %p is answered, then status and code follow the contract table', async (error, status, code) => {
    const { app } = appThrowing(error);
    const res = await request(app).get('/throw').set('X-Request-Id', 'req-12345678');
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.request_id).toBe('req-12345678');
    expect(typeof res.body.error.message).toBe('string');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('when an error promises Retry-After, then the header carries whole seconds', async () => {
    for (const [error, seconds] of [[new IdempotencyInProgress(2), '2'], [new RateLimited(1.2), '2'], [new Unavailable(3), '3']] as const) {
      const res = await request(appThrowing(error).app).get('/throw');
      expect(res.headers['retry-after']).toBe(seconds);
    }
    const plain = await request(appThrowing(new NotFound()).app).get('/throw');
    expect(plain.headers['retry-after']).toBeUndefined();
  });

  it('when a 401 is answered, then it carries the Bearer challenge (invalid_token only for a refused token) and no other error does', async () => {
    const none = await request(appThrowing(new Unauthenticated()).app).get('/throw');
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const refused = await request(appThrowing(new Unauthenticated(true)).app).get('/throw');
    expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    const forbidden = await request(appThrowing(new Forbidden()).app).get('/throw');
    expect(forbidden.headers['www-authenticate']).toBeUndefined();
  });

  it('when validation fails, then details name paths and rules only', async () => {
    const res = await request(appThrowing(new InvalidRequest([{ path: 'body.amount', rule: 'pattern' }])).app).get('/throw');
    expect(res.body).toEqual({ error: { code: 'invalid_request', message: expect.any(String), request_id: expect.any(String), details: [{ path: 'body.amount', rule: 'pattern' }] } });
  });

  it('when a sale is declined, then the transaction rides inside the error object, card-like runs scrubbed', async () => {
    const tx = { key: 't1', refnum: '31', result_code: 'D', result: 'Declined', creditcard: { number: '4000xxxxxxxx2220' }, note: '4000300011112220' };
    const res = await request(appThrowing(new CardDeclined(tx)).app).get('/throw');
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('card_declined');
    expect(res.body.error.transaction.creditcard.number).toBe('4000xxxxxxxx2220');
    expect(res.body.error.transaction.refnum).toBe('31');
    expect(res.text).not.toContain('4000300011112220');
  });
});

describe('fromGatewayError', () => {
  const cases: [GatewayError, number, string][] = [
    [new GatewayRateLimitedError('x', { status: 429, errorcode: 155 }), 429, 'rate_limited'],
    [new GatewayAccessDeniedError('x', { status: 401, errorcode: 156 }), 502, 'gateway_access_denied'],
    [new GatewayAuthFailedError('x', { status: 401, errorcode: 21002 }), 502, 'gateway_auth_failed'],
    [new GatewayNotFoundError('x', { status: 404 }), 404, 'not_found'],
    [new GatewayBadRequestError('x', { status: 400 }), 502, 'gateway_error'],
    [new GatewayServerError('x', { status: 500 }), 502, 'gateway_error'],
    [new GatewayUnreadableError('x'), 502, 'gateway_error'],
    [new GatewayTimeoutError('x'), 504, 'gateway_timeout'],
    [new GatewayConnectionResetError('x'), 504, 'gateway_timeout'],
    [new GatewayUnavailableError('x'), 503, 'unavailable'],
  ];
  it.each(cases)('when the gateway fails with %p, then the answer is the mapped status and code', (err, status, code) => {
    const api = fromGatewayError(err);
    expect(api.status).toBe(status);
    expect(api.code).toBe(code);
  });
  it('when a re-queue was impossible, then 429 and 503 carry Retry-After', () => {
    expect(fromGatewayError(new GatewayRateLimitedError('x'), { rateLimitedRetryAfterSec: 12 }).headers['Retry-After']).toBe('12');
    expect(fromGatewayError(new GatewayUnavailableError('x')).headers['Retry-After']).toBeDefined();
  });
  it('when a GatewayError reaches the error handler, then it is mapped and its upstream text stays out of the answer', async () => {
    const { app } = appThrowing(new GatewayServerError('upstream said 4000100011112224 secret-text', { status: 500 }));
    const res = await request(app).get('/throw');
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('gateway_error');
    expect(res.text).not.toContain('secret-text');
  });
});

describe('errorHandler', () => {
  it('when a route is unknown, then 404 not_found in the envelope', async () => {
    const res = await request(appThrowing(new Error()).app).get('/nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('when something unexpected throws, then 500 internal_error without detail, and it is logged redacted', async () => {
    const { app, stream } = appThrowing(new TypeError('boom at card 4000100011112224'));
    const res = await request(app).get('/throw');
    expect(res.status).toBe(500);
    expect(res.body.error).toEqual({ code: 'internal_error', message: 'An internal error occurred.', request_id: expect.any(String) });
    expect(res.text).not.toContain('boom');
    expect(res.text).not.toMatch(/at .*\.ts/);
    expect(stream.text()).toContain('unhandled error');
    expect(stream.text()).not.toContain('4000100011112224');
  });

  it('when Redis is unreachable on any route (a store failed), then 503 unavailable with Retry-After, not 500', async () => {
    const { app, stream } = appThrowing(new StoreUnavailableError('webhooks mark: Redis failed'));
    const res = await request(app).post('/throw');
    expect([res.status, res.body.error.code, res.headers['retry-after']]).toEqual([503, 'unavailable', '5']);
    expect(stream.text()).not.toContain('unhandled error');
  });

  it('when the JSON is malformed, then 400 invalid_request without echoing the text', async () => {
    const res = await request(appThrowing(new Error()).app).post('/echo').set('Content-Type', 'application/json').send('{"amount": "12", oops-marker}');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details).toEqual([{ path: 'body', rule: 'malformed_json' }]);
    expect(res.text).not.toContain('oops-marker');
  });

  it('when the JSON top level is not an object or array, then strict parsing answers 400', async () => {
    const res = await request(appThrowing(new Error()).app).post('/echo').set('Content-Type', 'application/json').send('"just a string"');
    expect(res.status).toBe(400);
  });

  it('when the body is over the limit, then 413 payload_too_large', async () => {
    const body = JSON.stringify({ invoice: 'x'.repeat(17000) });
    const res = await request(appThrowing(new Error()).app).post('/echo').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  it('when the body is just under the limit, then it is parsed', async () => {
    const body = JSON.stringify({ invoice: 'x'.repeat(16000) });
    const res = await request(appThrowing(new Error()).app).post('/echo').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(200);
  });

  it('when a POST body is not application/json, then 400 invalid_request naming the content type', async () => {
    const res = await request(appThrowing(new Error()).app).post('/echo').set('Content-Type', 'text/plain').send('amount=1');
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'header.content-type', rule: 'unsupported_media_type' }]);
  });

  it('when the charset is not UTF-8, then 400 invalid_request', async () => {
    const res = await request(appThrowing(new Error()).app).post('/echo').set('Content-Type', 'application/json; charset=latin1').send('{}');
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'header.content-type', rule: 'unsupported_charset' }]);
  });

  it('when the body is compressed, then 400 invalid_request (inflate is off)', async () => {
    const res = await request(appThrowing(new Error()).app).post('/echo').set('Content-Type', 'application/json').set('Content-Encoding', 'gzip').send('{}');
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'header.content-encoding', rule: 'unsupported_encoding' }]);
  });

  it('when a body holds a prototype-pollution key at any depth, then 400 forbidden_key', async () => {
    for (const body of ['{"__proto__": {"admin": true}}', '{"a": [{"constructor": {"prototype": 1}}]}']) {
      const res = await request(appThrowing(new Error()).app).post('/echo').set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ path: 'body', rule: 'forbidden_key' }]);
    }
  });

  it('when a path parameter cannot be decoded, then 400 invalid_request, not 500', async () => {
    const logger = createLogger({ level: 'error', stream: new CapturingStream() });
    const app = express();
    app.use(requestId(logger));
    app.get('/c/:key', (req, res) => {
      res.json({ key: req.params.key });
    });
    app.use(errorHandler(logger));
    const res = await request(app).get('/c/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });
});
