import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { docsRouter } from '../../src/http/docs';
import openapi from '../../src/http/openapi.json';
import { helmetOptions } from '../../src/http/security';
import { exemptFromOpenapiCheck } from '../support/openapi-setup';

exemptFromOpenapiCheck('the docs router alone, without the app\'s request-id middleware (the app\'s answers are checked in the integration suites)');

describe('docs router and page', () => {
  const app = express();
  app.use(helmet(helmetOptions));
  app.use(docsRouter());
  const dev = express();
  dev.use(helmet(helmetOptions));
  dev.use(docsRouter({ tryIt: true }));

  it('when /openapi.json is fetched, then it is the same document validation compiles', async () => {
    const res = await request(app).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body).toEqual(openapi);
  });

  it('when an asset is fetched again with its ETag, then the answer is 304 without a body; a changed tag gets 200', async () => {
    // The app turns express's ETag hashing off (src/app.ts): the docs assets must carry their own.
    app.set('etag', false);
    for (const path of ['/openapi.json', '/docs', '/docs/init.js', '/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js']) {
      const first = await request(app).get(path);
      expect(first.status).toBe(200);
      expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      const again = await request(app).get(path).set('If-None-Match', first.headers.etag as string);
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      const stale = await request(app).get(path).set('If-None-Match', '"not-the-tag"');
      expect(stale.status).toBe(200);
    }
  });

  it('when /docs is fetched, then Swagger UI is served from this origin only (no inline script, no CDN) under the unchanged self-only CSP', async () => {
    const res = await request(app).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toContain('<script src="/docs/swagger-ui-bundle.js"></script>');
    expect(res.text).toContain('<script src="/docs/init.js"></script>');
    expect(res.text).not.toMatch(/https?:\/\//);
    expect(res.text).not.toMatch(/<script>|style=/);
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe/);
    const bundle = await request(app).get('/docs/swagger-ui-bundle.js');
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    expect(bundle.text).toContain('SwaggerUIBundle');
    expect((await request(app).get('/docs/swagger-ui.css')).headers['content-type']).toMatch(/text\/css/);
  });

  it('when served outside development, then "try it out" is off; in development it is on', async () => {
    expect((await request(app).get('/docs')).text).toContain('data-try-it="false"');
    expect((await request(dev).get('/docs')).text).toContain('data-try-it="true"');
  });
});

describe('openapi.json against the contract', () => {
  const errorCodes = openapi.components.schemas.ErrorObject.properties.code.enum;
  it('when listing error codes, then every row of the contract table is there', () => {
    for (const code of ['invalid_request', 'unauthenticated', 'forbidden', 'not_found', 'idempotency_in_progress', 'outcome_unknown', 'card_declined', 'payload_too_large', 'card_data_forbidden', 'idempotency_key_reused', 'rate_limited', 'gateway_error', 'gateway_access_denied', 'gateway_auth_failed', 'unavailable', 'gateway_timeout', 'sale_not_capturable', 'sale_not_voidable', 'refund_exceeds_sale']) {
      expect(errorCodes).toContain(code);
    }
  });
  it('when a reader looks up what is refused as card data or as a repeated key, then the description and the 422 and 400 answers say it exactly', () => {
    const rule = ['12 to 19 digits of any script', 'one to three separators, of one kind or mixed', 'line and paragraph separators', 'zero-width characters', 'issuer ranges', 'Mastercard including 2221-2720', 'Maestro', 'Luhn'];
    for (const piece of [...rule, 'clock values']) expect(openapi.components.responses.CardDataForbidden.description).toContain(piece);
    // The opening page says what is refused and where the rule is written whole (issue 41: /docs opened on it).
    expect(openapi.info.description).toContain('`card_data_forbidden`');
    expect(openapi.info.description).toContain('`docs/card-data.md`');
    for (const piece of rule) expect(openapi.paths['/v1/sales'].post.responses['422'].description).toContain(piece);
    expect(openapi.info.description).toContain('`duplicate_key`');
    expect(openapi.components.responses.InvalidRequest.description).toContain('duplicate_key');
  });
  it('when reading the sale, token and list schemas, then the contract fields are present', () => {
    const s = openapi.components.schemas;
    expect(Object.keys(s.Sale.properties)).toEqual(expect.arrayContaining(['key', 'refnum', 'result_code', 'result', 'authcode', 'auth_amount', 'is_duplicate', 'invoice', 'creditcard', 'avs', 'cvc', 'batch']));
    expect(Object.keys(s.Token.properties)).toEqual(['type', 'cardref', 'expires', 'ccnumlast4', 'cardtype', 'custkey', 'pmkey']);
    expect(Object.keys(s.CustomerList.properties)).toEqual(['type', 'limit', 'offset', 'data', 'total']);
    expect(openapi.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(Object.keys(openapi.components.headers)).toEqual(['X-Request-Id', 'Idempotent-Replayed', 'Cache-Status', 'Retry-After', 'Tokengate-Reconciled', 'WWW-Authenticate', 'View-Cache-Status', 'Age']);
  });
});

test('when the docs router is built, then the Swagger UI bundle is served as a file and never evaluated in Node (10 MB of heap)', () => {
  docsRouter();
  const loaded = Object.keys(require.cache).filter((f) => /swagger-ui-dist[\\/].*\.js$/.test(f)).map((f) => f.replace(/.*swagger-ui-dist[\\/]/, ''));
  expect(loaded).toEqual(['absolute-path.js']);
});
