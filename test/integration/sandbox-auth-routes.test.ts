import os from 'node:os';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';

const DOCUMENTED =
  'Basic X1Y4N1F0YjUxM0NkM3ZhYk03UkMwVGJ0SldlU284cDc6czIvYWJjZGVmZ2hpamtsbW5vcC9iNzRjMmZhOTFmYjBhMDk3NTVlMzc3ZWU4ZTIwYWE4NmQyYjkyYzNkMmYyNzcyODBkYjU5NWY2MzZiYjE5MGU2';

describe('sandbox over HTTP: authentication, routes and test paths', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, settings: { endpointKeys: [{ key: 'acme1', ratePerMinute: 100 }] } });
  });
  afterAll(() => sb.close());
  beforeEach(() => sb.reset());

  it('when GET /ping, then 200 text UP without a rate-limit header', async () => {
    const r = await callSandbox(sb.url, 'GET', '/ping', { auth: false });
    expect(r.status).toBe(200);
    expect(r.text).toBe('UP');
    expect(r.headers.get('x-rate-limit')).toBeNull();
  });

  it('when the documented example header is sent as is, then the call is authenticated', async () => {
    const r = await callSandbox(sb.baseUrl, 'GET', 'customers', { auth: DOCUMENTED });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ type: 'list', total: 21 });
  });

  it.each([
    { name: 'no header', auth: false as const, code: 21002 },
    { name: 'a garbage header', auth: 'Basic %%%', code: 21002 },
    { name: 'a key without hash', auth: `Basic ${Buffer.from('_V87Qtb513Cd3vabM7RC0TbtJWeSo8p7').toString('base64')}`, code: 20010 },
  ])('when the call has $name, then 401 with errorcode $code', async ({ auth, code }) => {
    const r = await callSandbox(sb.baseUrl, 'GET', 'customers', { auth });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ errorcode: code });
    expect(r.headers.get('x-rate-limit')).toMatch(/^\d+ of 45\/min; \d+ of 5000\/day$/);
  });

  it('when the PIN is wrong, then 401 21002 "API authentication failed"', async () => {
    const r = await callSandbox(sb.baseUrl, 'GET', 'customers', { apiPin: '000000' });
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'API authentication failed', errorcode: 21002 });
  });

  it('when the API key is unknown, then 401 errorcode 23', async () => {
    const r = await callSandbox(sb.baseUrl, 'GET', 'customers', { apiKey: 'unknown-key-0001' });
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: 'Specified source key not found', errorcode: 23 });
  });

  it('when routes are called with or without trailing slash, on v2 or a configured endpoint key, then they answer', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    for (const base of [sb.baseUrl, `${sb.url}/api/acme1/`]) {
      for (const slash of ['', '/']) {
        expect((await callSandbox(base, 'GET', `customers${slash}`)).status).toBe(200);
        expect((await callSandbox(base, 'GET', `customers/${c.key}/payment_methods${slash}`)).status).toBe(200);
        expect((await callSandbox(base, 'GET', `customers/${c.key}/payment_methods/${pm.key}/cardref${slash}`)).status).toBe(200);
        const sale = await callSandbox(base, 'POST', `transactions${slash}`, { body: { command: 'cc:sale', amount: '1.00', UMCardRef: sb.fixtures.cardrefFor(c.key, pm.key) } });
        expect(sale.json).toMatchObject({ result_code: 'A' });
      }
    }
  });

  it('when legacy numeric IDs are used in the path, then they resolve to the same payment method', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[1]!;
    const r = await callSandbox(sb.baseUrl, 'GET', `customers/${c.custid}/payment_methods/${pm.pmid}/cardref`);
    expect(r.json).toMatchObject({ custkey: c.key, pmkey: pm.key, cardref: sb.fixtures.cardrefFor(c.key, pm.key) });
  });

  it.each([
    ['an unknown resource', 'GET', '/api/v2/products'],
    ['a wrong method', 'GET', '/api/v2/transactions'],
    ['an unknown endpoint key', 'GET', '/api/nosuchkey/customers'],
    ['a path outside /api', 'GET', '/index.html'],
    ['two trailing slashes', 'GET', '/api/v2/customers//'],
  ])('when the path is %s, then 404 Path not found (21001) with a rate-limit header', async (_name, method, path) => {
    const r = await callSandbox(sb.url, method, path);
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: 'Path not found', errorcode: 21001 });
    expect(r.headers.get('x-rate-limit')).toMatch(/of 45\/min/);
  });

  it('when the customer or payment method is unknown, then 404 with 99999 or 40453 (gateway-facts.md, the wallet)', async () => {
    const c = sb.fixtures.firstCustomer();
    const noCustomer = await callSandbox(sb.baseUrl, 'GET', 'customers/nosuchcustomer1/payment_methods');
    expect(noCustomer.status).toBe(404);
    expect(noCustomer.json).toEqual({ error: 'Customer Not Found', errorcode: 99999 });
    const noMethod = await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}/payment_methods/nosuchmethod123/cardref`);
    expect(noMethod.status).toBe(404);
    expect(noMethod.json).toEqual({ error: 'Payment Method Not Found', errorcode: 40453 });
  });

  it.each(['/api/RATELIMT/', '/api/RATELIMT/_', '/api/RATELIMT'])('when %s is called twice, then the first answers and the second is 429 API Rate Limit Exceed', async (path) => {
    const first = await callSandbox(sb.url, 'GET', path, { auth: false });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({});
    for (let i = 0; i < 2; i++) {
      const again = await callSandbox(sb.url, 'GET', path, { auth: false });
      expect(again.status).toBe(429);
      expect(again.statusText).toBe('API Rate Limit Exceed');
      expect(again.json).toEqual({ error: 'API Rate Limit Exceed', errorcode: 155 });
      expect(again.headers.get('x-rate-limit')).toBe('1 of 1/min; 1 of 1/day');
    }
    sb.reset();
    expect((await callSandbox(sb.url, 'GET', path, { auth: false })).status).toBe(200);
  });

  it.each(['/api/IPACCESS/', '/api/IPACCESS/_', '/api/IPACCESS/customers'])('when %s is called, then always 401 Access Denied (156)', async (path) => {
    for (let i = 0; i < 2; i++) {
      const r = await callSandbox(sb.url, 'GET', path);
      expect(r.status).toBe(401);
      expect(r.statusText).toBe('Access Denied');
      expect(r.json).toEqual({ error: 'Access Denied', errorcode: 156 });
      expect(r.headers.get('x-rate-limit')).not.toBeNull();
    }
  });
});

describe('sandbox over HTTP: IP allow-lists and the loopback-only admin', () => {
  it('when an endpoint key allows other IPs only, then 401 Access Denied; when it lists 127.0.0.1 (any form), then it answers', async () => {
    const sb = await startSandbox({ settings: { endpointKeys: [{ key: 'closed', allowIps: ['10.1.2.3'] }, { key: 'open', allowIps: ['::ffff:127.0.0.1'] }] } });
    try {
      const closed = await callSandbox(`${sb.url}/api/closed/`, 'GET', 'customers');
      expect(closed.status).toBe(401);
      expect(closed.statusText).toBe('Access Denied');
      expect(closed.json).toEqual({ error: 'Access Denied', errorcode: 156 });
      expect((await callSandbox(`${sb.url}/api/open/`, 'GET', 'customers')).status).toBe(200);
      expect(sb.stats().endpoints.closed).toMatchObject({ calls: 1, accepted: 0, unauthorized: 1 });
    } finally {
      await sb.close();
    }
  });

  const external = Object.values(os.networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  (external ? it : it.skip)('when a client comes from a non-loopback address, then admin routes are 404 and the allow-list sees that address', async () => {
    const sb = await startSandbox({ host: '0.0.0.0', settings: { endpointKeys: [{ key: 'local', allowIps: ['127.0.0.1'] }] } });
    try {
      const url = `http://${external}:${sb.port}`;
      const admin = await callSandbox(url, 'GET', '/_sandbox/stats', { auth: false });
      expect(admin.status).toBe(404);
      expect(admin.json).toEqual({ error: 'Path not found', errorcode: 21001 });
      expect((await callSandbox(url, 'GET', '/api/local/customers')).status).toBe(401);
      expect((await callSandbox(url, 'GET', '/api/v2/customers')).status).toBe(200);
      expect((await callSandbox(sb.url, 'GET', '/_sandbox/stats', { auth: false })).status).toBe(200);
    } finally {
      await sb.close();
    }
  });
});
