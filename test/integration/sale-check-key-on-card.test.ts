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
        let answer = first;
        await eventually(async () => {
          answer = await pay(c, body, key);
          return answer.status === 400;
        });
        expect([answer.body.error?.details, answer.headers.get('tokengate-reconciled')]).toEqual([REFUSAL, 'true']);
        expect(debits(c).map((e) => e.ach?.status)).toEqual(['V']);
      });

      it('when a check form\'s key is added as a card and the void of its verification is lost, then the reconciler finds the check the verification became and voids it', async () => {
        const c = customer(12);
        const key = id('add-card');
        const body = { payment_key: bankKey() };
        bff.sandbox.faults.next({ kind: 'hang', match: 'void', when: 'before' });
        const add = () => call(bff.url, 'POST', `/v1/customers/${c}/payment_methods`, shopper(c), body, { 'idempotency-key': key });
        const first = await add();
        expect([first.status, first.body.error?.code]).toEqual([409, 'outcome_unknown']);
        await eventually(async () => (await add()).status !== 409);
        const verifications = bff.sandbox.ledger.entries().filter((e) => e.custkey === c && e.ach !== undefined);
        expect(verifications.map((e) => e.ach?.status)).toEqual(['V']);
      });

      it('when the void\'s answer is lost, then the caller hears outcome_unknown, the reconciler voids the check, and the key then answers the 400', async () => {
        const c = customer(17);
        const key = id('void-lost');
        const body = { payment_key: bankKey() };
        bff.sandbox.faults.next({ kind: 'hang', match: 'void', when: 'before' });
        const first = await pay(c, body, key);
        expect([first.status, first.body.error?.code]).toEqual([409, 'outcome_unknown']);
        let answer = first;
        await eventually(async () => {
          answer = await pay(c, body, key);
          return answer.status !== 409;
        });
        expect([answer.status, answer.body.error?.details, answer.headers.get('tokengate-reconciled')]).toEqual([400, REFUSAL, 'true']);
        expect(debits(c).map((e) => e.ach?.status)).toEqual(['V']);
      });

      it('when the sale\'s own answer is lost, then the reconciler finds the check by its invoice, voids it, and the key answers the 400', async () => {
        const c = customer(18);
        const key = id('sale-lost');
        const body = { payment_key: bankKey() };
        bff.sandbox.faults.next({ kind: 'hang', match: 'sale', when: 'after' });
        const first = await pay(c, body, key);
        expect(first.status).toBe(504);
        let answer = first;
        await eventually(async () => {
          answer = await pay(c, body, key);
          return answer.status === 400;
        });
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
