import {
  GatewayBadRequestError, GatewayNotFoundError, GatewayServerError, GatewayTimeoutError, type CallEvent, type GatewayClient,
} from '../../src/gateway';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { clientFor } from '../support/gateway';

/**
 * The gateway client's wallet calls against the sandbox: typed customers and payment methods, the default
 * derived from sortord 0, errorcodes 99999/40453 as not found, writes never re-sent, reads re-sent once, and a
 * sale with a Pay.js payment key that stores the card.
 */

let sb: RunningSandbox;
let client: GatewayClient;
let events: CallEvent[];

beforeAll(async () => {
  sb = await startSandbox({ settings: { ratePerMinute: 10_000, ratePerDay: 100_000 } });
});
afterAll(() => sb.close());
beforeEach(() => {
  sb.reset();
  sb.update({ deletedCardref: 'refused' });
  events = [];
  client = clientFor(sb, { timeoutMs: 500, onCall: (e) => events.push(e), beforeRetry: async () => undefined });
});
afterEach(() => client.close());

const callsOf = (op: string) => events.filter((e) => e.op === op);

async function paymentKey(number = '4000100011112224', expiration = '1230'): Promise<string> {
  const publicKey = (await client.getPublicKey()).value;
  const res = await fetch(`${sb.url}/js/v2/payment_key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ public_key: publicKey, card: { number, expiration, cvc: '123' } }) });
  return ((await res.json()) as { payment_key: string }).payment_key;
}

/** A card stored the documented way that names the new method: a payment-key sale, then saved from it. */
async function approvedSale(custkey: string, number = '4000100011112224'): Promise<string> {
  const sale = await client.sale({ payment_key: await paymentKey(number), amount: '2.00', custkey });
  expect(sale.value.result_code).toBe('A');
  return sale.value.key;
}

describe('gateway client: customers', () => {
  it('when a customer is created, read, updated and deleted, then each answer is a typed customer and the deleted one is not found', async () => {
    const created = (await client.createCustomer({ customerid: 'shop-1', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', postalcode: '90001' })).value;
    expect(created).toEqual(expect.objectContaining({ type: 'customer', customerid: 'shop-1', first_name: 'Ada', last_name: 'Lovelace', company: '', email: 'ada@example.com', postalcode: '90001' }));
    expect(created.key).toMatch(/^[a-z0-9]{16}$/);
    expect(created.custid).toMatch(/^\d+$/); // a JSON number in the create answer, a string here
    expect(created).not.toHaveProperty('payment_methods'); // null in the answer: not "none"

    const read = (await client.getCustomer(created.key)).value;
    expect(read).toMatchObject({ key: created.key, custid: created.custid, first_name: 'Ada', payment_methods: [] });

    const updated = (await client.updateCustomer(created.key, { company: 'Engines', email: '' })).value;
    expect(updated).toMatchObject({ key: created.key, company: 'Engines', email: '', first_name: 'Ada', postalcode: '90001' });

    expect((await client.deleteCustomer(created.key)).value).toBeUndefined();
    await expect(client.getCustomer(created.key)).rejects.toBeInstanceOf(GatewayNotFoundError);
    await expect(client.deleteCustomer(created.key)).rejects.toMatchObject({ code: 'gateway_not_found', errorcode: 99999, outcome: 'not_processed' });
    await expect(client.updateCustomer(created.key, { company: 'x' })).rejects.toBeInstanceOf(GatewayNotFoundError);
  });

  it('when a fixture customer is read, then its payment methods are typed and none is the default (the fixtures start at sortord 1)', async () => {
    const c = sb.fixtures.firstCustomer();
    const read = (await client.getCustomer(c.key)).value;
    expect(read.payment_methods?.map((m) => [m.ccnum4last, m.sortord, m.default])).toEqual([['2224', 1, false], ['2220', 2, false], ['2275', 3, false]]);
    expect(read.payment_methods?.[0]).not.toHaveProperty('pmid');
  });

  it('when the gateway refuses a customer without names, then it fails as a bad request and nothing is created', async () => {
    await expect(client.createCustomer({ email: 'nobody@example.com' })).rejects.toMatchObject({ code: 'gateway_bad_request', errorcode: 40015 });
    expect((await client.listCustomers({ limit: 100, offset: 0 })).value.total).toBe(21);
  });
});

describe('gateway client: payment methods', () => {
  it('when the card of an approved sale is stored as the default, then the new method is typed, default, and the former default is not', async () => {
    const custkey = (await client.createCustomer({ company: 'Wallet Co' })).value.key;
    const first = (await client.addPaymentMethod(custkey, { pay_type: 'transaction', transaction_key: await approvedSale(custkey), default: true, method_name: 'First' })).value;
    expect(first).toEqual({
      type: 'customerpaymentmethod', key: expect.stringMatching(/^[a-z0-9]{17}$/), pay_type: 'cc', method_name: 'First', cardholder: 'Wallet Co', expires: '1230',
      card_type: 'Visa', ccnum4last: '2224', avs_street: '', avs_postalcode: '', sortord: 0, default: true, added: expect.any(String), updated: expect.any(String),
    });
    const [second, third] = (await client.addPaymentMethods(custkey, [
      { pay_type: 'transaction', transaction_key: await approvedSale(custkey, '5555444433332226'), default: true },
      { pay_type: 'transaction', transaction_key: await approvedSale(custkey, '6011222233332224') },
    ])).value;
    expect([second?.ccnum4last, second?.default, third?.ccnum4last, third?.default]).toEqual(['2226', true, '2224', false]);
    expect((await client.getPaymentMethod(custkey, first.key)).value).toMatchObject({ sortord: 1, default: false });
    const listed = (await client.listPaymentMethods(custkey, { limit: 20, offset: 0 })).value.data;
    expect(listed.filter((m) => m.default).map((m) => m.key)).toEqual([second?.key]);
  });

  it('when a method is updated, then only the four updatable fields go out, even if the caller passes more', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    const changes = { method_name: 'Renewed', expires: '1134', avs_postalcode: '54321', cardholder: 'Not sent', default: true } as Parameters<GatewayClient['updatePaymentMethod']>[2];
    const updated = (await client.updatePaymentMethod(c.key, pm.key, changes)).value;
    expect(updated).toMatchObject({ key: pm.key, method_name: 'Renewed', expires: '1134', avs_postalcode: '54321', cardholder: 'Ada Lovelace', default: false });
    await expect(client.updatePaymentMethod(c.key, pm.key, { expires: '0101' })).rejects.toMatchObject({ code: 'gateway_bad_request', errorcode: 40452 });
    await expect(client.updatePaymentMethod(c.key, 'nosuchmethod00000', { method_name: 'x' })).rejects.toMatchObject({ code: 'gateway_not_found', errorcode: 40453 });
  });

  it('when a method is deleted, then reading or deleting it again is not found (40453)', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[1]!;
    expect((await client.deletePaymentMethod(c.key, pm.key)).value).toBeUndefined();
    await expect(client.getPaymentMethod(c.key, pm.key)).rejects.toBeInstanceOf(GatewayNotFoundError);
    await expect(client.deletePaymentMethod(c.key, pm.key)).rejects.toMatchObject({ errorcode: 40453, status: 404 });
    await expect(client.getCardRef(c.key, pm.key)).rejects.toBeInstanceOf(GatewayNotFoundError);
  });

  it('when a transaction has no card to keep, then storing it fails as a bad request and adds nothing', async () => {
    const custkey = (await client.createCustomer({ company: 'Declines' })).value.key;
    const declined = await client.sale({ payment_key: await paymentKey('4000300011112220'), amount: '2.00', custkey });
    await expect(client.addPaymentMethod(custkey, { pay_type: 'transaction', transaction_key: declined.value.key })).rejects.toBeInstanceOf(GatewayBadRequestError);
    expect((await client.getCustomer(custkey)).value.payment_methods).toEqual([]);
  });
});

describe('gateway client: a removed card\'s token (guarantee 10 rests on tokengate, not on the gateway)', () => {
  it.each([
    ['refused', { result_code: 'E', error_code: '602' }, 0],
    ['honoured', { result_code: 'A', auth_amount: '4.00' }, 1],
  ] as const)('when SANDBOX_DELETED_CARDREF is %s and a method is deleted, then a sale with its old token answers %o', async (mode, expected, charges) => {
    sb.update({ deletedCardref: mode });
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    const cardref = (await client.getCardRef(c.key, pm.key)).value.cardref;
    await client.deletePaymentMethod(c.key, pm.key);
    expect((await client.sale({ cardref, amount: '4.00', invoice: `removed-${mode}` })).value).toMatchObject(expected);
    expect(sb.transactions().filter((t) => t.invoice === `removed-${mode}`)).toHaveLength(charges);
  });
});

describe('gateway client: paying with a new card', () => {
  it('when a payment-key sale asks to save the card, then the customer holds it afterwards; without the flag it does not', async () => {
    const custkey = (await client.createCustomer({ first_name: 'New', last_name: 'Card' })).value.key;
    const kept = await client.sale({ payment_key: await paymentKey(), amount: '12.00', amount_detail: { tax: '1.00' }, invoice: 'pk-save', custkey, save_customer_paymethod: true, method_name: 'Checkout card' });
    expect(kept.value).toMatchObject({ result_code: 'A', invoice: 'pk-save', creditcard: { number: '4000xxxxxxxx2224' } });
    const once = await client.sale({ payment_key: await paymentKey('5555444433332226'), amount: '3.00', invoice: 'pk-once', custkey });
    expect(once.value.result_code).toBe('A');
    const methods = (await client.getCustomer(custkey)).value.payment_methods ?? [];
    expect(methods.map((m) => [m.ccnum4last, m.method_name])).toEqual([['2224', 'Checkout card']]);
    expect((await client.listCustomerTransactions(custkey, { limit: 10, offset: 0 })).value.data.map((t) => t.invoice).sort()).toEqual(['pk-once', 'pk-save']);
    expect((await client.getTransaction(kept.value.key)).value.amount_detail).toMatchObject({ tax: '1.00' });
  });
});

describe('gateway client: wallet writes are never re-sent, reads are', () => {
  it('when creating a customer meets a 5xx after the gateway acted, then it fails once, is not re-sent, and one customer exists', async () => {
    sb.faults.next({ kind: '5xx', match: 'customers', when: 'after' });
    await expect(client.createCustomer({ company: 'Once Inc' })).rejects.toBeInstanceOf(GatewayServerError);
    expect(callsOf('customer_create')).toHaveLength(1);
    const all = (await client.listCustomers({ limit: 100, offset: 0 })).value.data;
    expect(all.filter((c) => c.company === 'Once Inc')).toHaveLength(1);
  });

  it.each([
    ['payment_method_delete', (c: GatewayClient, k: string, pm: string) => c.deletePaymentMethod(k, pm)],
    ['payment_method_update', (c: GatewayClient, k: string, pm: string) => c.updatePaymentMethod(k, pm, { method_name: 'x' })],
    ['customer_delete', (c: GatewayClient, k: string) => c.deleteCustomer(k)],
  ] as const)('when %s hangs past the timeout, then the outcome is unknown and it is not re-sent', async (op, write) => {
    const c = sb.fixtures.firstCustomer();
    sb.faults.next({ kind: 'hang', match: op.startsWith('customer') ? 'customers' : 'payment_methods' });
    const err = await write(client, c.key, c.payment_methods[0]!.key).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayTimeoutError);
    expect(err).toMatchObject({ outcome: 'unknown' });
    expect(callsOf(op)).toHaveLength(1);
  });

  it('when adding payment methods is reset after the gateway read it, then it is not re-sent and the method was added once', async () => {
    const custkey = (await client.createCustomer({ company: 'Reset Co' })).value.key;
    const trankey = await approvedSale(custkey);
    sb.faults.next({ kind: 'reset', match: 'payment_methods' });
    await expect(client.addPaymentMethod(custkey, { pay_type: 'transaction', transaction_key: trankey })).rejects.toMatchObject({ outcome: 'unknown' });
    expect(callsOf('payment_method_add')).toHaveLength(1);
    expect(sb.fixtures.paymentMethods(custkey)).toHaveLength(1);
  });

  it('when reading a customer or a payment method meets a 5xx once, then it is re-sent once and succeeds', async () => {
    const c = sb.fixtures.firstCustomer();
    sb.faults.next({ kind: '5xx', match: 'customers' });
    sb.faults.next({ kind: '5xx', match: 'payment_methods' });
    expect((await client.getCustomer(c.key)).value.key).toBe(c.key);
    expect((await client.getPaymentMethod(c.key, c.payment_methods[0]!.key)).value.ccnum4last).toBe('2224');
    expect([callsOf('customer').length, callsOf('payment_method').length]).toEqual([2, 2]);
  });
});
