import { randomBytes } from 'node:crypto';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call, mintPaymentKey } from '../support/wallet';

/**
 * A check form's `payment_key` sent without `authorization` goes out as a card's (`cc:sale` with the key). Whether the
 * gateway refuses it there or debits the account as a check is undocumented (gateway-facts.md, ACH), so both readings
 * are served (SANDBOX_CARD_SALE_CHECK_KEY, src/sandbox/README.md "ACH"): under each the caller gets the 400 naming
 * `body.authorization` and no check debit stands in the sandbox's ledger (contract, "Bank payments", guarantee 14).
 * A refusal moved nothing, so the Idempotency-Key is free for the corrected request; a debit that was voided moved
 * money, so its key keeps its answer. The sandbox's ledger is the judge.
 */

const run = randomBytes(3).toString('hex');
let n = 0;
const id = (what: string) => `${what}-${run}-${++n}`;
const shopper = (custkey: string) => token({ sub: `ckc-shopper-${run}`, custkey, scope: 'sales:create sales:read payment_methods:read payment_methods:write' });
const SECRET = 'gateway-webhook-signature-key-for-check-keys-on-card-sales';
const service = () => token({ sub: `ckc-service-${run}`, scope: 'customers:any events:read' }, { expiresIn: 600 });
const AGREED = 'I authorize Example Co to debit my account for this order (v7)';
const REFUSAL = [
  { path: 'body.payment_key', rule: 'refused_by_gateway' },
  { path: 'body.authorization', rule: 'required_if_bank_payment_key' },
];

for (const reading of ['refused', 'charged'] as const) {
  describe(`a check form's payment key paid without authorization (a card sale's check key ${reading})`, () => {
    let bff: Bff;
    beforeAll(async () => {
      bff = await startBff({
        env: { GATEWAY_WEBHOOK_SECRET: SECRET, GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '200', RECONCILE_MAX_PROCESSING_MS: '1500' },
        sandbox: { cardSaleCheckKey: reading },
      });
      bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
    });
    afterAll(() => bff?.stop());
    afterEach(() => bff.sandbox.faults.clear());

    const customer = (i: number) => (bff.sandbox.fixtures.customers[i] as { key: string }).key;
    const bankKey = () => bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account: '000123456789', account_type: 'checking' });
    const pay = (custkey: string, body: Record<string, unknown>, key: string) =>
      call(bff.url, 'POST', '/v1/sales', shopper(custkey), { customer: custkey, amount: '31.00', ...body }, { 'idempotency-key': key });
    /** The customer's check debits of 31.00 that stand (not voided). */
    const standing = (custkey: string) => bff.sandbox.ledger.entries().filter((e) => e.custkey === custkey && e.ach !== undefined && e.amount === '31.00' && !e.voided && e.ach.status !== 'V');
    const debits = (custkey: string) => bff.sandbox.ledger.entries().filter((e) => e.custkey === custkey && e.ach !== undefined && e.amount === '31.00');
    /** The same request under the same key, sent again until its answer is `done` (the reconciler has resolved it). */
    const payUntil = async (custkey: string, body: Record<string, unknown>, key: string, done: (status: number) => boolean) => {
      let answer!: Awaited<ReturnType<typeof pay>>;
      await eventually(async () => done((answer = await pay(custkey, body, key)).status));
      return answer;
    };
    /** The bank account saved from the key is gone at the gateway, and never charged from then on, even with the shopper's authorization. */
    const expectSavedGone = async (custkey: string, before: string[], saved: string[]) => {
      expect(bff.sandbox.fixtures.paymentMethods(custkey).map((m) => m.key)).toEqual(before);
      const paid = await pay(custkey, { payment_method: saved[0], authorization: { text: AGREED } }, id('pay-removed'));
      expect(paid.status).toBe(404);
      expect(standing(custkey)).toEqual([]);
    };

    it('when the key is sent without authorization, then 400 names body.authorization and no check debit stands', async () => {
      const c = customer(14);
      const res = await pay(c, { payment_key: bankKey() }, id('no-auth'));
      expect([res.status, res.body.error?.code, res.body.error?.details]).toEqual([400, 'invalid_request', REFUSAL]);
      expect(standing(c)).toEqual([]);
      // Charged as a check, it was voided while pending; refused, nothing was debited at all.
      expect(debits(c).map((e) => e.ach?.status)).toEqual(reading === 'charged' ? ['V'] : []);
      // The gateway's webhooks about the voided check (its sale, its void) reach tokengate and make no payment event.
      const check = debits(c)[0]?.key;
      if (check === undefined) return;
      const about = (e: { payload: Record<string, unknown> }) => ((e.payload.event_body as { object?: { key?: string } } | undefined)?.object?.key) === check;
      const told = () => bff.sandbox.webhooks.events().filter(about).map((e) => e.event_id);
      await eventually(() => told().length >= 2 && told().every((id) => bff.sandbox.webhooks.attempts().some((a) => a.event_id === id && a.outcome === 'delivered')));
      const events = (await call(bff.url, 'GET', '/v1/events?limit=1000', service())).body.data as { type: string; data: { key?: string } }[];
      expect(events.filter((e) => e.data.key === check)).toEqual([]);
    });

    it('when the key is sent to add a card, then 400 names body.payment_key, no debit stands and no bank account is kept, at the gateway or in the wallet', async () => {
      const c = customer(11);
      const before = bff.sandbox.fixtures.paymentMethods(c).map((m) => m.key);
      const key = id('add-check-key');
      const body = { payment_key: bankKey() };
      const add = () => call(bff.url, 'POST', `/v1/customers/${c}/payment_methods`, shopper(c), body, { 'idempotency-key': key });
      const res = await add();
      expect([res.status, res.body.error?.code, res.body.error?.details]).toEqual([400, 'invalid_request', [{ path: 'body.payment_key', rule: 'refused_by_gateway' }]]);
      // Debited as a check, the verification was voided while pending; refused, nothing was debited at all.
      const verifications = () => bff.sandbox.ledger.entries().filter((e) => e.custkey === c && e.ach !== undefined);
      expect(verifications().map((e) => e.ach?.status)).toEqual(reading === 'charged' ? ['V'] : []);
      // The bank account the gateway saved from the key (charged) is removed: the gateway holds the methods it held.
      expect(bff.sandbox.fixtures.paymentMethods(c).map((m) => m.key)).toEqual(before);
      const listed = await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, shopper(c), undefined, { 'cache-control': 'no-cache' });
      expect((listed.body.data as { pay_type?: string }[]).filter((m) => m.pay_type === 'check')).toEqual([]);
      // Money moved (charged) and was given back: the key keeps its 400. Refused, nothing moved: the key was freed.
      const again = await add();
      expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([400, reading === 'charged' ? 'true' : null]);
      expect(verifications().map((e) => e.ach?.status)).toEqual(reading === 'charged' ? ['V'] : []);
    });

    it('when the key is paid with save_payment_method and no authorization, then 400 names body.authorization, no debit stands and no bank account is kept, at the gateway or in the wallet', async () => {
      const c = customer(20);
      const before = bff.sandbox.fixtures.paymentMethods(c).map((m) => m.key);
      const wallet = async (fresh: boolean) => {
        const listed = await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, shopper(c), undefined, fresh ? { 'cache-control': 'no-cache' } : {});
        expect(listed.status).toBe(200);
        return (listed.body.data as { key: string }[]).map((m) => m.key);
      };
      // The customer's view is held before the sale: what it lists after comes from tokengate's own view.
      const held = await wallet(false);
      const key = id('save-no-auth');
      const body = { payment_key: bankKey(), save_payment_method: true };
      const res = await pay(c, body, key);
      expect([res.status, res.body.error?.code, res.body.error?.details]).toEqual([400, 'invalid_request', REFUSAL]);
      expect(standing(c)).toEqual([]);
      expect(debits(c).map((e) => e.ach?.status)).toEqual(reading === 'charged' ? ['V'] : []);
      // The bank account the gateway saved from the key (charged) is removed: the gateway holds the methods it held.
      expect(bff.sandbox.fixtures.paymentMethods(c).map((m) => m.key)).toEqual(before);
      expect([await wallet(false), await wallet(true)]).toEqual([held, held]);
      // Money moved (charged) and was given back: the key keeps its 400 and nothing more is sent or kept.
      const again = await pay(c, body, key);
      expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([400, reading === 'charged' ? 'true' : null]);
      expect(bff.sandbox.fixtures.paymentMethods(c).map((m) => m.key)).toEqual(before);
    });

    if (reading === 'refused') {
      it('when the corrected request (with the authorization) is sent under the same Idempotency-Key, then 201 and the account is debited once', async () => {
        const c = customer(15);
        const key = id('corrected');
        const paymentKey = bankKey();
        const first = await pay(c, { payment_key: paymentKey }, key);
        expect([first.status, first.body.error?.details]).toEqual([400, REFUSAL]);
        const again = await pay(c, { payment_key: paymentKey, authorization: { text: AGREED } }, key);
        expect([again.status, again.body.status, again.body.authorization]).toEqual([201, 'pending', { text: AGREED, sec: 'WEB' }]);
        expect(debits(c).map((e) => e.key)).toEqual([again.body.key]);
        // The corrected request's answer is the one kept for the key now.
        const replay = await pay(c, { payment_key: paymentKey, authorization: { text: AGREED } }, key);
        expect([replay.status, replay.body.key, replay.headers.get('idempotent-replayed')]).toEqual([201, again.body.key, 'true']);
        expect(debits(c)).toHaveLength(1);
      });
    }

    if (reading === 'charged') {
      it('when the debit was voided, then its key keeps the 400 (money moved): the same request replays it and another is 422', async () => {
        const c = customer(16);
        const key = id('kept');
        const paymentKey = bankKey();
        const first = await pay(c, { payment_key: paymentKey }, key);
        expect([first.status, first.body.error?.details]).toEqual([400, REFUSAL]);
        const replay = await pay(c, { payment_key: paymentKey }, key);
        expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([400, 'true']);
        const other = await pay(c, { payment_key: paymentKey, authorization: { text: AGREED } }, key);
        expect([other.status, other.body.error?.code]).toEqual([422, 'idempotency_key_reused']);
        expect(standing(c)).toEqual([]);
      });

      it('when the key is sent to authorize only (capture false) without authorization, then the same 400 and the check debit is voided', async () => {
        const c = customer(19);
        const res = await pay(c, { payment_key: bankKey(), capture: false }, id('authonly'));
        expect([res.status, res.body.error?.details]).toEqual([400, REFUSAL]);
        expect(debits(c).map((e) => e.ach?.status)).toEqual(['V']);
      });

      it('when an authorize-only answer is lost, then the reconciler finds the check sale it became, voids it, and the key answers the 400', async () => {
        const c = customer(13);
        const key = id('authonly-lost');
        const body = { payment_key: bankKey(), capture: false };
        bff.sandbox.faults.next({ kind: 'hang', match: 'authonly', when: 'after' });
        const first = await pay(c, body, key);
        expect(first.status).toBe(504);
        const answer = await payUntil(c, body, key, (status) => status === 400);
        expect([answer.body.error?.details, answer.headers.get('tokengate-reconciled')]).toEqual([REFUSAL, 'true']);
        expect(debits(c).map((e) => e.ach?.status)).toEqual(['V']);
      });

      it('when a check form\'s key is added as a card and the void of its verification is lost, then the reconciler finds the check the verification became, voids it, removes the bank account it saved, and the key answers the 400', async () => {
        const c = customer(12);
        const before = bff.sandbox.fixtures.paymentMethods(c).map((m) => m.key);
        const key = id('add-card');
        const body = { payment_key: bankKey() };
        bff.sandbox.faults.next({ kind: 'hang', match: 'void', when: 'before' });
        const add = () => call(bff.url, 'POST', `/v1/customers/${c}/payment_methods`, shopper(c), body, { 'idempotency-key': key });
        const first = await add();
        expect([first.status, first.body.error?.code]).toEqual([409, 'outcome_unknown']);
        // The bank account the gateway saved from the key, while the outcome is unknown.
        const saved = bff.sandbox.fixtures.paymentMethods(c).filter((m) => !before.includes(m.key)).map((m) => m.key);
        expect(saved).toHaveLength(1);
        let answer = first;
        await eventually(async () => (answer = await add()).status !== 409);
        expect([answer.status, answer.body.error?.details, answer.headers.get('tokengate-reconciled')]).toEqual([400, [{ path: 'body.payment_key', rule: 'refused_by_gateway' }], 'true']);
        const verifications = bff.sandbox.ledger.entries().filter((e) => e.custkey === c && e.ach !== undefined);
        expect(verifications.map((e) => e.ach?.status)).toEqual(['V']);
        await expectSavedGone(c, before, saved);
      });

      it('when the void\'s answer is lost, then the caller hears outcome_unknown, the reconciler voids the check, and the key then answers the 400', async () => {
        const c = customer(17);
        const key = id('void-lost');
        const body = { payment_key: bankKey() };
        bff.sandbox.faults.next({ kind: 'hang', match: 'void', when: 'before' });
        const first = await pay(c, body, key);
        expect([first.status, first.body.error?.code]).toEqual([409, 'outcome_unknown']);
        const answer = await payUntil(c, body, key, (status) => status !== 409);
        expect([answer.status, answer.body.error?.details, answer.headers.get('tokengate-reconciled')]).toEqual([400, REFUSAL, 'true']);
        expect(debits(c).map((e) => e.ach?.status)).toEqual(['V']);
      });

      for (const lost of ['sale', 'void'] as const) {
        it(`when a check form's key is paid with save_payment_method and no authorization and the ${lost}'s answer is lost, then the reconciler voids the check, removes the bank account it saved, and the key answers the 400`, async () => {
          const c = customer(lost === 'sale' ? 9 : 10);
          const before = bff.sandbox.fixtures.paymentMethods(c).map((m) => m.key);
          const key = id(`save-${lost}-lost`);
          const body = { payment_key: bankKey(), save_payment_method: true };
          bff.sandbox.faults.next(lost === 'sale' ? { kind: 'hang', match: 'sale', when: 'after' } : { kind: 'hang', match: 'void', when: 'before' });
          const first = await pay(c, body, key);
          expect(first.status).toBe(lost === 'sale' ? 504 : 409);
          // The bank account the gateway saved from the key, while the outcome is unknown.
          const saved = bff.sandbox.fixtures.paymentMethods(c).filter((m) => !before.includes(m.key)).map((m) => m.key);
          expect(saved).toHaveLength(1);
          const answer = await payUntil(c, body, key, (status) => status === 400);
          expect([answer.body.error?.details, answer.headers.get('tokengate-reconciled')]).toEqual([REFUSAL, 'true']);
          expect(debits(c).map((e) => e.ach?.status)).toEqual(['V']);
          const listed = await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, shopper(c));
          expect((listed.body.data as { key: string }[]).map((m) => m.key).filter((k) => saved.includes(k))).toEqual([]);
          await expectSavedGone(c, before, saved);
        });
      }

      it('when the sale\'s own answer is lost, then the reconciler finds the check by its invoice, voids it, and the key answers the 400', async () => {
        const c = customer(18);
        const key = id('sale-lost');
        const body = { payment_key: bankKey() };
        bff.sandbox.faults.next({ kind: 'hang', match: 'sale', when: 'after' });
        const first = await pay(c, body, key);
        expect(first.status).toBe(504);
        const answer = await payUntil(c, body, key, (status) => status === 400);
        expect([answer.body.error?.details, answer.headers.get('tokengate-reconciled')]).toEqual([REFUSAL, 'true']);
        expect(debits(c).map((e) => e.ach?.status)).toEqual(['V']);
        expect(standing(c)).toEqual([]);
      });
    }
  });
}

describe('a payment key refused before processing frees its Idempotency-Key; an unknown outcome never does', () => {
  let bff: Bff;
  beforeAll(async () => {
    // The reconciler looks rarely here: a key's unknown outcome stays unknown for the whole test.
    bff = await startBff({ env: { GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '600000', RECONCILE_RETRY_MS: '600000', RECONCILE_MAX_PROCESSING_MS: '600000' } });
  });
  afterAll(() => bff?.stop());
  afterEach(() => bff.sandbox.faults.clear());

  const customer = (i: number) => (bff.sandbox.fixtures.customers[i] as { key: string }).key;
  const pay = (custkey: string, body: Record<string, unknown>, key: string) =>
    call(bff.url, 'POST', '/v1/sales', shopper(custkey), { customer: custkey, amount: '27.00', ...body }, { 'idempotency-key': key });
  const sales = (custkey: string) => bff.sandbox.ledger.entries().filter((e) => e.custkey === custkey && e.kind === 'sale' && e.amount === '27.00');

  it('when a card sale names a payment key the gateway does not know, then 400, and the corrected request under the same key charges once (201)', async () => {
    const c = customer(14);
    const key = id('unknown-key');
    const refused = await pay(c, { payment_key: `pk_unknown${run}` }, key);
    expect([refused.status, refused.body.error?.details?.[0]]).toEqual([400, { path: 'body.payment_key', rule: 'refused_by_gateway' }]);
    const pk = await mintPaymentKey(bff, shopper(c), '4000100011112224', '0330');
    const paid = await pay(c, { payment_key: pk }, key);
    expect([paid.status, paid.body.result_code]).toEqual([201, 'A']);
    expect(sales(c).map((e) => e.key)).toEqual([paid.body.key]);
  });

  it('when a payment-key sale\'s answer is lost, then its key is never freed: the same request is 409 outcome_unknown, another 422, and nothing is charged twice', async () => {
    const c = customer(15);
    const key = id('lost');
    const pk = await mintPaymentKey(bff, shopper(c), '4000100011112224', '0330');
    bff.sandbox.faults.next({ kind: 'hang', match: 'sale', when: 'after' });
    const first = await pay(c, { payment_key: pk }, key);
    expect(first.status).toBe(504);
    const same = await pay(c, { payment_key: pk }, key);
    expect([same.status, same.body.error?.code]).toEqual([409, 'outcome_unknown']);
    const pk2 = await mintPaymentKey(bff, shopper(c), '4000100011112224', '0330');
    const other = await pay(c, { payment_key: pk2 }, key);
    expect([other.status, other.body.error?.code]).toEqual([422, 'idempotency_key_reused']);
    expect(sales(c)).toHaveLength(1);
  });
});
