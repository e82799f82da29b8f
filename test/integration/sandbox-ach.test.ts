import type { RunningSandbox } from '../../src/sandbox';
import { startSandbox } from '../support/time-shift';
import { callSandbox } from '../../src/sandbox/client';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * The sandbox's bank payments (gateway-facts.md, "ACH"; src/sandbox/README.md, "ACH"): the check form's payment key,
 * `check:sale` and `check:credit` with the test data's outcomes, saved bank methods (masked), the ACH clock on the
 * sandbox clock with its `ach.*` webhooks, void only while pending, the notice of change, look-ups and batches, and
 * SANDBOX_CHECK_PAYMENT_KEY's two readings.
 */
const DAY = 86_400_000;
const GOOD_ROUTING = '011000015'; // passes the ABA check
const ACCOUNT = '123456789';

type Tx = { key: string; result_code: string; error_code?: string; error?: string; batch?: { key: string }; customer?: { custkey: string } };

describe('the sandbox\'s bank payments', () => {
  let sb: RunningSandbox;
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    sb = await startSandbox({ settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000, webhookUrls: [receiver.url], webhookSecret: 'ach-secret' } });
  });
  afterEach(async () => {
    await sb.close();
    await receiver.close();
  });

  const post = async (body: unknown) => (await callSandbox(sb.baseUrl, 'POST', 'transactions', { body })).json as Tx;
  const lookup = async (key: string) => (await callSandbox(sb.baseUrl, 'GET', `transactions/${key}`)).json as Record<string, unknown>;
  const mint = async (check: Record<string, unknown>) => {
    const res = await fetch(`${sb.url}/js/v2/payment_key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ public_key: await publicKey(), check }) });
    return { status: res.status, body: (await res.json()) as { payment_key?: string; error?: string } };
  };
  const publicKey = async () => (await callSandbox(sb.baseUrl, 'GET', 'publickey')).json as string;
  const checkSale = (account = ACCOUNT, amount = '25.00', extra: Record<string, unknown> = {}) =>
    post({ command: 'check:sale', amount, check: { accountholder: 'Pat Doe', routing: GOOD_ROUTING, account, account_type: 'checking', format: 'WEB' }, ...extra });
  const events = (type: string) => sb.webhooks.events().filter((e) => e.event_type === type);

  it('when the check form posts a bank account, then it answers a single-use payment key that check:sale charges: approved, pending, in the open batch', async () => {
    const minted = await mint({ accountholder: 'Pat Doe', routing: GOOD_ROUTING, account: ACCOUNT, account_type: 'savings' });
    expect(minted.status).toBe(200);
    const key = minted.body.payment_key as string;
    const sale = await post({ command: 'check:sale', amount: '12.00', payment_key: key, check: { format: 'WEB' } });
    expect(sale.result_code).toBe('A');
    const looked = await lookup(sale.key);
    expect(looked).toMatchObject({ status_code: 'P', trantype: 'Check Sale', check: { account_number: '6789', routing_number: '0015', account_type: 'savings' } });
    expect(JSON.stringify(looked)).not.toContain(ACCOUNT);
    const batch = (await callSandbox(sb.baseUrl, 'GET', 'batches/current/transactions')).json as { data: { key: string }[] };
    expect(batch.data.map((t) => t.key)).toContain(sale.key);
    // Single use: the same key again is refused.
    expect((await post({ command: 'check:sale', amount: '12.00', payment_key: key })).error_code).toBe('10211');
  });

  it('when the check form is sent a malformed routing number, then it answers 400 naming the field, not the value', async () => {
    const minted = await mint({ accountholder: 'Pat Doe', routing: '12345', account: ACCOUNT });
    expect(minted.status).toBe(400);
    expect(minted.body.error).toContain('check.routing');
    expect(minted.body.error).not.toContain('12345');
  });

  it('when the routing number fails the ABA check (987654321 among them) or the account is no account, then check:sale answers errors 38 and 39', async () => {
    expect((await post({ command: 'check:sale', amount: '1.00', check: { accountholder: 'A', routing: '987654321', account: ACCOUNT } })).error_code).toBe('38');
    expect((await post({ command: 'check:sale', amount: '1.00', check: { accountholder: 'A', routing: '011000016', account: ACCOUNT } })).error_code).toBe('38');
    expect((await post({ command: 'check:sale', amount: '1.00', check: { accountholder: 'A', routing: GOOD_ROUTING, account: '12' } })).error_code).toBe('39');
  });

  it('when the amount is 5.99, then the check declines; when 9999.99, then it waits for manager approval (M) and the ACH clock leaves it', async () => {
    const declined = await checkSale(ACCOUNT, '5.99');
    expect(declined.result_code).toBe('D');
    const manager = await checkSale(ACCOUNT, '9999.99');
    expect(manager.result_code).toBe('A');
    sb.clock.advance(5 * DAY);
    expect((await lookup(manager.key)).status_code).toBe('M');
  });

  it('when the clock passes 5 pm and then 8 am Pacific, then the check is submitted and settled, each with its webhook, in order', async () => {
    const sale = await checkSale();
    sb.clock.advance(2 * DAY);
    expect((await lookup(sale.key)).status_code).toBe('S');
    const submitted = events('ach.submitted');
    const settled = events('ach.settled');
    expect(submitted).toHaveLength(1);
    expect(settled).toHaveLength(1);
    const body = (e: (typeof submitted)[number]) => e.payload.event_body as { object: { key: string; check: { trackingcode: string } }; changes: { new: { status: string } } };
    expect(body(submitted[0] as (typeof submitted)[number])).toMatchObject({ object: { key: sale.key }, changes: { new: { status: 'B' } } });
    expect(body(settled[0] as (typeof settled)[number]).changes.new.status).toBe('S');
    expect(body(settled[0] as (typeof settled)[number]).object.check.trackingcode).not.toBe('');
    expect((submitted[0] as { event_triggered: string }).event_triggered < (settled[0] as { event_triggered: string }).event_triggered).toBe(true);
  });

  it('when a return test account is debited, then it settles and comes back on the third day after submission: status R, ach.returned with the date and its code', async () => {
    const sale = await checkSale('10178101');
    const other = await checkSale('10178107');
    sb.clock.advance(2 * DAY);
    expect((await lookup(sale.key)).status_code).toBe('S');
    sb.clock.advance(3 * DAY);
    expect((await lookup(sale.key)).status_code).toBe('R');
    const returned = events('ach.returned').map((e) => e.payload.event_body as { object: { key: string }; changes: { new: { status: string; returned: string; reason: string } } });
    expect(returned).toHaveLength(2);
    const mine = returned.find((r) => r.object.key === sale.key);
    expect(mine?.changes.new).toMatchObject({ status: 'R', reason: expect.stringMatching(/^R01: Insufficient Funds$/) });
    expect(mine?.changes.new.returned).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(returned.find((r) => r.object.key === other.key)?.changes.new.reason).toMatch(/^R07:/);
  });

  it('when a return test account has come back, then the ledger (the soak\'s judge) shows the check returned with its code and time; an ordinary check shows settled', async () => {
    const sale = await checkSale('10178101');
    const plain = await checkSale();
    const before = sb.clock.now();
    sb.clock.advance(5 * DAY);
    expect(sb.ledger.get(plain.key)?.ach).toEqual({ status: 'S', format: 'WEB' });
    const ach = sb.ledger.get(sale.key)?.ach;
    expect(ach).toMatchObject({ status: 'R', return_code: 'R01' });
    expect(ach?.returned_at).toBeGreaterThan(before);
    expect(ach?.returned_at).toBeLessThanOrEqual(sb.clock.now());
  });

  it('when a check is pending, then it voids (ach.voided); once submitted, then void answers error 82 and a refund credits it back', async () => {
    const first = await checkSale();
    const voided = await post({ command: 'void', trankey: first.key });
    expect(voided.result_code).toBe('A');
    expect(events('ach.voided').map((e) => (e.payload.event_body as { object: { key: string } }).object.key)).toEqual([first.key]);
    expect((await lookup(first.key)).status_code).toBe('V');

    const second = await checkSale();
    sb.clock.advance(DAY);
    expect((await lookup(second.key)).status_code).toMatch(/[BS]/);
    const refused = await post({ command: 'void', trankey: second.key });
    expect(refused).toMatchObject({ result_code: 'E', error_code: '82' });
    const refund = await post({ command: 'refund', trankey: second.key, amount: '5.00' });
    expect(refund.result_code).toBe('A');
    expect(await lookup(refund.key)).toMatchObject({ trantype: 'Check Credit', status_code: 'P' });
  });

  it('when a check sale keeps the account (save_customer_paymethod), then the customer lists a bank method with last fours only, and customer:sale charges it', async () => {
    const custkey = sb.fixtures.firstCustomer().key;
    const sale = await checkSale(ACCOUNT, '3.00', { custkey, save_customer_paymethod: true });
    expect(sale.customer?.custkey).toBe(custkey);
    const methods = (await callSandbox(sb.baseUrl, 'GET', `customers/${custkey}/payment_methods`)).json as { data: Record<string, unknown>[] };
    const bank = methods.data.find((m) => m.pay_type === 'check') as Record<string, unknown>;
    expect(bank).toMatchObject({ account_number: '6789', routing_number: '0015', account_type: 'checking' });
    expect(JSON.stringify(methods)).not.toContain(ACCOUNT);
    expect((await callSandbox(sb.baseUrl, 'GET', `customers/${custkey}/payment_methods/${String(bank.key)}/cardref`)).status).toBe(404);
    const again = await post({ command: 'customer:sale', custkey, paymethod_key: bank.key, amount: '4.00', check: { format: 'PPD' } });
    expect(again.result_code).toBe('A');
    expect(await lookup(again.key)).toMatchObject({ trantype: 'Check Sale', status_code: 'P' });
  });

  it('when an approved check is saved from its transaction (pay_type transaction), then the answer names the new bank method', async () => {
    const custkey = sb.fixtures.firstCustomer().key;
    const sale = await checkSale();
    const saved = (await callSandbox(sb.baseUrl, 'POST', `customers/${custkey}/payment_methods`, { body: [{ pay_type: 'transaction', transaction_key: sale.key }] })).json as Record<string, unknown>[];
    expect(saved[0]).toMatchObject({ pay_type: 'check', account_number: '6789' });
  });

  it('when SANDBOX_CHECK_PAYMENT_KEY is refused, then check:sale refuses a payment key without spending it, and the key saves a bank method that customer:sale charges', async () => {
    sb.update({ checkPaymentKey: 'refused' });
    const custkey = sb.fixtures.firstCustomer().key;
    const key = (await mint({ accountholder: 'Pat Doe', routing: GOOD_ROUTING, account: ACCOUNT })).body.payment_key as string;
    expect((await post({ command: 'check:sale', amount: '2.00', payment_key: key })).error_code).toBe('10213');
    const saved = (await callSandbox(sb.baseUrl, 'POST', `customers/${custkey}/payment_methods`, { body: [{ pay_type: 'check', payment_key: key }] })).json as { key: string; pay_type: string }[];
    expect(saved[0]?.pay_type).toBe('check');
    const sale = await post({ command: 'customer:sale', custkey, paymethod_key: saved[0]?.key, amount: '2.00' });
    expect(sale.result_code).toBe('A');
  });

  it('when a test asks for a notice of change, then ach.note_added names the check and carries the note', async () => {
    const sale = await checkSale();
    const res = await fetch(`${sb.url}/_sandbox/ach/notes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ trankey: sale.key }) });
    expect(res.status).toBe(204);
    const [note] = events('ach.note_added');
    expect(note?.payload.event_body).toMatchObject({ object: { key: sale.key }, changes: { new: { note: expect.stringMatching(/^C02:/) } } });
  });

  it('when check:credit credits an account, then it is a credit transaction on the ACH clock', async () => {
    const credit = await post({ command: 'check:credit', amount: '7.00', check: { accountholder: 'Pat Doe', routing: GOOD_ROUTING, account: ACCOUNT } });
    expect(credit.result_code).toBe('A');
    expect(await lookup(credit.key)).toMatchObject({ trantype_code: 'C', status_code: 'P' });
    sb.clock.advance(2 * DAY);
    expect((await lookup(credit.key)).status_code).toBe('S');
  });

  it('when the check form is served, then its fields are labelled, the holder carries autocomplete "name" and the bank numbers no card token', async () => {
    const html = await (await fetch(`${sb.url}/js/v2/check.html`)).text();
    for (const id of ['ach-holder', 'ach-routing', 'ach-account', 'ach-type']) expect(html).toContain(`<label for="${id}">`);
    expect(html).toMatch(/id="ach-holder"[^>]*autocomplete="name"/);
    expect(html).not.toMatch(/autocomplete="cc-/);
    const payjs = await (await fetch(`${sb.url}/js/v2/pay.js`)).text();
    expect(payjs).toContain('createPaymentCheckEntry');
  });
});
