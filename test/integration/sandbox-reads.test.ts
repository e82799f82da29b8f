import type { RunningSandbox } from '../../src/sandbox';
import { startSandbox } from '../support/time-shift';
import { callSandbox } from '../../src/sandbox/client';

const FULL_NUMBER = /\b\d{13,19}\b/;

describe('sandbox over HTTP: lists, payment methods and card reference tokens', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ settings: { ratePerMinute: 10_000 } });
  });
  afterAll(() => sb.close());
  beforeEach(() => sb.reset());

  it('when paging 21 customers with limit 10, then offsets 0, 10 and 20 give 10, 10 and 1 (spec §4)', async () => {
    const sizes: number[] = [];
    for (const offset of [0, 10, 20]) {
      const r = await callSandbox(sb.baseUrl, 'GET', `customers?limit=10&offset=${offset}`);
      expect(r.json).toMatchObject({ type: 'list', limit: 10, offset, total: 21 });
      sizes.push((r.json as { data: unknown[] }).data.length);
    }
    expect(sizes).toEqual([10, 10, 1]);
  });

  it('when limit is not given, then it defaults to 20 and customers carry spec and wire names', async () => {
    const r = await callSandbox(sb.baseUrl, 'GET', 'customers');
    const list = r.json as { limit: number; offset: number; data: Record<string, unknown>[] };
    expect(list).toMatchObject({ limit: 20, offset: 0 });
    expect(list.data).toHaveLength(20);
    const first = sb.fixtures.firstCustomer();
    expect(list.data[0]).toMatchObject({ type: 'customer', key: first.key, custid: first.custid, firstname: first.firstname, lastname: first.lastname, first_name: first.firstname, last_name: first.lastname });
    expect(list.data[0]).not.toHaveProperty('payment_methods');
  });

  it.each(['limit=-1', 'limit=1001', 'limit=abc', 'offset=-5', 'offset=1.5', 'limit=1&limit=2'])('when the query has %s, then 400 with errorcode 40010', async (query) => {
    const r = await callSandbox(sb.baseUrl, 'GET', `customers?${query}`);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ errorcode: 40010 });
  });

  it('when the payment methods of the first customer are listed, then they are masked in the gateway shape', async () => {
    const c = sb.fixtures.firstCustomer();
    const r = await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}/payment_methods`);
    const list = r.json as { total: number; data: Record<string, unknown>[] };
    expect(list).toMatchObject({ type: 'list', total: 3, limit: 20, offset: 0 });
    expect(list.data.map((m) => m.ccnum4last)).toEqual(['2224', '2220', '2275']);
    expect(list.data[0]).toEqual({
      type: 'customerpaymentmethod',
      key: c.payment_methods[0]!.key,
      pmid: c.payment_methods[0]!.pmid,
      method_name: expect.any(String),
      cardholder: expect.any(String),
      expires: c.payment_methods[0]!.expiration, // the card's MMYY, as on the wire
      card_type: 'Visa',
      ccnum4last: '2224',
      avs_street: expect.any(String),
      avs_postalcode: expect.stringMatching(/^\d{5}$/),
      sortord: '1',
      pay_type: 'cc',
      added: expect.any(String),
      updated: expect.any(String),
    });
    expect(r.text).not.toMatch(FULL_NUMBER);
    const paged = await callSandbox(sb.baseUrl, 'GET', `customers/${c.custid}/payment_methods?limit=1&offset=2`);
    expect(paged.json).toMatchObject({ limit: 1, offset: 2, total: 3, data: [{ ccnum4last: '2275' }] });
  });

  it('when a card reference is read, then it is the token object, stable until rotated, expiring in the future', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    const path = `customers/${c.key}/payment_methods/${pm.key}/cardref`;
    const a = await callSandbox(sb.baseUrl, 'GET', path);
    const b = await callSandbox(sb.baseUrl, 'GET', path);
    expect(a.json).toEqual({ type: 'token', cardref: sb.fixtures.cardrefFor(c.key, pm.key), expires: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), ccnumlast4: '2224', cardtype: '01', custkey: c.key, pmkey: pm.key });
    expect(b.json).toEqual(a.json);
    const token = a.json as { cardref: string; expires: string };
    expect(token.cardref).toMatch(/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/);
    expect(token.expires > new Date().toISOString().slice(0, 10)).toBe(true);
    sb.setTokenExpires(c.key, pm.key, '2031-01-31');
    expect((await callSandbox(sb.baseUrl, 'GET', path)).json).toMatchObject({ expires: '2031-01-31', cardref: token.cardref });
  });

  it('when the payment method holds the Amex test card, then cardtype is 03', async () => {
    const amex = sb.fixtures.findByNumber('371122223332225')!;
    const r = await callSandbox(sb.baseUrl, 'GET', `customers/${amex.customer.key}/payment_methods/${amex.method.key}/cardref`);
    expect(r.json).toMatchObject({ cardtype: '03', ccnumlast4: '2225' });
  });

  it('when every customer, payment method and token is read, then no answer holds a full card number', async () => {
    for (const c of sb.fixtures.customers) {
      const pms = await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}/payment_methods`);
      expect(pms.text).not.toMatch(FULL_NUMBER);
      for (const m of c.payment_methods) {
        const t = await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}/payment_methods/${m.key}/cardref`);
        expect(t.text).not.toContain(m.number);
      }
    }
    const fixtures = await callSandbox(sb.url, 'GET', '/_sandbox/fixtures', { auth: false });
    expect(fixtures.status).toBe(200);
    expect(fixtures.text).not.toMatch(FULL_NUMBER);
  });

  it('when tokens are rotated or overridden over the admin routes, then reads follow and reset() restores them', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[2]!;
    const original = sb.fixtures.cardrefFor(c.key, pm.key);
    const rotated = await callSandbox(sb.url, 'POST', '/_sandbox/rotate-cardref', { auth: false, body: { custkey: c.key, pmkey: pm.key } });
    const fresh = (rotated.json as { cardref: string }).cardref;
    expect(fresh).not.toBe(original);
    expect((await callSandbox(sb.url, 'POST', '/_sandbox/token-expires', { auth: false, body: { custkey: c.key, pmkey: pm.key, expires: '2030-02-28' } })).status).toBe(204);
    expect((await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}/payment_methods/${pm.key}/cardref`)).json).toMatchObject({ cardref: fresh, expires: '2030-02-28' });
    expect((await callSandbox(sb.url, 'POST', '/_sandbox/token-expires', { auth: false, body: { custkey: c.key, pmkey: pm.key, expires: 'soon' } })).status).toBe(400);
    sb.reset();
    expect(sb.fixtures.cardrefFor(c.key, pm.key)).toBe(original);
  });

  it('when customers and payment_methods faults are queued, then one customer and one payment method take them', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    sb.faults.next({ kind: '5xx', match: 'customers', status: 502 });
    sb.faults.next({ kind: '5xx', match: 'payment_methods', status: 500 });
    expect((await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}/payment_methods/${pm.key}`)).status).toBe(500);
    expect((await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}`)).status).toBe(502);
    expect((await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}`)).status).toBe(200);
  });
});
