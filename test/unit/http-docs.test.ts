import vm from 'node:vm';
import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { DOCS_JS } from '../../src/http/docs-assets';
import { docsRouter } from '../../src/http/docs';
import openapi from '../../src/http/openapi.json';
import { helmetOptions } from '../../src/http/security';

/** Just enough DOM for the docs script: elements with text, classes and children. */
class FakeElement {
  children: (FakeElement | { text: string })[] = [];
  className = '';
  id = '';
  constructor(readonly tagName: string) {}
  set textContent(value: string) {
    this.children = value ? [{ text: value }] : [];
  }
  get textContent(): string {
    return this.children.map((c) => (c instanceof FakeElement ? c.textContent : c.text)).join('');
  }
  appendChild<T extends FakeElement | { text: string }>(child: T): T {
    this.children.push(child);
    return child;
  }
  all(tag: string): FakeElement[] {
    const own = this.children.filter((c): c is FakeElement => c instanceof FakeElement);
    return own.flatMap((c) => [...(c.tagName === tag ? [c] : []), ...c.all(tag)]);
  }
}

async function renderDocs(spec: unknown) {
  const byId: Record<string, FakeElement> = {};
  for (const id of ['operations', 'title', 'summary', 'status']) byId[id] = new FakeElement('div');
  const document = {
    createElement: (tag: string) => new FakeElement(tag),
    createTextNode: (text: string) => ({ text }),
    getElementById: (id: string) => byId[id] ?? null,
  };
  const fetched: string[] = [];
  const fetch = async (url: string) => {
    fetched.push(url);
    return { ok: true, status: 200, json: async () => spec };
  };
  vm.runInNewContext(DOCS_JS, { document, fetch, Object, String, Error });
  await new Promise((r) => setTimeout(r, 20));
  return { main: byId.operations as FakeElement, fetched };
}

describe('docs router and page', () => {
  const app = express();
  app.use(helmet(helmetOptions));
  app.use(docsRouter());

  it('when /openapi.json is fetched, then it is the same document validation compiles', async () => {
    const res = await request(app).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body).toEqual(openapi);
  });

  it('when an asset is fetched again with its ETag, then the answer is 304 without a body; a changed tag gets 200', async () => {
    // The app turns express's ETag hashing off (src/app.ts): the docs assets must carry their own.
    app.set('etag', false);
    for (const path of ['/openapi.json', '/docs', '/docs/app.js', '/docs/style.css']) {
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

  it('when /docs is fetched, then the page loads only same-origin script and style, under a self-only CSP', async () => {
    const res = await request(app).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toContain('<script src="/docs/app.js"></script>');
    expect(res.text).not.toMatch(/https?:\/\//);
    expect(res.text).not.toMatch(/<script>|style=/);
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    const js = await request(app).get('/docs/app.js');
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect(js.text).toBe(DOCS_JS);
    expect((await request(app).get('/docs/style.css')).headers['content-type']).toMatch(/text\/css/);
  });

  it('when the page script runs on the document, then every operation is rendered, POST /v1/sales included', async () => {
    const { main, fetched } = await renderDocs(openapi);
    expect(fetched).toEqual(['/openapi.json']);
    const headings = main.all('h2').map((h) => h.textContent);
    expect(headings).toEqual(expect.arrayContaining([
      'POST /v1/sales', 'GET /v1/sales/{key}', 'POST /v1/sales/{key}/capture', 'POST /v1/sales/{key}/void', 'POST /v1/sales/{key}/refunds',
      'GET /v1/customers', 'GET /v1/customers/{custkey}/payment_methods',
      'GET /v1/customers/{custkey}/payment_methods/{pmkey}/token', 'GET /openapi.json', 'GET /docs',
    ]));
    const text = main.textContent;
    for (const piece of ['Idempotency-Key', 'amount_detail.tax', 'payment_method', 'card_declined', 'card_data_forbidden', 'Cache-Status', 'limit']) {
      expect(text).toContain(piece);
    }
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
    const rule = ['12 to 19 digits', 'space, `-`, `.`, `_` or `/`', 'issuer ranges', 'Mastercard including 2221-2720', 'Maestro', 'Luhn'];
    for (const text of [openapi.info.description, openapi.components.responses.CardDataForbidden.description]) {
      for (const piece of [...rule, 'clock values']) expect(text).toContain(piece);
    }
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
    expect(Object.keys(openapi.components.headers)).toEqual(['X-Request-Id', 'Idempotent-Replayed', 'Cache-Status', 'Retry-After', 'Tokengate-Reconciled']);
  });
});
