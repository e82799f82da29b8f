import express from 'express';
import request from 'supertest';
import { containsPan, containsPan as hasPan, isPan } from '../../src/card/pan';
import { cardGuard, containsCardData, findRawPaymentData, isCardLikeName } from '../../src/http/card-guard';
import { errorHandler, notFoundHandler } from '../../src/http/error-handler';
import { jsonBody } from '../../src/http/json-body';
import { requestId } from '../../src/http/request-id';
import { CapturingStream, createLogger } from '../../src/observability/logger';
import { exemptFromOpenapiCheck } from '../support/openapi-setup';

exemptFromOpenapiCheck('the guard is mounted on stub routes that answer 200 with what they received');

const PAN = '4000100011112224';
// 19 digits, Luhn-valid; as a JSON number it parses to 4111111111111000000, which fails Luhn.
const PAN19 = '4111111111111000008';
const AMEX = '371122223332225';

function guardedApp() {
  const stream = new CapturingStream();
  const logger = createLogger({ level: 'debug', stream });
  const app = express();
  app.use(requestId(logger));
  app.use(jsonBody({ http: { bodyLimitBytes: 16384 } }));
  app.use(cardGuard());
  app.all('/{*rest}', (req, res) => {
    req.log.info('handler reached', { body: req.body as unknown, query: req.query });
    res.json({ reached: true });
  });
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return { app, stream };
}

async function expectRejected(send: (app: express.Express) => request.Test, location: string, secret: string) {
  const { app, stream } = guardedApp();
  const res = await send(app);
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('card_data_forbidden');
  expect(res.text).not.toContain(secret);
  expect(JSON.stringify(res.headers)).not.toContain(secret);
  expect(stream.text()).not.toContain(secret);
  expect(stream.text()).not.toContain(secret.slice(0, 8) + secret.slice(8)); // the whole run, in any log line
  expect(stream.lines.some((l) => l.includes('card data rejected') && l.includes(`"location":"${location}"`))).toBe(true);
  expect(stream.text()).not.toContain('handler reached');
}

const postJson = (body: string) => (app: express.Express) => request(app).post('/v1/sales').set('Content-Type', 'application/json').send(body);

describe('card-data guard', () => {
  it('when a body key is card-like, then 422 and the handler is never reached', async () => {
    for (const key of ['creditcard', 'Credit_Card', 'card-number', 'CVV2', 'exp_month', 'UMcard', 'track2', 'magstripe', 'cid', 'expiration']) {
      await expectRejected(postJson(JSON.stringify({ amount: '1.00', [key]: 'x1' })), 'body', 'never-present-marker');
    }
  });

  it('when a nested value holds a PAN, in any form, then 422 and the number never appears', async () => {
    for (const form of [PAN, '4000 1000 1111 2224', '4000-1000-1111-2224', `note ${AMEX} end`]) {
      await expectRejected(postJson(JSON.stringify({ amount: '1.00', meta: { list: [{ note: form }] } })), 'body', form);
    }
  });

  it('when a PAN is hidden behind JSON unicode escapes, then the parsed scan still catches it', async () => {
    const escaped = '{"invoice": "\\u0034000100011112224"}';
    expect(containsPan(escaped)).toBe(false); // so only the scan of the parsed value can catch it
    await expectRejected(postJson(escaped), 'body', PAN);
  });

  it('when a PAN is a JSON number, then 422', async () => {
    await expectRejected(postJson(`{"amount": "1.00", "ref": ${PAN}}`), 'body', PAN);
  });

  it('when a 19-digit PAN is a JSON number beyond 2^53, then the raw text scan catches it', async () => {
    expect(isPan(PAN19)).toBe(true);
    expect(containsPan(String(JSON.parse(PAN19)))).toBe(false); // so only the raw text scan can catch it
    await expectRejected(postJson(`{"amount": "1.00", "ref": ${PAN19}}`), 'body', PAN19);
  });

  it('when the body is malformed JSON but holds a PAN, then 422 rather than an echoing parse error', async () => {
    await expectRejected(postJson(`{"ref": ${PAN}, oops`), 'body', PAN);
  });

  it('when number sits inside a card-like object, then 422; elsewhere a plain number field passes', async () => {
    await expectRejected(postJson('{"payment_card": {"number": "x"}}'), 'body', 'never-present-marker');
    const { app } = guardedApp();
    const res = await postJson('{"house": {"number": "12"}}')(app);
    expect(res.status).toBe(200);
  });

  it('when a body key itself is a PAN, then 422', async () => {
    await expectRejected(postJson(`{"${PAN}": 1}`), 'body', PAN);
  });

  it('when the query holds a PAN or a card-like key, then 422', async () => {
    await expectRejected((app) => request(app).get(`/v1/customers?limit=20&q=${PAN}`), 'query', PAN);
    await expectRejected((app) => request(app).get('/v1/customers?limit=20&q=4000+1000+1111+2224'), 'query', '4000 1000 1111 2224');
    await expectRejected((app) => request(app).get('/v1/customers?q=4000%201000%201111%202224'), 'query', '4000 1000 1111 2224');
    await expectRejected((app) => request(app).get('/v1/customers?cvv=123'), 'query', 'never-present-marker');
  });

  it('when the path holds a PAN, then 422', async () => {
    await expectRejected((app) => request(app).get(`/v1/customers/${PAN}/payment_methods`), 'path', PAN);
    await expectRejected((app) => request(app).get('/v1/customers/4000-1000-1111-2224/payment_methods'), 'path', '4000-1000-1111-2224');
  });

  it('when a header value holds a PAN, then 422 and the X-Request-Id is not the caller value', async () => {
    await expectRejected((app) => request(app).get('/v1/customers').set('X-Note', `card ${PAN}`), 'header', PAN);
    await expectRejected((app) => request(app).get('/v1/customers').set('Idempotency-Key', '4000-1000-1111-2224'), 'header', '4000-1000-1111-2224');
    await expectRejected((app) => request(app).get('/v1/customers').set('X-Request-Id', PAN), 'header', PAN);
  });

  it('when a trace header has its exact format, then a decimal span id that passes Luhn is not card data', async () => {
    const gcp = `105445aa7843bc8bf206b12000100000/${PAN19};o=1`;
    const { app } = guardedApp();
    const ok = await request(app).get('/v1/customers').set('X-Cloud-Trace-Context', gcp)
      .set('traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(ok.status).toBe(200);
    await expectRejected((a) => request(a).get('/v1/customers').set('X-Other-Trace', gcp), 'header', PAN19);
    await expectRejected((a) => request(a).get('/v1/customers').set('X-Cloud-Trace-Context', `${gcp} ${PAN}`), 'header', PAN);
  });

  it('when a digit stretch is glued to letters inside an opaque header id, then it is not a card number', async () => {
    const { app } = guardedApp();
    const res = await request(app).get('/v1/customers').set('X-Session', `sess${PAN}ab`).set('Idempotency-Key', `k-${'a'.repeat(4)}x${PAN}z`);
    expect(res.status).toBe(200);
  });

  it('when a header name is card-like, then 422', async () => {
    await expectRejected((app) => request(app).get('/v1/customers').set('X-Card-Number', 'redacted-by-client'), 'header', 'redacted-by-client');
  });

  it('when nothing is card-like (amounts, keys, invoices, short or non-Luhn digit runs), then the request passes', async () => {
    const { app } = guardedApp();
    const body = { customer: 'nsds9yd1h5kb9y5d', payment_method: 'pm1', amount: '10.00', amount_detail: { tax: '1.00' }, invoice: 'INV-123456789012', ref: 4000100011112225 };
    const res = await request(app).post('/v1/sales?limit=20').set('Content-Type', 'application/json').set('Idempotency-Key', 'order-2024-0001').send(body);
    expect(res.status).toBe(200);
  });
});

describe('card-data guard: separators and network ranges (issue 10)', () => {
  it('when a card number is grouped by dots, underscores or slashes, in the body, query, path or a header, then 422', async () => {
    for (const form of ['4000.1000.1111.2224', '4000_1000_1111_2224', '4000/1000/1111/2224']) {
      await expectRejected(postJson(JSON.stringify({ amount: '1.00', invoice: form })), 'body', form);
      await expectRejected(postJson(JSON.stringify({ amount: '1.00', [`k ${form}`]: 1 })), 'body', form);
      await expectRejected((app) => request(app).get(`/v1/customers?q=${encodeURIComponent(form)}`), 'query', form);
      await expectRejected((app) => request(app).get(`/v1/customers/${form}/payment_methods`), 'path', form);
      await expectRejected((app) => request(app).get('/v1/customers').set('Idempotency-Key', form), 'header', form);
      await expectRejected((app) => request(app).get('/v1/customers').set(`X-Ref-${form.replace(/[./]/g, '-')}`, '1'), 'header', form.replace(/[./]/g, '-'));
    }
  });

  it('when a card number is pasted with doubled, spaced, mixed or no-break separators, in the body, query or a header, then 422', async () => {
    // A contract probe's forms: a cardholder "4000  1000  1111  2224", an invoice "4000-1000.1111-2224", " - ", tab, NBSP.
    for (const form of ['4000  1000  1111  2224', '4000-1000.1111-2224', '4000 - 1000 - 1111 - 2224', '4000\t1000\t1111\t2224', '4000\u00a01000\u00a01111\u00a02224', '3711-222233 32225']) {
      await expectRejected(postJson(JSON.stringify({ amount: '1.00', cardholder: form })), 'body', form);
      await expectRejected((app) => request(app).get(`/v1/customers?q=${encodeURIComponent(form)}`), 'query', form);
      if (!form.includes('\u00a0')) await expectRejected((app) => request(app).get('/v1/customers').set('X-Note', form), 'header', form);
    }
  });

  it('when an Idempotency-Key is a random UUID whose leading groups are card-shaped, then the request passes', async () => {
    const { app } = guardedApp();
    const res = await request(app).post('/v1/sales').set('Content-Type', 'application/json').set('Idempotency-Key', '66422251-1355-4707-9c8a-89ddd225b5b4').send({ amount: '1.00', invoice: 'c1ec9bec-5773-4339-8092-05c00c2ba1cd' });
    expect(res.status).toBe(200);
  });

  it('when invoices, Idempotency-Keys and request ids carry Luhn-valid clock values outside every network, then the request passes', async () => {
    // The key (17953697890003 passes Luhn) and runs that pass Luhn on purpose; none has a network's prefix at its length.
    const { app } = guardedApp();
    const body = { customer: 'c1', payment_method: 'pm1', amount: '10.00', invoice: 'ORD-1795369789007', note: 'snowflake 1863221212124160056, order 0000000000012344' };
    const res = await request(app).post('/v1/sales').set('Content-Type', 'application/json').set('Idempotency-Key', 'order-1795369789000-3').set('X-Request-Id', 'req-1795369789000128').send(body);
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-1795369789000128');
  });
});

describe('json body: repeated keys', () => {
  async function expectDuplicate(raw: string) {
    const { app, stream } = guardedApp();
    const res = await postJson(raw)(app);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details).toEqual([{ path: 'body', rule: 'duplicate_key' }]);
    expect(res.text).not.toContain('900.00');
    expect(stream.text()).not.toContain('handler reached');
  }

  it('when an object repeats a key, at the top or at any depth or inside an array, then 400 invalid_request pointing at the body', async () => {
    await expectDuplicate('{"amount":"1.00","amount":"900.00"}');
    await expectDuplicate('{"amount":"1.00","amount_detail":{"tax":"1.00","tip":"0.10","tax":"900.00"}}');
    await expectDuplicate('{"items":[{"a":1},{"b":2,"b":"900.00"}]}');
    await expectDuplicate('[{"x":{"y":{"z":1,"z":2}}}]');
  });

  it('when two names differ only in their JSON escapes, then they are the same key', async () => {
    await expectDuplicate('{"amount":"1.00","\\u0061mount":"900.00"}');
  });

  it('when sibling or nested objects reuse a name, then each object is judged alone and the request passes', async () => {
    const { app } = guardedApp();
    const res = await postJson('{"a":{"id":1},"b":{"id":2},"list":[{"id":3},{"id":4}],"id":{"id":5}}')(app);
    expect(res.status).toBe(200);
  });
});

describe('hasPan', () => {
  it('when a PAN sits next to another digit group, then it is still found', () => {
    for (const text of ['1 4000100011112224', 'qty 1 4000 1000 1111 2224', '4000100011112224 5', '4000-1000-1111-2224-9']) {
      expect(hasPan(text)).toBe(true);
    }
  });
  it('when digits form one unbroken stretch longer than 19, or fail Luhn, then no PAN', () => {
    expect(hasPan('40001000111122240000')).toBe(false);
    expect(hasPan('4000100011112225 1')).toBe(false);
    expect(hasPan('order 2024-11-22 ref 1234')).toBe(false);
  });
  it('when delimited, then a run touching letters is not a PAN but one touching punctuation is', () => {
    expect(hasPan(`abc${PAN}`, { delimited: true })).toBe(false);
    expect(hasPan(`${PAN}f`, { delimited: true })).toBe(false);
    expect(hasPan(`id=${PAN};`, { delimited: true })).toBe(true);
    expect(hasPan(`x9 ${PAN}`, { delimited: true })).toBe(true);
  });
  it('when a body value hides a PAN next to a digit group, then the guard answers 422', async () => {
    await expectRejected(postJson(JSON.stringify({ note: '1 4000 1000 1111 2224' })), 'body', '4000 1000 1111 2224');
  });
});

describe('containsCardData and isCardLikeName', () => {
  it('when names differ only in case, - and _, then they compare equal', () => {
    expect(isCardLikeName('CARD_NUMBER')).toBe(true);
    expect(isCardLikeName('cc-num')).toBe(true);
    expect(isCardLikeName('amount')).toBe(false);
    expect(isCardLikeName('number')).toBe(false);
  });
  it('when a structure is deeply nested, then the scan neither overflows nor misses the leaf', () => {
    let deep: unknown = { note: PAN };
    for (let i = 0; i < 20000; i++) deep = [deep];
    expect(containsCardData(deep)).toBe(true);
  });
});

describe('card-data guard: digits of any script, separators of any kind (issue 30)', () => {
  const forms = ['４０００１０００１１１１２２２４', '٤٠٠٠١٠٠٠١١١١٢٢٢٤', '4000\u200b1000\u200b1111\u200b2224', '4000\u20281000\u20281111\u20282224', '4000+1000+1111+2224', '４０００ー１０００ー１１１１ー２２２４'];

  it.each(forms)('when %j is a cardholder, a query value or a path segment, then 422 and it is never echoed or logged', async (form) => {
    await expectRejected(postJson(JSON.stringify({ payment_key: 'pk_1', cardholder: form, method_name: 'mine' })), 'body', form);
    await expectRejected((app) => request(app).get(`/v1/customers?q=${encodeURIComponent(form)}`), 'query', form);
    await expectRejected((app) => request(app).get(`/v1/customers/${encodeURIComponent(form)}/payment_methods`), 'path', form);
  });

  it.each(forms)('when a header carries %j as UTF-8 bytes (Node reads them as latin1), then 422', async (form) => {
    const sent = Buffer.from(`card ${form}`, 'utf8').toString('latin1');
    await expectRejected((app) => request(app).get('/v1/customers').set('X-Note', sent), 'header', sent);
  });

  it('when a header holds other non-ASCII text and ids, then the request passes', async () => {
    const { app } = guardedApp();
    const sent = Buffer.from('Zahlung für Карта ４２ order-1795369789000-23 ＯＲＤ-１７９５３６９７８９０００', 'utf8').toString('latin1');
    expect((await request(app).get('/v1/customers').set('X-Note', sent)).status).toBe(200);
  });
});

describe('card-data guard: names worked out once (issue 40, item 1)', () => {
  /** Runs `check` with redact's normaliseKey spied on (a name worked out again calls it), restored after. */
  const withKeySpy = (check: (spy: jest.SpiedFunction<typeof import('../../src/observability/redact').normaliseKey>) => void) => () => {
    const redact = jest.requireActual<typeof import('../../src/observability/redact')>('../../src/observability/redact');
    const spy = jest.spyOn(redact, 'normaliseKey');
    try {
      check(spy);
    } finally {
      spy.mockRestore();
    }
  };
  const sale = () => ({
    headers: { host: '127.0.0.1:8080', authorization: 'Bearer a.b.c', 'content-type': 'application/json', 'idempotency-key': 'k-1', 'x-card-note': 'ok' },
    originalUrl: '/v1/sales',
    query: {},
    body: { customer: 'c1', payment_method: 'pm1', amount: '10.00', meta: { number: '12', card_holder: { name: 'A' } } },
  });

  it('when the same header names and body keys come again, then they are not normalised again and the verdicts are the same', withKeySpy((spy) => {
    expect(findRawPaymentData(sale())).toBeUndefined();
    spy.mockClear();
    expect(findRawPaymentData(sale())).toBeUndefined();
    expect(spy).not.toHaveBeenCalled();
    // Remembered verdicts still refuse: a card-like name, a number in a card's context, a PAN in a value.
    expect(findRawPaymentData({ ...sale(), headers: { ...sale().headers, 'x-card-number': '1' } })).toEqual({ location: 'header', kind: 'card' });
    expect(findRawPaymentData({ ...sale(), body: { meta: { card_holder: { number: '42' } } } })).toEqual({ location: 'body', kind: 'card' });
    expect(findRawPaymentData({ ...sale(), body: { customer: PAN } })).toEqual({ location: 'body', kind: 'card' });
    expect(findRawPaymentData({ ...sale(), body: { routing_number: '1' } })).toEqual({ location: 'body', kind: 'bank' });
  }));

  it('when a name is longer than a real header name or key, then it is worked out each time, not kept', withKeySpy((spy) => {
    const long = `x-${'a'.repeat(100)}`;
    const req = { ...sale(), headers: { [long]: 'v' }, body: { [long]: 'v' } };
    expect(findRawPaymentData(req)).toBeUndefined();
    spy.mockClear();
    expect(findRawPaymentData(req)).toBeUndefined();
    expect(spy.mock.calls.map(([name]) => name.length)).toEqual([100, 102]);
  }));

  it('when a header name or body key is or holds card or bank data, then it is refused each time and never kept in memory', withKeySpy((spy) => {
    const cases = [
      { req: { ...sale(), headers: { [`x-ref-${PAN}`]: 'v' } }, found: { location: 'header', kind: 'card' } },
      { req: { ...sale(), body: { [PAN]: 'v' } }, found: { location: 'body', kind: 'card' } },
      { req: { ...sale(), body: { account_number: 'v' } }, found: { location: 'body', kind: 'bank' } },
    ];
    for (const { req, found } of cases) {
      expect(findRawPaymentData(req)).toEqual(found);
      spy.mockClear();
      expect(findRawPaymentData(req)).toEqual(found);
      // Worked out again: the verdict (and so the name) was not remembered.
      expect(spy.mock.calls.some(([name]) => name.includes(PAN) || name.includes('account'))).toBe(true);
    }
  }));

  it('when a path or query holds a percent-encoded card number, then it is still found', () => {
    const encoded = PAN.split('').map((d) => `%3${d}`).join('');
    expect(findRawPaymentData({ ...sale(), originalUrl: `/v1/sales/${encoded}` })).toEqual({ location: 'path', kind: 'card' });
    expect(findRawPaymentData({ ...sale(), originalUrl: `/v1/sales?x=${encoded}` })).toEqual({ location: 'query', kind: 'card' });
    expect(findRawPaymentData({ ...sale(), query: { note: PAN } })).toEqual({ location: 'query', kind: 'card' });
  });
});

describe('card-data guard: header names that are Object.prototype members', () => {
  it('when a header is named constructor, toString or __proto__, then the request passes like any other', async () => {
    const { app } = guardedApp();
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const res = await request(app).get('/anything').set(name, 'x');
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
    }
  });
});
