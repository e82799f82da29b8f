import { randomBytes } from 'node:crypto';
import { callSandbox } from '../../src/sandbox/client';
import { startBff, token, type Bff } from '../support/bff';
import { call, gatewayCalls } from '../support/wallet';

/**
 * Bank payments (contract, "Bank payments (ACH)"; issue 38): `POST /v1/sales` with a check form's `payment_key` or a
 * saved bank `payment_method` and the shopper's `authorization`, optionally keeping the account on the customer;
 * the authorization is recorded and shown on the sale, the payment is `pending`; the wallet lists bank methods
 * beside cards (last fours only). Under both readings of the undocumented `check:sale` + `payment_key`
 * (GATEWAY_CHECK_PAYMENT_KEY / SANDBOX_CHECK_PAYMENT_KEY). The sandbox's lifecycle is the judge of what moved.
 */

const run = randomBytes(3).toString('hex');
let n = 0;
const id = (what: string) => `${what}-${run}-${++n}`;
const shopper = (custkey: string) => token({ sub: `bank-shopper-${run}`, custkey, scope: 'sales:create sales:read payment_methods:read payment_methods:write' });
const AGREED = 'I authorize Example Co to debit my account for this order (v3)';
const ACCOUNT = '000123456789';
type Listed = { key: string; pay_type: string; account_last4?: string; routing_last4?: string; account_type?: string; default: boolean };

for (const reading of ['accepted', 'refused'] as const) {
  describe(`POST /v1/sales by bank account (check:sale with a payment key ${reading})`, () => {
    let bff: Bff;
    beforeAll(async () => {
      bff = await startBff({ env: { GATEWAY_CHECK_PAYMENT_KEY: reading }, sandbox: { checkPaymentKey: reading } });
    });
    afterAll(() => bff?.stop());

    const customer = (i: number) => (bff.sandbox.fixtures.customers[i] as { key: string }).key;
    const bankKey = (account = ACCOUNT) => bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account, account_type: 'checking' });
    const pay = (custkey: string, body: Record<string, unknown>, key = id('bank')) =>
      call(bff.url, 'POST', '/v1/sales', shopper(custkey), { customer: custkey, amount: '40.00', ...body }, { 'idempotency-key': key });
    const listed = async (custkey: string) => (await call(bff.url, 'GET', `/v1/customers/${custkey}/payment_methods`, shopper(custkey))).body.data as Listed[];

    it('when a shopper pays with a bank payment key and an authorization, then the gateway debits the account once, the sale is pending and shows the authorization (SEC WEB), and nothing is kept', async () => {
      const c = customer(14);
      const before = await listed(c);
      const res = await pay(c, { payment_key: bankKey(), authorization: { text: AGREED } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ type: 'sale', result_code: 'A', amount: '40.00', status: 'pending', authorization: { text: AGREED, sec: 'WEB' } });
      expect(bff.sandbox.ledger.get(res.body.key as string)).toMatchObject({ kind: 'sale', custkey: c, amount: '40.00' });
      const looked = await call(bff.url, 'GET', `/v1/sales/${res.body.key as string}`, shopper(c));
      expect(looked.body).toMatchObject({ status: 'pending', authorization: { text: AGREED, sec: 'WEB' } });
      // Not kept: the customer's methods are as before (under `refused` the method made to charge is removed after).
      const keys = async () => bff.sandbox.fixtures.paymentMethods(c).map((m) => m.key).sort();
      const expected = before.map((m) => m.key).sort();
      for (let i = 0; i < 200 && JSON.stringify(await keys()) !== JSON.stringify(expected); i++) await new Promise((r) => setTimeout(r, 50));
      expect(await keys()).toEqual(expected);
    });

    it('when the shopper keeps the account, then the answer names a bank method that the wallet lists beside the cards with last fours only, and a later payment with it needs no key', async () => {
      const c = customer(15);
      const res = await pay(c, { payment_key: bankKey(), authorization: { text: AGREED }, save_payment_method: true });
      expect(res.status).toBe(201);
      const pmkey = res.body.payment_method as string;
      expect(typeof pmkey).toBe('string');
      const methods = await listed(c);
      const bank = methods.find((m) => m.key === pmkey);
      expect(bank).toMatchObject({ pay_type: 'check', account_last4: '6789', routing_last4: '0015' });
      expect(methods.some((m) => m.pay_type !== 'check')).toBe(true);
      expect(JSON.stringify(methods)).not.toContain(ACCOUNT);
      const calls = gatewayCalls(bff);
      const again = await pay(c, { payment_method: pmkey, authorization: { text: AGREED }, amount: '12.00' });
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ status: 'pending', payment_method: pmkey, authorization: { sec: 'WEB' } });
      expect(gatewayCalls(bff)).toBe(calls + 1);
      expect(bff.sandbox.ledger.get(again.body.key as string)).toMatchObject({ amount: '12.00', custkey: c });
    });

    it('when the shopper removes a kept bank method, then paying with it answers 404 and debits nothing (guarantee 10)', async () => {
      const c = customer(17);
      const kept = await pay(c, { payment_key: bankKey(), authorization: { text: AGREED }, save_payment_method: true });
      const pmkey = kept.body.payment_method as string;
      const removed = await call(bff.url, 'DELETE', `/v1/customers/${c}/payment_methods/${pmkey}`, shopper(c), undefined, { 'idempotency-key': id('remove') });
      expect(removed.status).toBe(204);
      expect((await listed(c)).some((m) => m.key === pmkey)).toBe(false);
      const debits = bff.sandbox.ledger.entries().filter((e) => e.custkey === c).length;
      const res = await pay(c, { payment_method: pmkey, authorization: { text: AGREED } });
      expect([res.status, res.body.error?.code]).toEqual([404, 'not_found']);
      expect(bff.sandbox.ledger.entries().filter((e) => e.custkey === c)).toHaveLength(debits);
    });

    it('when a kept bank method is paid without an authorization, then 400 names body.authorization, nothing is debited and the key stays free', async () => {
      const c = customer(18);
      const kept = await pay(c, { payment_key: bankKey(), authorization: { text: AGREED }, save_payment_method: true });
      const pmkey = kept.body.payment_method as string;
      const debits = () => bff.sandbox.ledger.entries().filter((e) => e.custkey === c).length;
      const before = debits();
      const key = id('no-authorization');
      const res = await pay(c, { payment_method: pmkey }, key);
      expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_request']);
      expect(res.body.error?.details).toEqual([{ path: 'body.authorization', rule: 'required_for_bank_payment' }]);
      expect(debits()).toBe(before);
      // Nothing was sent: the same key with the authorization added is a new request, not a replay of the 400.
      const again = await pay(c, { payment_method: pmkey, authorization: { text: AGREED } }, key);
      expect([again.status, again.body.status]).toEqual([201, 'pending']);
    });

    it('when a shopper pays with a check form\'s payment key but no authorization, then 400 names body.payment_key and the missing body.authorization (stable rules, nothing echoed), nothing is debited, and the key then pays with the authorization', async () => {
      const c = customer(13);
      const paymentKey = bankKey();
      const debits = () => bff.sandbox.ledger.entries().filter((e) => e.custkey === c).length;
      const before = debits();
      for (const save of [false, true]) {
        const res = await pay(c, { payment_key: paymentKey, ...(save ? { save_payment_method: true } : {}) });
        expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_request']);
        expect(res.body.error?.details).toEqual([
          { path: 'body.payment_key', rule: 'refused_by_gateway' },
          { path: 'body.authorization', rule: 'required_if_bank_payment_key' },
        ]);
        expect(res.body.error?.message).toMatch(/authorization/);
        expect(JSON.stringify(res.body)).not.toContain(paymentKey);
      }
      expect(debits()).toBe(before);
      const paid = await pay(c, { payment_key: paymentKey, authorization: { text: AGREED } });
      expect([paid.status, paid.body.status]).toEqual([201, 'pending']);
    });

    it('when a bank payment names a payment key the gateway does not know, then 400 names body.payment_key only (not a 502) under either reading', async () => {
      const c = customer(13);
      const res = await pay(c, { payment_key: `pk_unknown${run}`, authorization: { text: AGREED } });
      expect([res.status, res.body.error?.details]).toEqual([400, [{ path: 'body.payment_key', rule: 'refused_by_gateway' }]]);
    });

    it('when a bank method tokengate never saw (added at the gateway) is paid without an authorization, then 400 names body.authorization and nothing is debited', async () => {
      const c = customer(11);
      const added = await callSandbox(bff.sandbox.baseUrl, 'POST', `customers/${c}/payment_methods`, { body: [{ pay_type: 'check', account: ACCOUNT, routing: '011000015', account_type: 'checking' }] });
      const pmkey = (added.json as { key: string }[])[0]?.key as string;
      expect(typeof pmkey).toBe('string');
      const debits = () => bff.sandbox.ledger.entries().filter((e) => e.custkey === c).length;
      const before = debits();
      const res = await pay(c, { payment_method: pmkey });
      expect([res.status, res.body.error?.details]).toEqual([400, [{ path: 'body.authorization', rule: 'required_for_bank_payment' }]]);
      expect(debits()).toBe(before);
    });

    it('when a sale names a method the customer\'s view holds no word of, then 404 and the gateway\'s wallet is not read, however often it is tried', async () => {
      const c = customer(12);
      expect((await listed(c)).length).toBeGreaterThan(0); // the view now holds the customer
      const walletReads = () => Object.values(bff.sandbox.stats().endpoints).reduce((sum, e) => sum + (e.acceptedByKind.customers ?? 0), 0);
      const before = walletReads();
      for (let i = 0; i < 3; i++) {
        const res = await pay(c, { payment_method: `nomethod${run}` });
        expect([res.status, res.body.error?.code]).toEqual([404, 'not_found']);
      }
      expect(walletReads()).toBe(before);
    });

    it('when the sandbox clock jumps a day between the check form and the payment, then the key still pays (its life is wall time)', async () => {
      const c = customer(19);
      const paymentKey = bankKey();
      bff.sandbox.clock.advance(86_400_000);
      const res = await pay(c, { payment_key: paymentKey, authorization: { text: AGREED } });
      expect([res.status, res.body.status]).toEqual([201, 'pending']);
    });

    it('when the same key is sent again, then the answer replays and the account is debited once', async () => {
      const c = customer(16);
      const key = id('replay');
      const body = { payment_key: bankKey(), authorization: { text: AGREED } };
      const debits = () => bff.sandbox.ledger.entries().filter((e) => e.custkey === c && e.kind === 'sale').length;
      const first = await pay(c, body, key);
      const before = debits();
      const second = await pay(c, body, key);
      expect(second.body.key).toBe(first.body.key);
      expect(debits()).toBe(before);
    });

    it('when a bank payment asks to authorize only, then 400 and nothing is sent', async () => {
      const c = customer(16);
      const calls = gatewayCalls(bff);
      const res = await pay(c, { payment_key: bankKey(), authorization: { text: AGREED }, capture: false });
      expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_request']);
      expect(gatewayCalls(bff)).toBe(calls);
    });
  });
}
