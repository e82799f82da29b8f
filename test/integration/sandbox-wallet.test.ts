import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { callSandbox, type SandboxReply } from '../../src/sandbox/client';

/**
 * The wallet at the sandbox (gateway-facts.md, "Managing customers and payment methods"): customers created,
 * changed and removed; payment methods added as arrays, updated in their four fields, removed; the default as
 * sortord 0; a removed method's card reference refused (602) or honoured, by SANDBOX_DELETED_CARDREF.
 */

const FULL_NUMBER = /\b\d{13,19}\b/;
const KEY_16 = /^[a-z0-9]{16}$/;
const KEY_17 = /^[a-z0-9]{17}$/;

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox({ settings: { ratePerMinute: 10_000 } });
});
afterAll(() => sb.close());
beforeEach(() => {
  sb.reset();
  sb.update({ deletedCardref: 'refused' });
});

const api = (method: string, path: string, body?: unknown) => callSandbox(sb.baseUrl, method, path, body === undefined ? {} : { body });
const json = (r: SandboxReply) => r.json as Record<string, unknown>;
const card = (number: string, extra: Record<string, unknown> = {}) => ({ pay_type: 'cc', number, expiration: '0930', cardholder: 'Test Holder', ...extra });

async function newCustomer(body: Record<string, unknown> = { first_name: 'Wallet', last_name: 'Tester' }): Promise<string> {
  const r = await api('POST', 'customers', body);
  expect(r.status).toBe(200);
  return json(r).key as string;
}

async function addCards(custkey: string, items: unknown[]): Promise<Record<string, unknown>[]> {
  const r = await api('POST', `customers/${custkey}/payment_methods`, items);
  expect(r.status).toBe(200);
  expect(r.text).not.toMatch(FULL_NUMBER);
  return r.json as Record<string, unknown>[];
}

async function cardrefOf(custkey: string, pmkey: string): Promise<string> {
  return json(await api('GET', `customers/${custkey}/payment_methods/${pmkey}/cardref`)).cardref as string;
}

const sale = (cardref: string, invoice: string) => api('POST', 'transactions', { command: 'cc:sale', amount: '5.00', UMCardRef: cardref, invoice });

describe('sandbox wallet: customers', () => {
  it('when a customer is created, then the answer is the customer with a 16-character key, custid a number and null lists; GET then reads it', async () => {
    const r = await api('POST', 'customers', { company: 'Acme', first_name: 'Ada', last_name: 'Byron', customerid: 'shop-42', postalcode: 90038, email: 'ada@example.com' });
    expect(r.status).toBe(200);
    const created = json(r);
    expect(created).toMatchObject({ type: 'customer', company: 'Acme', first_name: 'Ada', last_name: 'Byron', customerid: 'shop-42', postalcode: '90038', email: 'ada@example.com', street: '', payment_methods: null, billing_schedules: null });
    expect(created.key).toMatch(KEY_16);
    expect(typeof created.custid).toBe('number');
    const got = json(await api('GET', `customers/${created.key as string}`));
    expect(got).toMatchObject({ key: created.key, custid: String(created.custid), company: 'Acme', payment_methods: [], billing_schedules: [] });
    expect(Object.keys(got.custom_fields as object)).toHaveLength(20);
    expect(json(await api('GET', 'customers?limit=100')).total).toBe(22);
    sb.reset();
    expect(json(await api('GET', 'customers?limit=100')).total).toBe(21);
  });

  it('when neither company nor both names are given, then 400 with errorcode 40015; the spec\'s firstname/lastname count as names', async () => {
    for (const body of [{}, { first_name: 'Only' }, { last_name: 'Only', email: 'x@example.com' }]) {
      const r = await api('POST', 'customers', body);
      expect([r.status, json(r).errorcode]).toEqual([400, 40015]);
    }
    expect((await api('POST', 'customers', [{ company: 'Array Inc' }])).status).toBe(400);
    const spec = json(await api('POST', 'customers', { firstname: 'Spec', lastname: 'Names' }));
    expect(spec).toMatchObject({ first_name: 'Spec', last_name: 'Names' });
    expect(json(await api('GET', 'customers?limit=100')).total).toBe(22);
  });

  it('when a customer is updated, then sent fields change, empty ones are cleared and the others are kept; a nameless result is refused', async () => {
    const key = await newCustomer({ company: 'Old Co', first_name: 'Grace', last_name: 'Hopper', city: 'Arlington', phone: '555' });
    const r = await api('PUT', `customers/${key}`, { company: 'New Co', phone: '', email: 'grace@example.com' });
    expect(r.status).toBe(200);
    expect(json(r)).toMatchObject({ key, company: 'New Co', phone: '', email: 'grace@example.com', city: 'Arlington', first_name: 'Grace', payment_methods: null });
    expect(typeof json(r).custid).toBe('string');
    expect(json(await api('GET', `customers/${key}`))).toMatchObject({ company: 'New Co', phone: '', city: 'Arlington' });
    const nameless = await api('PUT', `customers/${key}`, { company: '', last_name: '' });
    expect([nameless.status, json(nameless).errorcode]).toEqual([400, 40015]);
    expect(json(await api('GET', `customers/${key}`))).toMatchObject({ company: 'New Co', last_name: 'Hopper' });
    expect(json(await api('PUT', 'customers/nosuchcustomer00', { company: 'X' }))).toEqual({ error: 'Customer Not Found', errorcode: 99999 });
  });

  it('when a customer is deleted, then it answers {"status":"success"}, reads 404/99999 from then on, and its cards\' tokens are refused with 602', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    const ref = await cardrefOf(c.key, pm.key);
    const r = await api('DELETE', `customers/${c.key}`);
    expect([r.status, r.json]).toEqual([200, { status: 'success' }]);
    for (const path of [`customers/${c.key}`, `customers/${c.key}/payment_methods`, `customers/${c.key}/payment_methods/${pm.key}/cardref`]) {
      const gone = await api('GET', path);
      expect([gone.status, gone.json]).toEqual([404, { error: 'Customer Not Found', errorcode: 99999 }]);
    }
    expect((await api('DELETE', `customers/${c.key}`)).json).toEqual({ error: 'Customer Not Found', errorcode: 99999 });
    expect(json(await sale(ref, 'after-customer-delete'))).toMatchObject({ result_code: 'E', error: 'Invalid card reference token (2)', error_code: '602' });
    expect(sb.transactions()).toHaveLength(0);
    sb.reset();
    expect((await api('GET', `customers/${c.key}`)).status).toBe(200);
    expect(json(await sale(ref, 'after-reset'))).toMatchObject({ result_code: 'A' });
  });

  it('when DELETE carries the PHP SDK\'s [] or the .NET client\'s {} as its body, then the body is ignored', async () => {
    for (const rawBody of ['[]', '{}']) {
      const key = await newCustomer();
      const r = await callSandbox(sb.baseUrl, 'DELETE', `customers/${key}`, { rawBody });
      expect(r.json).toEqual({ status: 'success' });
    }
  });
});

describe('sandbox wallet: payment methods', () => {
  it('when cards are added as an array, then the answer is an array in request order: 17-character keys, sortord numbers, no pmid, no default field', async () => {
    const key = await newCustomer();
    const added = await addCards(key, [card('4000100011112224', { method_name: 'Work', avs_street: '1 Main', avs_postalcode: '12345' }), card('5555444433332226')]);
    expect(added.map((m) => m.ccnum4last)).toEqual(['2224', '2226']);
    expect(added[0]).toEqual({
      key: expect.stringMatching(KEY_17), type: 'customerpaymentmethod', method_name: 'Work', expires: '0930', cardholder: 'Test Holder', card_type: 'Visa',
      ccnum4last: '2224', avs_street: '1 Main', avs_postalcode: '12345', sortord: 1, added: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/), updated: expect.any(String), pay_type: 'cc',
    });
    expect(added[1]).toMatchObject({ card_type: 'MasterCard', method_name: '5555xxxxxxxx2226', sortord: 2 });
    const one = json(await api('GET', `customers/${key}/payment_methods/${added[1]!.key as string}`));
    expect(one).toMatchObject({ key: added[1]!.key, sortord: '2' });
    expect(json(await api('GET', `customers/${key}/payment_methods`)).total).toBe(2);
  });

  it('when a method is added with default: true, then its sortord is 0 and the former default moves to 1', async () => {
    const key = await newCustomer();
    const [first] = await addCards(key, [card('4000100011112224', { default: true })]);
    expect(first).toMatchObject({ sortord: 0 });
    const [second] = await addCards(key, [card('4000100111112223', { default: true })]);
    expect(second).toMatchObject({ sortord: 0 });
    const list = json(await api('GET', `customers/${key}/payment_methods`)).data as Record<string, unknown>[];
    expect(list.map((m) => [m.key, m.sortord])).toEqual([[first!.key, '1'], [second!.key, '0']]);
    const [third] = await addCards(key, [card('4000100211112222', { sortord: 5 })]);
    expect(third).toMatchObject({ sortord: 5 });
  });

  it('when the body is not an array, is empty, or one item is bad, then one error object answers and nothing is added', async () => {
    const key = await newCustomer();
    const cases: [unknown, number][] = [
      [card('4000100011112224'), 40014],
      [[], 40457],
      [[card('4000100011112224'), card('4000100011112224', { expiration: '0120' })], 40452],
      [[card('4000100011112224', { expiration: '1399' })], 40452],
      [[card('4000100011112225')], 40016],
      [[{ pay_type: 'check', account: '123', routing: '456' }], 38], // a bank method's routing number that is none (gateway-facts.md, ACH: error 38),
      [[card('4000100011112224', { sortord: -1 })], 40008],
    ];
    for (const [body, errorcode] of cases) {
      const r = await api('POST', `customers/${key}/payment_methods`, body);
      expect([r.status, json(r).errorcode]).toEqual([400, errorcode]);
      expect(r.text).not.toMatch(FULL_NUMBER);
    }
    expect(json(await api('GET', `customers/${key}/payment_methods`)).total).toBe(0);
    expect(json(await api('POST', 'customers/nosuchcustomer00/payment_methods', [card('4000100011112224')]))).toEqual({ error: 'Customer Not Found', errorcode: 99999 });
  });

  it('when the card of an approved transaction is saved (pay_type transaction), then the answer names the new method; a decline has none to save', async () => {
    const key = await newCustomer();
    const pk = json(await api('POST', 'transactions', { command: 'cc:sale', amount: '3.00', creditcard: { number: '4000100011112224', expiration: '0931', cvc: '123' } })).key as string;
    const [saved] = await addCards(key, [{ pay_type: 'transaction', transaction_key: pk, method_name: 'From sale' }]);
    expect(saved).toMatchObject({ key: expect.stringMatching(KEY_17), method_name: 'From sale', ccnum4last: '2224', expires: '0931', cardholder: 'Wallet Tester', sortord: 1 });
    expect(json(await sale(await cardrefOf(key, saved!.key as string), 'saved-from-tx'))).toMatchObject({ result_code: 'A', creditcard: { number: '4000xxxxxxxx2224' } });
    const declined = json(await api('POST', 'transactions', { command: 'cc:sale', amount: '3.00', creditcard: { number: '4000300011112220', expiration: '0931' } })).key as string;
    const none = await api('POST', `customers/${key}/payment_methods`, [{ pay_type: 'transaction', transaction_key: declined }]);
    expect([none.status, json(none).errorcode]).toEqual([400, 40457]);
    const unknown = await api('POST', `customers/${key}/payment_methods`, [{ pay_type: 'transaction', transaction_key: 'dnosuchtrankey0' }]);
    expect([unknown.status, json(unknown).errorcode]).toEqual([400, 20001]);
  });

  it('when a method is updated, then only method_name, expires, avs_street and avs_postalcode change, updated is bumped and the token follows the new expiry', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    const before = json(await api('GET', `customers/${c.key}/payment_methods/${pm.key}`));
    const r = await api('PUT', `customers/${c.key}/payment_methods/${pm.key}`, { method_name: 'Renewed', expires: '1133', avs_street: '', avs_postalcode: '54321' });
    expect(r.status).toBe(200);
    expect(json(r)).toMatchObject({ key: pm.key, method_name: 'Renewed', expires: '1133', avs_street: '', avs_postalcode: '54321', cardholder: before.cardholder, sortord: '1' });
    expect(json(r)).not.toHaveProperty('pmid');
    expect(json(r).updated).not.toBe(before.updated);
    expect(json(await api('GET', `customers/${c.key}/payment_methods/${pm.key}/cardref`))).toMatchObject({ expires: '2033-11-30' });
    for (const body of [{ default: true }, { cardholder: 'Someone Else' }, { method_name: 'x', sortord: 0 }]) {
      const refused = await api('PUT', `customers/${c.key}/payment_methods/${pm.key}`, body);
      expect([refused.status, json(refused).errorcode]).toEqual([400, 40008]);
    }
    for (const expires of ['1399', '0120', '', 930]) {
      expect(json(await api('PUT', `customers/${c.key}/payment_methods/${pm.key}`, { expires })).errorcode).toBe(40452);
    }
    expect(json(await api('GET', `customers/${c.key}/payment_methods/${pm.key}`))).toMatchObject({ method_name: 'Renewed', cardholder: before.cardholder, expires: '1133' });
    expect(json(await api('PUT', `customers/${c.key}/payment_methods/nosuchmethod00000`, { method_name: 'x' }))).toEqual({ error: 'Payment Method Not Found', errorcode: 40453 });
  });

  it('when a method is deleted, then it answers {"status":"success"}, reads 40453 from then on, and a sale with its token is refused with 602, charging nothing', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    const ref = await cardrefOf(c.key, pm.key);
    expect((await api('DELETE', `customers/${c.key}/payment_methods/${pm.key}`)).json).toEqual({ status: 'success' });
    const gone = await api('GET', `customers/${c.key}/payment_methods/${pm.key}`);
    expect([gone.status, gone.json]).toEqual([404, { error: 'Payment Method Not Found', errorcode: 40453 }]);
    expect((await api('DELETE', `customers/${c.key}/payment_methods/${pm.key}`)).status).toBe(404);
    expect((json(await api('GET', `customers/${c.key}/payment_methods`)).data as { key: string }[]).map((m) => m.key)).not.toContain(pm.key);
    expect(json(await sale(ref, 'removed-refused'))).toMatchObject({ result_code: 'E', error_code: '602', error: 'Invalid card reference token (2)' });
    expect(sb.transactions()).toHaveLength(0);
  });

  it('when SANDBOX_DELETED_CARDREF is honoured, then a removed method\'s token still charges the card', async () => {
    sb.update({ deletedCardref: 'honoured' });
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    const ref = await cardrefOf(c.key, pm.key);
    expect((await api('DELETE', `customers/${c.key}/payment_methods/${pm.key}`)).json).toEqual({ status: 'success' });
    expect((await api('GET', `customers/${c.key}/payment_methods/${pm.key}/cardref`)).status).toBe(404);
    expect(json(await sale(ref, 'removed-honoured'))).toMatchObject({ result_code: 'A', auth_amount: '5.00', creditcard: { number: '4000xxxxxxxx2224' } });
    expect(sb.transactions()).toMatchObject([{ invoice: 'removed-honoured', cardref: ref, result_code: 'A' }]);
    const settings = await callSandbox(sb.url, 'POST', '/_sandbox/settings', { auth: false, body: { deletedCardref: 'sometimes' } });
    expect(settings.status).toBe(400);
  });

  it('when a payment-key sale saves the card to the customer, then the method is stored, and the answer names the customer but not the method', async () => {
    const key = await newCustomer();
    const publicKey = (await api('GET', 'publickey')).json as string;
    const minted = await fetch(`${sb.url}/js/v2/payment_key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ public_key: publicKey, card: { number: '4000100011112224', expiration: '1230', cvc: '123' } }) });
    const paymentKey = ((await minted.json()) as { payment_key: string }).payment_key;
    const r = json(await api('POST', 'transactions', { command: 'cc:sale', amount: '9.00', payment_key: paymentKey, custkey: key, save_customer_paymethod: true, save_card: true }));
    expect(r).toMatchObject({ result_code: 'A', customer: { custkey: key } });
    const [method] = json(await api('GET', `customers/${key}/payment_methods`)).data as Record<string, unknown>[];
    expect(method).toMatchObject({ ccnum4last: '2224', expires: '1230' });
    expect(JSON.stringify(r)).not.toContain(method!.key as string);
  });

  it('when a payment_methods fault strikes after processing, then the method was added though the answer was lost', async () => {
    const key = await newCustomer();
    sb.faults.next({ kind: '5xx', match: 'payment_methods', when: 'after' });
    expect((await api('POST', `customers/${key}/payment_methods`, [card('4000100011112224')])).status).toBe(503);
    expect(json(await api('GET', `customers/${key}/payment_methods`)).total).toBe(1);
  });
});
