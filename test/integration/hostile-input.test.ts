import http from 'node:http';
import fc from 'fast-check';
import { containsPan } from '../../src/card/pan';
import { NETWORKS } from '../../src/card/networks';
import { startBff, token, type Bff } from '../support/bff';
import { makeLuhnValid, merchantIds } from '../support/merchant-ids';
import { oracleContainsPan, oracleFlatten, oracleHasNetworkCandidate } from '../support/pan-oracle';
import { connectRedis, deletePrefix, uniquePrefix, valuesUnder } from '../support/redis';
import { DIGIT_SCRIPTS, inScript, PAN_SEPARATORS, printedGroups, TEST_CARDS, UNICODE_JOINS } from '../support/test-cards';

/**
 * Hostile input against ONE in-process tokengate (real Redis, sandbox gateway), property-based with
 * fast-check: random JSON, deep nesting, huge numbers, unicode, prototype-pollution keys, header injection,
 * card numbers hidden in every position and separator form, repeated JSON keys, random paths and methods. Every answer must be a documented one in
 * the error envelope, never a 5xx, never holding a card number; the logs hold none either; the service lives.
 */
// A ceiling, not a bound: at a load average of 25 the random-JSON property alone passed 120 s (issue 41).
jest.setTimeout(300_000);

/** Documented 4xx answers (contract.md, Errors) and their codes. */
const DOCUMENTED: Readonly<Record<number, readonly string[]>> = {
  400: ['invalid_request'], 401: ['unauthenticated'], 403: ['forbidden'], 404: ['not_found'],
  409: ['idempotency_in_progress', 'outcome_unknown'], 413: ['payload_too_large'],
  422: ['card_data_forbidden', 'bank_data_forbidden', 'idempotency_key_reused'], 429: ['rate_limited'],
};
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];
const FRAMING = new Set(['content-length', 'transfer-encoding', 'host', 'connection', 'expect', 'upgrade', 'te', 'trailer', 'keep-alive', 'content-type', 'authorization']);

let bff: Bff;
let custA: string;
let pmA: string;
let sent = 0;
let refusedByClient = 0;
let parserRefused = 0;
const mintedIds: string[] = [];
const planted = new Set<string>();
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

interface Req { method: string; path: string; headers: Record<string, string>; body?: string }
interface Res { status: number; headers: http.IncomingHttpHeaders; text: string }

/** One request over keep-alive; `undefined` when Node's client refuses to send it (CR/LF in a header, bad path). */
function send(req: Req): Promise<Res | undefined> {
  const port = Number(new URL(bff.url).port);
  const headers = { ...req.headers, ...(req.body !== undefined ? { 'content-length': String(Buffer.byteLength(req.body)) } : {}) };
  return new Promise((resolve, reject) => {
    let r: http.ClientRequest;
    try {
      r = http.request({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
    } catch {
      refusedByClient++;
      return resolve(undefined);
    }
    sent++;
    r.setTimeout(10_000, () => r.destroy(new Error(`no answer in 10 s to ${req.method} ${req.path.slice(0, 80)}`)));
    r.on('error', reject);
    r.end(req.body);
  });
}

/**
 * The contract for any answer: a documented status (or `ok`), the envelope, a request id, no card number.
 * Node's HTTP parser answers some raw input itself (a byte it refuses in the path, headers over 16 KiB):
 * 400/431, empty body, no request id; those are counted apart (`parserRefused`), see hostile-framing.test.ts.
 */
function check(req: Req, res: Res | undefined, ok: readonly number[] = []): void {
  if (!res) return;
  const where = `${req.method} ${JSON.stringify(req.path.slice(0, 120))} → ${res.status} ${res.text.slice(0, 200)}`;
  const id = res.headers['x-request-id'];
  if (typeof id !== 'string') {
    if ((res.status === 400 || res.status === 431) && res.text === '' && res.headers.connection === 'close') return void parserRefused++;
    throw new Error(`no X-Request-Id: ${where}`);
  }
  mintedIds.push(id);
  // The request id is set aside here: minted ids are checked on their own (last test).
  const exposed = (res.text + '\n' + Object.values(res.headers).join('\n')).split(id).join('');
  const digits = oracleFlatten(exposed); // any script, any separator
  if (containsPan(exposed) || [...planted].some((p) => digits.includes(p))) throw new Error(`card number in the answer: ${where}`);
  if (ok.includes(res.status)) return;
  const codes = DOCUMENTED[res.status];
  if (!codes) throw new Error(`undocumented status: ${where}`);
  if (req.method === 'HEAD') return;
  const err = (JSON.parse(res.text) as { error?: { code?: string; message?: unknown; request_id?: unknown } }).error;
  if (!err || !codes.includes(err.code ?? '') || typeof err.message !== 'string' || err.request_id !== id) throw new Error(`bad envelope: ${where}`);
}

function expectCleanLogs(): void {
  const logs = bff.logs();
  expect(containsPan(logs)).toBe(false);
  const digits = oracleFlatten(logs);
  expect([...planted].filter((p) => digits.includes(p))).toEqual([]);
}

// --- generators -----------------------------------------------------------------------------------------

/** Every row of the network table as (prefix edge, length) pairs: random numbers in every network's range. */
const RANGE_SHAPES = NETWORKS.flatMap((row) => row.prefixes.flatMap((p) => p.split('-')).flatMap((edge) => row.lengths.map((length) => ({ edge, length }))));
const panArb = fc.oneof(
  fc.constantFrom(...TEST_CARDS.map((c) => c.number)),
  fc.constantFrom(...RANGE_SHAPES).chain(({ edge, length }) =>
    fc.array(fc.integer({ min: 0, max: 9 }), { minLength: length - edge.length, maxLength: length - edge.length }).map((d) => makeLuhnValid(edge + d.join(''))),
  ),
);
/**
 * A PAN written with separators (among `seps`) between random groups, one to three characters at each cut, of
 * one kind or mixed, or unbroken. The rule's one grouping exception (a UATP number with a clock-length group,
 * networks.json clockGroups) is left to the card and precision suites: the independent oracle keeps only what
 * the rule calls a card number.
 */
const formatted = (seps: readonly string[]) =>
  fc.tuple(panArb, fc.constantFrom(...seps)).chain(([pan, sep]) => {
    const cut = fc.oneof(fc.constant(''), fc.constant(sep), fc.array(fc.constantFrom(...seps), { minLength: 1, maxLength: 3 }).map((s) => s.join('')));
    return fc.array(cut, { minLength: pan.length - 1, maxLength: pan.length - 1 }).map((cuts) => ({
      pan,
      text: [...pan].map((d, i) => d + (i < cuts.length ? (cuts[i] as string) : '')).join(''),
    }));
  }).filter(({ text }) => oracleContainsPan(text));
/** A PAN in another script (full-width, Arabic-Indic, …), unbroken or in its printed groups joined by a Unicode join (issue 30). */
const scripted = fc.tuple(panArb, fc.constantFrom(...Object.values(DIGIT_SCRIPTS)), fc.constantFrom('', ...UNICODE_JOINS))
  .map(([pan, zero, join]) => ({ pan, text: inScript(printedGroups(pan).join(join), zero) }))
  .filter(({ text }) => oracleContainsPan(text));
/** How a client puts text in a header: its UTF-8 bytes, which Node's client writes (and its server reads) as latin1. */
const wire = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
/** Non-ASCII left in a URL by the encoders below, percent-encoded as UTF-8 (Node's client refuses it raw). */
const asciiUrl = (text: string) => text.replace(/\P{ASCII}/gu, (c) => encodeURIComponent(c));
const noDigits = (unit: 'grapheme' | 'grapheme-ascii') => fc.string({ unit, maxLength: 12 }).map((s) => s.replace(/[0-9]/g, 'x'));
const keyArb = fc.oneof(fc.constantFrom(...PROTO_KEYS, 'customer', 'payment_method', 'amount', 'amount_detail', 'invoice', 'tax', 'tip', 'number', 'card'), fc.string({ unit: 'grapheme', maxLength: 10 }));
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.bigInt({ min: -(10n ** 60n), max: 10n ** 60n }).map(String),
  fc.constantFrom('1e400', '-1e-400', '1E+308', '0.0000000000000000000001', '-0', '123456789012345678901234567890.123456789'),
);
/** JSON text built by hand so that `__proto__` stays an own key in what the service receives. */
const { json } = fc.letrec<{ json: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ unit: 'binary', maxLength: 20 }).map((s) => JSON.stringify(s)),
    numberText,
    fc.constantFrom('true', 'false', 'null'),
    fc.array(tie('json'), { maxLength: 4 }).map((a) => `[${a.join(',')}]`),
    fc.array(fc.tuple(keyArb, tie('json')), { maxLength: 4 }).map((p) => `{${p.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
}));
const deep = fc.tuple(fc.integer({ min: 50, max: 5000 }), fc.boolean()).map(([d, arr]) => (arr ? '['.repeat(d) + '1' + ']'.repeat(d) : '{"a":'.repeat(d) + '1' + '}'.repeat(d)));
/** Header-safe for Node's client (latin1, no CR/LF) most of the time; a few control characters it refuses. */
const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
const latin1 = fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c));
const idemKey = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }) },
  { weight: 5, arbitrary: fc.string({ unit: latin1, maxLength: 300 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);

const redisPrefix = uniquePrefix('hostile').replace(/[^A-Za-z0-9:_-]/g, '_');
const redis = connectRedis();

beforeAll(async () => {
  bff = await startBff({ mode: 'in-process', env: { LOG_LEVEL: 'debug', REDIS_KEY_PREFIX: redisPrefix } });
  custA = bff.sandbox.fixtures.firstCustomer().key;
  pmA = (bff.sandbox.fixtures.paymentMethods(custA)[0] as { key: string }).key;
});
afterAll(async () => {
  process.stdout.write(`hostile-input: sent ${sent}, refused by client ${refusedByClient}, by parser ${parserRefused}, minted ids ${mintedIds.length}, PAN-like ${mintedIds.filter((i) => containsPan(i)).length}, card numbers planted ${planted.size}\n`);
  agent.destroy();
  await bff?.stop();
  await deletePrefix(redis, redisPrefix);
  redis.disconnect();
});

const bearer = () => token({ sub: 'hostile', custkey: custA, scope: 'sales:create payment_methods:read tokens:read customers:read' }, { expiresIn: 600 });

describe('hostile input against one in-process service', () => {
  it('when random JSON (deep, huge numbers, unicode, prototype keys) is posted as a sale, then only documented 4xx answers come back', async () => {
    const auth = bearer();
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 4, arbitrary: json }, { weight: 1, arbitrary: deep }), fc.boolean(), fc.option(idemKey), async (body, withToken, key) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (withToken) headers.authorization = `Bearer ${auth}`;
        if (key !== null && !/[\r\n]/.test(key)) headers['idempotency-key'] = key;
        const req = { method: 'POST', path: '/v1/sales', headers, body };
        check(req, await send(req));
      }),
      { numRuns: 4000 },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expectCleanLogs();
  });

  it('when a prototype-pollution key sits anywhere in a body, then 400 forbidden_key and no prototype changes', async () => {
    const auth = bearer();
    const tree = fc.tuple(fc.constantFrom(...PROTO_KEYS), fc.array(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 }), { maxLength: 5 }), fc.boolean());
    await fc.assert(
      fc.asyncProperty(tree, async ([bad, path, withToken]) => {
        let inner = `{${JSON.stringify(bad)}:{"polluted":"yes","prototype":{"polluted":"yes"}}}`;
        for (const k of path) inner = `{"amount":"1.00",${JSON.stringify(k)}:${inner}}`;
        const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': 'proto' };
        if (withToken) headers.authorization = `Bearer ${auth}`;
        const req = { method: 'POST', path: '/v1/sales', headers, body: inner };
        const res = await send(req);
        check(req, res);
        expect(res?.status).toBe(400);
        expect(JSON.parse(res?.text ?? '{}').error.details).toEqual([{ path: 'body', rule: 'forbidden_key' }]);
      }),
      { numRuns: 1000 },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('when a card number hides in any position and format, then 422 card_data_forbidden and it is neither echoed nor logged', async () => {
    const auth = bearer();
    // '+' is a space in a query only; in a path it stays a '+', which joins groups as well (contract: plus signs).
    const enc = fc.constantFrom<(s: string) => string>(encodeURIComponent, (s) => s.replace(/ /g, '%20'), (s) => s.replace(/ /g, '+'));
    const place = fc.record({
      where: fc.constantFrom('body-value', 'body-key', 'body-number', 'body-array', 'body-unicode', 'query-value', 'query-key', 'header-value', 'request-id', 'idempotency-key', 'authorization', 'path'),
      card: fc.oneof({ weight: 3, arbitrary: formatted(PAN_SEPARATORS) }, { weight: 1, arbitrary: scripted }),
      pre: noDigits('grapheme'),
      post: noDigits('grapheme'),
      asciiPre: fc.string({ unit: printable, maxLength: 12 }).map((t) => t.replace(/[0-9]/g, 'x')),
      depth: fc.array(fc.constantFrom('a', 'meta', 'note', 'items', 'x y'), { maxLength: 5 }),
      withToken: fc.boolean(),
      enc,
    });
    await fc.assert(
      fc.asyncProperty(place, async ({ where, card, pre, post, asciiPre, depth, withToken, enc: e }) => {
        planted.add(card.pan);
        const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': 'k-card' };
        if (withToken) headers.authorization = `Bearer ${auth}`;
        const text = `${pre} ${card.text} ${post}`;
        let path = `/v1/customers/${custA}/payment_methods`;
        let value = JSON.stringify(text);
        if (where === 'body-key') value = `{${JSON.stringify(text)}:1}`;
        if (where === 'body-number') value = card.pan;
        if (where === 'body-array') value = `["a",1,${JSON.stringify(card.text)},null]`;
        if (where === 'body-unicode') value = JSON.stringify(`Zahlung für Карта ✓ ${card.text} 🚀 ${post}`);
        for (const k of depth) value = `{${JSON.stringify(k)}:${value}}`;
        let body: string | undefined = `{"customer":"${custA}","payment_method":"${pmA}","amount":"1.00","meta":${value}}`;
        if (!where.startsWith('body')) body = undefined;
        // Unicode around the number is percent-encoded (Node's parser refuses raw bytes over 0x7e in a URL).
        const inUrl = `${encodeURIComponent(pre)}${asciiUrl(e(` ${card.text} `))}${encodeURIComponent(post)}`;
        if (where === 'query-value') path += `?note=${inUrl}`;
        if (where === 'query-key') path += `?${inUrl}=1`;
        if (where === 'path') path = `/v1/customers/${inUrl.replace(/\+/g, '%20')}/payment_methods`;
        if (where === 'header-value') headers['x-note'] = wire(`${asciiPre} ${card.text} :`);
        if (where === 'request-id') headers['x-request-id'] = /^[\d._-]+$/.test(card.text) ? card.text : card.pan;
        if (where === 'idempotency-key') headers['idempotency-key'] = wire(`order ${card.text}`);
        if (where === 'authorization') headers.authorization = wire(`Bearer ${card.text}`);
        const req = { method: body === undefined ? 'GET' : 'POST', path: body === undefined ? path : '/v1/sales', headers, body };
        const res = await send(req);
        check(req, res);
        expect(`${where}: ${res?.status} ${res?.text ? JSON.parse(res.text).error?.code : 'no body'}`).toBe(`${where}: 422 card_data_forbidden`);
      }),
      { numRuns: 2500 },
    );
    expectCleanLogs();
  });

  it('when any object in a sale body repeats a key, at any depth or inside an array, then 400 duplicate_key and nothing is charged', async () => {
    const auth = bearer();
    const charged = bff.sandbox.transactions().length;
    const spot = fc.record({
      path: fc.array(fc.constantFrom('amount_detail', 'meta', 'items', 'x y'), { maxLength: 4 }),
      key: fc.oneof(fc.constantFrom('amount', 'customer', 'invoice', 'tax', 'a'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 })),
      escaped: fc.boolean(),
      inArray: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(spot, async ({ path, key, escaped, inArray }) => {
        // The repeat may be spelled with a JSON escape ("\u0061mount"): it is still the same key.
        const first = JSON.stringify(key);
        const second = escaped ? first.replace(/^"([A-Za-z0-9])/, (_m, c: string) => `"\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : first;
        let inner = `{${first}:"1.00",${second}:"900.00"}`;
        if (inArray) inner = `[1,${inner}]`;
        for (const k of path) inner = `{${JSON.stringify(k)}:${inner}}`;
        const top = path.length === 0 && !inArray;
        const body = `{"customer":"${custA}","payment_method":"${pmA}",${top ? inner.slice(1) : `"amount":"1.00","meta":${inner}}`}`;
        const headers = { 'content-type': 'application/json', authorization: `Bearer ${auth}`, 'idempotency-key': `dup-${sent}` };
        const req = { method: 'POST', path: '/v1/sales', headers, body };
        const res = await send(req);
        check(req, res);
        expect([res?.status, res?.text && JSON.parse(res.text).error?.details]).toEqual([400, [{ path: 'body', rule: 'duplicate_key' }]]);
      }),
      { numRuns: 300 },
    );
    expect(bff.sandbox.transactions()).toHaveLength(charged);
  });

  it('when a sale carries a clock-based invoice and Idempotency-Key (or another Luhn-valid id outside every network), then it is charged normally', async () => {
    const outside = merchantIds(2000)
      .map((id) => id.text)
      .filter((id) => /^[A-Za-z0-9._-]{1,64}$/.test(id) && !oracleHasNetworkCandidate(id));
    // order-1795369789000-23: ms and counter together are 15 Luhn-valid digits from 1, UATP's shape but for the groups.
    const ids = ['ORD-1795369789000', 'order-1795369789000-3', 'order-1795369789000-23', ...outside.filter((_, i) => i % 150 === 0)];
    for (const id of ids) {
      const res = await fetch(`${bff.url}/v1/sales`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer()}`, 'content-type': 'application/json', 'idempotency-key': id, 'x-request-id': `req-${id}`.slice(0, 128) },
        body: JSON.stringify({ customer: custA, payment_method: pmA, amount: '3.00', invoice: id }),
      });
      const sale = (await res.json()) as { invoice?: string; result_code?: string; refnum?: string; key?: string };
      expect([id, res.status, sale.invoice, res.headers.get('x-request-id')]).toEqual([id, 201, id, `req-${id}`.slice(0, 128)]);
      // The sandbox's refnums and keys were shaped never to look like card numbers; the scrubbers agree.
      expect([sale.refnum, sale.key, containsPan(`${sale.refnum} ${sale.key}`)]).toEqual([sale.refnum, sale.key, false]);
      expect(bff.sandbox.transactions().filter((t) => t.invoice === id)).toHaveLength(1);
    }
    expect(ids.length).toBeGreaterThan(8);
  });

  it('when methods, paths, queries and headers are random (CR/LF, very long, unicode), then only documented answers and the docs', async () => {
    const segment = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('v1', 'sales', 'customers', 'payment_methods', 'token', 'docs', 'openapi.json', '..', '.', '%2e%2e', '%00', '%ff', '%', '%%', '~', ';', 'a;b=c', custA, pmA) },
      { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent) },
      { weight: 3, arbitrary: fc.string({ unit: latin1, maxLength: 12 }).map((t) => t.replace(/[ #?%]/g, '').replace(/[\x80-\xff]/g, encodeURIComponent)) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 4 }) },
    );
    const header = fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/), fc.oneof(
      { weight: 6, arbitrary: fc.string({ unit: latin1, maxLength: 40 }) },
      { weight: 2, arbitrary: fc.string({ unit: printable, minLength: 1000, maxLength: 8000 }) },
      { weight: 1, arbitrary: fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('a\r\nX-Injected: 1', 'v\nSet-Cookie: x=1', 'a\rb', 'nul\u0000')) },
    ));
    const reqArb = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'PURGE', 'SEARCH'),
      segments: fc.array(segment, { maxLength: 6 }),
      query: fc.option(fc.string({ unit: latin1, maxLength: 40 }).map((t) => t.replace(/[ #]/g, '&').replace(/[\x80-\xff]/g, encodeURIComponent))),
      headers: fc.array(header, { maxLength: 4 }),
      contentType: fc.option(fc.constantFrom('application/json', 'text/plain', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', '')),
      body: fc.option(fc.oneof(json, fc.string({ unit: 'binary', maxLength: 100 }))),
      withToken: fc.boolean(),
    });
    const auth = bearer();
    await fc.assert(
      fc.asyncProperty(reqArb, async (r) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of r.headers) if (!FRAMING.has(name.toLowerCase())) headers[name] = value;
        if (r.contentType !== null) headers['content-type'] = r.contentType;
        if (r.withToken) headers.authorization = `Bearer ${auth}`;
        const path = '/' + r.segments.join('/') + (r.query !== null ? `?${r.query}` : '');
        const req = { method: r.method, path, headers, body: r.body ?? undefined };
        const res = await send(req);
        // The docs, and `/` pointing to them (issue 41), answer 200 without a token; `/#…` is `/` (a fragment is no
        // part of the path: Node hands it over when a raw client sends one, and the router reads `/`).
        const docs = /^\/(docs|openapi\.json|[?#]|$)/.test(path) || r.method === 'OPTIONS';
        check(req, res, docs ? [200, 204, 301, 304] : []);
      }),
      { numRuns: 3000 },
    );
    expect(refusedByClient).toBeGreaterThan(0); // CR/LF attempts were generated (and refused by Node's client)
    expectCleanLogs();
  });

  it('when a valid caller sends near-valid sales and reads with hostile fields, then 4xx or a real list, never a 5xx', async () => {
    const money = fc.oneof(fc.constantFrom('1.00', '0.01', '99999999999.99', '1e3', '-1.00', '0.001', '١٢٣', ' 1.00', '1,00', 'NaN', 'Infinity'), numberText, fc.string({ maxLength: 12 }));
    const pm = fc.oneof(fc.constant('zz00000000000000'), fc.stringMatching(/^zz[a-z0-9]{14}$/), fc.string({ unit: 'grapheme', maxLength: 20 }));
    const customer = fc.oneof(fc.constant(custA), fc.constant(bff.sandbox.fixtures.customers[1]?.key ?? 'other'), fc.string({ unit: 'grapheme', maxLength: 20 }));
    const route = fc.oneof(
      fc.record({ kind: fc.constant('sale' as const), customer, pm, amount: money, tax: fc.option(money), invoice: fc.option(fc.string({ unit: 'grapheme', maxLength: 70 })), key: fc.option(idemKey) }),
      fc.record({ kind: fc.constant('list' as const), customer, limit: fc.option(fc.oneof(money, fc.integer().map(String))), offset: fc.option(money) }),
      fc.record({ kind: fc.constant('token' as const), customer, pm }),
    );
    const scope = fc.constantFrom('sales:create payment_methods:read tokens:read', 'payment_methods:read', 'customers:read customers:any', '');
    await fc.assert(
      fc.asyncProperty(route, scope, async (r, sc) => {
        const headers: Record<string, string> = { authorization: `Bearer ${token({ sub: 'hostile-valid', custkey: custA, scope: sc }, { expiresIn: 600 })}`, 'content-type': 'application/json' };
        let req: Req;
        const q = (v: string | null, name: string) => (v === null ? '' : `${name}=${encodeURIComponent(v)}&`);
        if (r.kind === 'sale') {
          if (r.key !== null && !/[\r\n]/.test(r.key)) headers['idempotency-key'] = r.key;
          const body = { customer: r.customer, payment_method: r.pm, amount: r.amount, ...(r.tax !== null ? { amount_detail: { tax: r.tax } } : {}), ...(r.invoice !== null ? { invoice: r.invoice } : {}) };
          req = { method: 'POST', path: '/v1/sales', headers, body: JSON.stringify(body) };
        } else if (r.kind === 'list') {
          req = { method: 'GET', path: `/v1/customers/${encodeURIComponent(r.customer)}/payment_methods?${q(r.limit, 'limit')}${q(r.offset, 'offset')}`, headers };
        } else {
          req = { method: 'GET', path: `/v1/customers/${encodeURIComponent(r.customer)}/payment_methods/${encodeURIComponent(r.pm)}/token`, headers };
        }
        check(req, await send(req), r.kind === 'sale' ? [] : [200]);
      }),
      { numRuns: 1200 },
    );
    expectCleanLogs();
  });

  it('when the answer checker meets a 5xx, a broken envelope or an echoed card number, then it throws', () => {
    // The properties above are only as strong as check(): show it catches each violation.
    const req: Req = { method: 'GET', path: '/x', headers: {} };
    const res = (status: number, body: object, id = 'rid-12345678'): Res => ({ status, headers: { 'x-request-id': id }, text: JSON.stringify(body) });
    expect(() => check(req, res(500, { error: { code: 'internal_error', message: 'm', request_id: 'rid-12345678' } }))).toThrow(/undocumented status/);
    expect(() => check(req, res(404, { error: { code: 'forbidden', message: 'm', request_id: 'rid-12345678' } }))).toThrow(/bad envelope/);
    expect(() => check(req, res(422, { error: { code: 'card_data_forbidden', message: 'card 4000 1000 1111 2224', request_id: 'rid-12345678' } }))).toThrow(/card number/);
    expect(() => check(req, res(200, { ok: true }))).toThrow(/undocumented status/);
    expect(() => check(req, res(400, { error: { code: 'invalid_request', message: 'm', request_id: 'rid-12345678' } }))).not.toThrow();
  });

  // Header names are scanned for numbers as well as card-like words (src/http/card-guard.ts).
  it('when a card number is the name of a header, then 422 card_data_forbidden like in its value', async () => {
    const req = { method: 'GET', path: `/v1/customers/${custA}/payment_methods`, headers: { authorization: `Bearer ${bearer()}`, 'x-card-4000-1000-1111-2224': '1' } };
    const res = await send(req);
    expect(`${res?.status} ${res?.text ? JSON.parse(res.text).error?.code : ''}`).toBe('422 card_data_forbidden');
  });

  // Issue 30, item 3: an outside probe added cards named with these; all were taken, stored at the gateway, listed
  // and kept 24 h in the idempotency record.
  it('when a card is added with a card number in another script or joined by zero-width, line or plus characters as its cardholder or method name, then 422 and nothing reaches the gateway or Redis', async () => {
    const pan = '4000100011112224';
    planted.add(pan);
    const forms = ['４０００１０００１１１１２２２４', '٤٠٠٠١٠٠٠١١١١٢٢٢٤', '4000\u200b1000\u200b1111\u200b2224', '4000\u20281000\u20281111\u20282224', '4000+1000+1111+2224', '４０００ー１０００ー１１１１ー２２２４'];
    const writer = `Bearer ${token({ sub: 'hostile-cards', custkey: custA, scope: 'payment_methods:write payment_methods:read' }, { expiresIn: 600 })}`;
    const { public_key: publicKey } = (await (await fetch(`${bff.url}/v1/payment-config`, { headers: { authorization: writer } })).json()) as { public_key: string };
    const minted = await fetch(`${bff.sandbox.url}/js/v2/payment_key`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ public_key: publicKey, card: { number: pan, expiration: '1230', cvc: '123' } }),
    });
    const { payment_key: paymentKey } = (await minted.json()) as { payment_key: string };
    const add = (extra: object, key: string) => fetch(`${bff.url}/v1/customers/${custA}/payment_methods`, {
      method: 'POST', headers: { authorization: writer, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ payment_key: paymentKey, ...extra }),
    });
    const methods = bff.sandbox.fixtures.paymentMethods(custA).length;
    const calls = bff.sandbox.transactions().length;
    for (const form of forms) {
      for (const field of ['cardholder', 'method_name']) {
        const res = await add({ [field]: `Taro ${form}` }, `probe-${field}-${forms.indexOf(form)}`);
        const text = await res.text();
        expect([form, field, res.status, (JSON.parse(text) as { error?: { code?: string } }).error?.code]).toEqual([form, field, 422, 'card_data_forbidden']);
        expect(oracleFlatten(text)).not.toContain(pan);
      }
    }
    expect([bff.sandbox.fixtures.paymentMethods(custA).length, bff.sandbox.transactions().length]).toEqual([methods, calls]);
    expect((await valuesUnder(redis, redisPrefix)).filter(({ text }) => oracleFlatten(text).includes(pan)).map(({ key }) => key)).toEqual([]);
    // The single-use key was never spent: the same card under a plain name is added, and listed masked.
    expect((await add({ cardholder: 'Taro Yamada', method_name: 'ｶｰﾄﾞ 1' }, 'probe-plain')).status).toBe(201);
    const list = await (await fetch(`${bff.url}/v1/customers/${custA}/payment_methods?limit=100`, { headers: { authorization: writer } })).text();
    expect([list.includes('Taro Yamada'), oracleFlatten(list).includes(pan)]).toEqual([true, false]);
    expectCleanLogs();
  });

  it('when the storm is over, then at least 10,000 requests were answered by the service and it still charges a sale', async () => {
    expect(sent - parserRefused).toBeGreaterThanOrEqual(10_000);
    const res = await fetch(`${bff.url}/v1/sales`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer()}`, 'content-type': 'application/json', 'idempotency-key': `after-${Date.now().toString(36)}` },
      body: JSON.stringify({ customer: custA, payment_method: pmA, amount: '2.00' }),
    });
    expect(res.status).toBe(201);
    expect((await fetch(`${bff.adminUrl}/readyz`)).status).toBe(200);
  });

  // randomUUID()'s dash-separated digit groups pass as a card number about 3 times in 1000; the scrubbers
  // would then redact part of the id the caller holds (fixed in src/http/request-id.ts by minting again).
  it('when the service mints request ids, then none looks like a card number', () => {
    expect(mintedIds.length).toBeGreaterThan(5000);
    expect(mintedIds.filter((id) => containsPan(id))).toEqual([]);
  });
});
