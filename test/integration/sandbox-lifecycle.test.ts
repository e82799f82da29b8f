import type { RunningSandbox } from '../../src/sandbox';
import { startSandbox } from '../support/time-shift';
import { callSandbox } from '../../src/sandbox/client';

const APPROVED = '4000100011112224';
const DECLINED = '4000300011112220';
const card = (number: string) => ({ number, expiration: '1230', cvc: '123' });

type Tx = Record<string, unknown>;

describe('sandbox over HTTP: the payment lifecycle', () => {
  let sb: RunningSandbox;
  let seq = 0;
  beforeAll(async () => {
    sb = await startSandbox({ settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000 } });
  });
  afterAll(() => sb.close());
  beforeEach(() => {
    sb.reset();
    sb.update({ duplicateFolding: false, batchCloseIntervalMs: 0, lookupRefunds: 'none', lookupAuthAmount: 'listed', customFields: 'echoed' });
  });

  const post = async (body: unknown) => {
    const r = await callSandbox(sb.baseUrl, 'POST', 'transactions', { body });
    return { status: r.status, tx: r.json as Tx };
  };
  const get = async (path: string) => {
    const r = await callSandbox(sb.baseUrl, 'GET', path);
    return { status: r.status, body: r.json as Tx };
  };
  const charge = async (command: 'cc:sale' | 'authonly', number = APPROVED, extra: Record<string, unknown> = {}) => {
    const { tx } = await post({ command, amount: '10.00', invoice: `inv-${++seq}`, creditcard: card(number), ...extra });
    return tx.key as string;
  };
  const follow = (command: string, trankey: string, extra: Record<string, unknown> = {}) => post({ command, trankey, ...extra });
  const close = () => callSandbox(sb.baseUrl, 'POST', 'batches/current/close');

  /** Each state of gateway-facts.md's lifecycle, arranged from scratch. */
  const STATES: Record<string, () => Promise<string>> = {
    'an open authorization': () => charge('authonly'),
    'an unsettled sale': () => charge('cc:sale'),
    'a captured authorization': async () => {
      const key = await charge('authonly');
      await follow('cc:capture', key);
      return key;
    },
    'a settled sale': async () => {
      const key = await charge('cc:sale');
      await close();
      return key;
    },
    'a voided sale': async () => {
      const key = await charge('cc:sale');
      await follow('void', key);
      return key;
    },
    'a declined sale': () => charge('cc:sale', DECLINED),
    'a partially refunded sale (4.00 of 10.00)': async () => {
      const key = await charge('cc:sale');
      await close();
      await follow('refund', key, { amount: '4.00' });
      return key;
    },
    'an unknown key': async () => 'dunknownunknown',
  };

  /** Expected: 'A' or the error_code of the refusal (gateway-facts.md codes; README for our choices). */
  const EXPECTED: Record<string, Record<string, string>> = {
    'an open authorization': { 'cc:capture': 'A', void: 'A', 'cc:void:release': 'A', refund: '115', creditvoid: 'A', 'refund:adjust': 'A' },
    'an unsettled sale': { 'cc:capture': '10125', void: 'A', 'cc:void:release': 'A', refund: '115', creditvoid: 'A', 'refund:adjust': 'A' },
    'a captured authorization': { 'cc:capture': '10125', void: 'A', 'cc:void:release': 'A', refund: '115', creditvoid: 'A', 'refund:adjust': 'A' },
    'a settled sale': { 'cc:capture': '10126', void: '26', 'cc:void:release': '26', refund: 'A', creditvoid: 'A', 'refund:adjust': 'A' },
    'a voided sale': { 'cc:capture': '24', void: '24', 'cc:void:release': '24', refund: '24', creditvoid: '24', 'refund:adjust': '24' },
    'a declined sale': { 'cc:capture': '10125', void: '83', 'cc:void:release': '83', refund: '10125', creditvoid: '83', 'refund:adjust': '10125' },
    'a partially refunded sale (4.00 of 10.00)': { 'cc:capture': '10126', void: '26', 'cc:void:release': '26', refund: 'A', creditvoid: 'A', 'refund:adjust': 'A' },
    'an unknown key': { 'cc:capture': '10105', void: '35', 'cc:void:release': '35', refund: '113', creditvoid: '10105', 'refund:adjust': '10105' },
  };

  const cases = Object.entries(EXPECTED).flatMap(([state, byCommand]) => Object.entries(byCommand).map(([command, expected]) => ({ state, command, expected })));

  it.each(cases)('when $command is sent for $state, then the answer is $expected', async ({ state, command, expected }) => {
    const key = await (STATES[state] as () => Promise<string>)();
    const before = sb.ledger.get(key);
    const { status, tx } = await follow(command, key, command === 'refund:adjust' ? { amount: '1.00' } : {});
    expect(status).toBe(200);
    if (expected === 'A') {
      expect(tx).toMatchObject({ type: 'transaction', result_code: 'A', result: 'Approved', is_duplicate: 'N' });
      expect(tx.refnum).toMatch(/^\d+$/);
    } else {
      expect(tx).toMatchObject({ type: 'transaction', result_code: 'E', error_code: expected });
      expect(typeof tx.error).toBe('string');
      expect(tx.key).toBeUndefined();
      // A refusal moves nothing.
      expect(sb.ledger.get(key)).toEqual(before);
    }
    const ops = sb.ledger.operations();
    expect(ops[ops.length - 1]).toMatchObject({ command, result_code: expected === 'A' ? 'A' : 'E', folded: false });
  });

  it('when an authorization is captured for less, then it joins the open batch at that amount and becomes a sale', async () => {
    const key = await charge('authonly');
    expect(sb.transactions()).toMatchObject([{ key, authOnly: true, result_code: 'A' }]);
    expect((await get(`transactions/${key}`)).body).toMatchObject({ trantype_code: 'A', status_code: 'P', auth_amount: '10.00', amount: '10.00' });
    expect((await get(`transactions/${key}`)).body.batch).toBeUndefined();
    const { tx } = await follow('cc:capture', key, { amount: '7.50' });
    expect(tx).toMatchObject({ key, result_code: 'A', auth_amount: '7.50', batch: { type: 'batch' } });
    expect(sb.ledger.get(key)).toMatchObject({ state: 'unsettled', authorized: '7.50', captured: '7.50' });
    const current = (await get('batches/current')).body;
    expect((await get(`transactions/${key}`)).body).toMatchObject({ trantype_code: 'S', status_code: 'P', batch: { key: current.key } });
  });

  it('when a capture asks for more than was authorized, then it is refused with 10133 and nothing is captured', async () => {
    const key = await charge('authonly');
    expect((await follow('cc:capture', key, { amount: '10.01' })).tx).toMatchObject({ result_code: 'E', error_code: '10133' });
    expect(sb.ledger.get(key)).toMatchObject({ state: 'authorized', captured: '0.00' });
  });

  it('when a refund, a creditvoid that refunds or an unvoid is answered, then it carries exactly the fields of the reference\'s example of that command', async () => {
    const minimal = ['authcode', 'is_duplicate', 'key', 'refnum', 'result', 'result_code', 'type'];
    const sale = await charge('cc:sale');
    await close();
    const refund = (await follow('refund', sale, { amount: '4.00' })).tx;
    const credit = (await follow('creditvoid', sale, { amount: '1.00' })).tx;
    for (const answer of [refund, credit]) expect(Object.keys(answer).sort()).toEqual([...minimal, 'batch', 'creditcard', 'trantype'].sort());
    const voided = await charge('cc:sale');
    await follow('void', voided);
    expect(Object.keys((await follow('unvoid', voided)).tx).sort()).toEqual(minimal);
  });

  it('when partial refunds add up to the captured amount, then one cent more is refused with 114 (creditvoid: 10133)', async () => {
    const key = await charge('cc:sale');
    await close();
    const first = (await follow('refund', key, { amount: '4.00' })).tx;
    const second = (await follow('refund', key, { amount: '6.00' })).tx;
    expect(first.key).not.toBe(key);
    expect(second.key).not.toBe(first.key);
    expect(first).toMatchObject({ result_code: 'A', trantype: 'Credit Card Refund (Credit)' });
    expect((await get(`transactions/${first.key as string}`)).body).toMatchObject({ trantype_code: 'C', amount: '4.00' });
    expect((await follow('refund', key, { amount: '0.01' })).tx).toMatchObject({ result_code: 'E', error_code: '114' });
    expect((await follow('refund', key)).tx).toMatchObject({ result_code: 'E', error_code: '114' });
    expect((await follow('creditvoid', key, { amount: '0.01' })).tx).toMatchObject({ result_code: 'E', error_code: '10133' });
    expect(sb.ledger.get(key)).toMatchObject({ captured: '10.00', refunded: '10.00', refunds: [{ key: first.key, amount: '4.00' }, { key: second.key, amount: '6.00' }] });
  });

  it('when a full refund is asked without an amount, then it returns what is left after the partial refunds', async () => {
    const key = await charge('cc:sale');
    await close();
    await follow('refund', key, { amount: '2.50' });
    const { tx } = await follow('refund', key);
    expect(tx).toMatchObject({ result_code: 'A' });
    expect((await get(`transactions/${tx.key as string}`)).body).toMatchObject({ amount: '7.50' });
    expect(sb.ledger.get(key)).toMatchObject({ refunded: '10.00' });
  });

  it('when an unsettled refund is voided, then its amount can be refunded again', async () => {
    const key = await charge('cc:sale');
    await close();
    const refund = (await follow('refund', key)).tx;
    expect((await follow('void', refund.key as string)).tx).toMatchObject({ result_code: 'A', key: refund.key });
    expect(sb.ledger.get(key)).toMatchObject({ refunded: '0.00', refunds: [{ key: refund.key, voided: true }] });
    expect((await follow('refund', key, { amount: '10.00' })).tx).toMatchObject({ result_code: 'A' });
  });

  it('when creditvoid meets an unsettled sale it voids it (same key); a settled one it refunds (new key)', async () => {
    const open = await charge('cc:sale');
    expect((await follow('creditvoid', open)).tx).toMatchObject({ result_code: 'A', key: open });
    expect(sb.ledger.get(open)).toMatchObject({ state: 'voided', voided: true });
    const settled = await charge('cc:sale');
    await close();
    const { tx } = await follow('creditvoid', settled, { amount: '3.00' });
    expect(tx.key).not.toBe(settled);
    expect(sb.ledger.get(settled)).toMatchObject({ state: 'settled', refunded: '3.00' });
  });

  it('when refund:adjust meets an unsettled sale it lowers the amount (auth_amount = what stays); it cannot lower it to nothing', async () => {
    const key = await charge('cc:sale');
    expect((await follow('refund:adjust', key, { amount: '2.00' })).tx).toMatchObject({ key, result_code: 'A', auth_amount: '8.00' });
    expect(sb.ledger.get(key)).toMatchObject({ captured: '8.00', authorized: '8.00', adjusted: '2.00', refunded: '0.00' });
    expect((await follow('refund:adjust', key, { amount: '8.00' })).tx).toMatchObject({ result_code: 'E', error_code: '10133' });
    expect((await post({ command: 'refund:adjust', trankey: key })).status).toBe(400);
  });

  it('when a follow-up names its original by refnum, then it acts on it; both or neither of trankey/refnum is a 400', async () => {
    const { tx } = await post({ command: 'cc:sale', amount: '5.00', creditcard: card(APPROVED) });
    expect((await post({ command: 'void', refnum: tx.refnum })).tx).toMatchObject({ result_code: 'A', key: tx.key });
    const both = await callSandbox(sb.baseUrl, 'POST', 'transactions', { body: { command: 'void', refnum: tx.refnum, trankey: tx.key } });
    expect(both.status).toBe(400);
    expect(both.json).toMatchObject({ errorcode: 40011 });
    expect((await post({ command: 'void' })).status).toBe(400);
  });

  it('when a transaction is looked up, then it carries created, trantype, status, amounts, custkey, masked card and batch, and its refunds only with lookupRefunds listed', async () => {
    const c = sb.fixtures.firstCustomer();
    const key = await charge('cc:sale', APPROVED, { custkey: c.key, amount_detail: { tax: '1.00' } });
    await close();
    const refund = (await follow('refund', key, { amount: '1.25' })).tx;
    const { status, body } = await get(`transactions/${key}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      type: 'transaction', key, trantype_code: 'S', trantype: 'Credit Card Sale', status_code: 'S', status: 'Settled', result_code: 'A',
      amount: '10.00', auth_amount: '10.00', custkey: c.key, creditcard: { number: '4000xxxxxxxx2224' }, amount_detail: { tax: '1.00' },
    });
    // As documented (the reference's example, the real capture): no refunds list, and no field of a refund names its sale.
    expect(body).not.toHaveProperty('refunds');
    expect(body.created).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect((body.batch as Tx).batchrefnum).toMatch(/^\d+$/);
    const refundView = (await get(`transactions/${refund.key as string}`)).body;
    expect(refundView).toMatchObject({ trantype_code: 'C', status_code: 'P', amount: '1.25', custkey: c.key });
    expect(refundView).not.toHaveProperty('original');
    sb.update({ lookupRefunds: 'listed' });
    expect((await get(`transactions/${key}`)).body).toMatchObject({ refunds: [{ key: refund.key, amount: '1.25', status_code: 'P' }] });
    expect((await get(`transactions/${refund.key as string}`)).body).toMatchObject({ original: { key } });
    expect(JSON.stringify(body)).not.toContain(APPROVED);
  });

  it('when lookupAuthAmount is omitted, then GET transactions/{key} carries no auth_amount (as the reference\'s look-up example) while the lists keep it', async () => {
    const c = sb.fixtures.firstCustomer();
    const key = await charge('cc:sale', APPROVED, { custkey: c.key, amount: '20.00' });
    await follow('refund:adjust', key, { amount: '4.00' });
    expect((await get(`transactions/${key}`)).body).toMatchObject({ amount: '20.00', auth_amount: '16.00' });
    sb.update({ lookupAuthAmount: 'omitted' });
    const { body } = await get(`transactions/${key}`);
    expect(body).toMatchObject({ key, amount: '20.00', status_code: 'P' });
    expect(body).not.toHaveProperty('auth_amount');
    const items = ((await get(`customers/${c.key}/transactions?limit=1000`)).body as unknown as { data: Tx[] }).data;
    expect(items.find((t) => t.key === key)).toMatchObject({ auth_amount: '16.00' });
  });

  it('when a refund sends custom_fields, then its look-up and the batch and customer lists carry them back (echoed), or none (dropped); creditvoid keeps none', async () => {
    const c = sb.fixtures.firstCustomer();
    const key = await charge('cc:sale', APPROVED, { custkey: c.key, amount: '20.00' });
    await close();
    const tagged = (await follow('refund:adjust', key, { amount: '1.00', custom_fields: { 20: 'tokengate:abc' } })).tx;
    const viaRefund = (await follow('refund', key, { amount: '2.00', custom_fields: { 20: 'tokengate:def' } })).tx;
    const untagged = (await follow('creditvoid', key, { amount: '3.00', custom_fields: { 20: 'tokengate:ghi' } })).tx;
    const lists = async () => [...((await get('batches/current/transactions?limit=1000')).body as unknown as { data: Tx[] }).data, ...((await get(`customers/${c.key}/transactions?limit=1000`)).body as unknown as { data: Tx[] }).data];
    expect((await get(`transactions/${tagged.key as string}`)).body).toMatchObject({ custom_fields: { 20: 'tokengate:abc' } });
    const items = await lists();
    expect(items.filter((t) => t.key === viaRefund.key).map((t) => t.custom_fields)).toEqual([{ 20: 'tokengate:def' }, { 20: 'tokengate:def' }]);
    expect(items.filter((t) => t.key === untagged.key).every((t) => t.custom_fields === undefined)).toBe(true);
    sb.update({ customFields: 'dropped' });
    expect((await get(`transactions/${tagged.key as string}`)).body).not.toHaveProperty('custom_fields');
    expect((await follow('refund', key, { amount: '1.00', custom_fields: { 21: 'x' } })).status).toBe(400);
  });

  it('when the status is read in each state, then it is P, S, V or E as gateway-facts.md lists', async () => {
    const status = async (key: string) => ((await get(`transactions/${key}`)).body as { status_code: string; status: string });
    const auth = await charge('authonly');
    const voided = await charge('cc:sale');
    await follow('cc:void:release', voided);
    const declined = await charge('cc:sale', DECLINED);
    const sale = await charge('cc:sale');
    expect(await status(auth)).toEqual(expect.objectContaining({ status_code: 'P', status: 'Authorized (Pending Settlement)' }));
    expect(await status(sale)).toEqual(expect.objectContaining({ status_code: 'P' }));
    expect(await status(voided)).toEqual(expect.objectContaining({ status_code: 'V', status: 'Voided' }));
    expect(await status(declined)).toEqual(expect.objectContaining({ status_code: 'E' }));
    await close();
    expect(await status(sale)).toEqual(expect.objectContaining({ status_code: 'S', status: 'Settled' }));
    // An uncaptured authorization is in no batch, so closing one does not settle it.
    expect(await status(auth)).toEqual(expect.objectContaining({ status_code: 'P' }));
  });

  it('when an unknown transaction is looked up, then 404 with errorcode 20001', async () => {
    expect(await get('transactions/dnosuchkeyatall')).toEqual({ status: 404, body: { error: 'Transaction not found', errorcode: 20001 } });
  });

  it("when sales carry custkey, then they are listed newest first under that customer only, refunds included", async () => {
    const [a, b] = sb.fixtures.customers;
    const first = await charge('cc:sale', APPROVED, { custkey: a!.key });
    const other = await charge('cc:sale', APPROVED, { custkey: b!.key });
    const second = await charge('authonly', APPROVED, { custkey: a!.key });
    await charge('cc:sale');
    const { status, body } = await get(`customers/${a!.key}/transactions`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ type: 'list', total: 2, offset: 0, limit: 20 });
    expect((body.data as Tx[]).map((t) => t.key)).toEqual([second, first]);
    expect((await get(`customers/${a!.key}/transactions?limit=1&offset=1`)).body).toMatchObject({ total: 2, data: [{ key: first }] });
    expect(((await get(`customers/${b!.key}/transactions`)).body.data as Tx[]).map((t) => t.key)).toEqual([other]);
    expect((await get('customers/nosuchcustomer/transactions')).status).toBe(404);
  });

  it('when a sale names an unknown custkey, then it is a transaction error 99999 and nothing is charged', async () => {
    const { tx } = await post({ command: 'cc:sale', amount: '1.00', creditcard: card(APPROVED), custkey: 'nosuchcustomer' });
    expect(tx).toMatchObject({ result_code: 'E', error_code: '99999' });
    expect(sb.transactions()).toHaveLength(0);
  });

  it('when the current batch is closed, then it answers closing, settles its transactions, and the next sale opens a new batch', async () => {
    const sale = await charge('cc:sale');
    const voided = await charge('cc:sale');
    await follow('void', voided);
    const current = (await get('batches/current')).body;
    // The reference's Retrieve Specific Batch: amounts as numbers, a pair only for a kind the batch holds,
    // total_count "includes sales, voids, and refunds", total_amount sales less refunds (its example adds up so).
    expect(current).toMatchObject({ type: 'batch', status: 'open', sales_count: 1, sales_amount: 10, voids_count: 1, voids_amount: 10, total_count: 2, total_amount: 10 });
    expect(current).not.toHaveProperty('refunds_count');
    const closed = await close();
    expect(closed.status).toBe(200);
    expect(closed.json).toMatchObject({ type: 'batch', key: current.key, status: 'closing' });
    expect((await get(`batches/${current.key as string}`)).body).toMatchObject({ status: 'closed', sales_count: 1 });
    expect(sb.ledger.get(sale)).toMatchObject({ state: 'settled', settled: true });
    const refund = (await follow('refund', sale, { amount: '1.00' })).tx;
    const next = (await get('batches/current')).body;
    expect(next.key).not.toBe(current.key);
    expect(next).toMatchObject({ refunds_count: 1, refunds_amount: 1, total_amount: -1 });
    const list = (await get('batches')).body;
    expect((list.data as Tx[]).map((b) => b.key)).toEqual([next.key, current.key]);
    // List items are the reference's: no status, no counts; `closed` once closed.
    expect((list.data as Tx[]).map((b) => Object.keys(b).sort())).toEqual([
      ['batchrefnum', 'key', 'opened', 'sequence', 'type'],
      ['batchrefnum', 'closed', 'key', 'opened', 'sequence', 'type'],
    ]);
    expect(((await get(`batches/${current.key as string}/transactions`)).body.data as Tx[]).map((t) => t.key)).toEqual([sale, voided]);
    expect(((await get('batches/current/transactions')).body.data as Tx[]).map((t) => t.key)).toEqual([refund.key]);
    expect((await get('batches/nosuchbatch')).status).toBe(404);
  });

  it('when batchCloseIntervalMs has passed, then the open batch is closed and settled at the next call', async () => {
    sb.update({ batchCloseIntervalMs: 100 });
    const key = await charge('cc:sale');
    await new Promise((r) => setTimeout(r, 150));
    expect((await follow('void', key)).tx).toMatchObject({ result_code: 'E', error_code: '26' });
    expect(sb.ledger.get(key)).toMatchObject({ state: 'settled' });
  });

  it('when duplicate folding is on, then an identical follow-up answers the original with is_duplicate Y; ignore_duplicate bypasses', async () => {
    sb.update({ duplicateFolding: true });
    const key = await charge('cc:sale');
    await close();
    const first = (await follow('refund', key, { amount: '1.00' })).tx;
    const again = (await follow('refund', key, { amount: '1.00' })).tx;
    expect(again).toMatchObject({ key: first.key, is_duplicate: 'Y' });
    expect(sb.ledger.get(key)).toMatchObject({ refunded: '1.00' });
    const bypass = (await follow('refund', key, { amount: '1.00', ignore_duplicate: true })).tx;
    expect(bypass).toMatchObject({ result_code: 'A', is_duplicate: 'N' });
    expect(bypass.key).not.toBe(first.key);
    expect(sb.ledger.get(key)).toMatchObject({ refunded: '2.00' });
    expect(sb.ledger.operations().map((o) => o.folded)).toEqual([false, true, false]);
  });

  it('when duplicate folding is off (the default), then two equal partial refunds are two refunds', async () => {
    const key = await charge('cc:sale');
    await close();
    await follow('refund', key, { amount: '1.00' });
    await follow('refund', key, { amount: '1.00' });
    expect(sb.ledger.get(key)).toMatchObject({ refunded: '2.00' });
  });

  it('when folding is on, then an authonly does not fold into an identical sale and ignore_duplicate bypasses for sales', async () => {
    sb.update({ duplicateFolding: true });
    const body = { amount: '3.00', invoice: 'same', creditcard: card(APPROVED) };
    const sale = (await post({ command: 'cc:sale', ...body })).tx;
    const auth = (await post({ command: 'authonly', ...body })).tx;
    expect(auth.key).not.toBe(sale.key);
    expect((await post({ command: 'cc:sale', ...body })).tx).toMatchObject({ key: sale.key, is_duplicate: 'Y' });
    expect((await post({ command: 'cc:sale', ...body, ignore_duplicate: true })).tx.key).not.toBe(sale.key);
  });

  it('when follow-ups and lookups are sent, then each counts in the rate limit', async () => {
    const key = await charge('cc:sale');
    await follow('void', key);
    await get(`transactions/${key}`);
    await get('batches');
    await close();
    expect(sb.stats().endpoints.v2).toMatchObject({ accepted: 5, calls: 5 });
  });

  it('when the limit is reached, then a follow-up is refused with 429/155 and not processed', async () => {
    const key = await charge('cc:sale');
    // Sliding: a fixed window could roll over between the two calls.
    sb.update({ ratePerMinute: 1, rateWindowMs: 60_000, rateMode: 'sliding' });
    try {
      const r = await callSandbox(sb.baseUrl, 'POST', 'transactions', { body: { command: 'void', trankey: key } });
      expect(r.status).toBe(429);
      expect(sb.ledger.get(key)).toMatchObject({ state: 'unsettled' });
      expect(sb.ledger.operations()).toHaveLength(0);
    } finally {
      sb.update({ ratePerMinute: 100_000, rateMode: 'fixed' });
    }
  });

  it('when the admin routes are read, then they show the ledger, the operations, and close the batch', async () => {
    const admin = (method: string, path: string) => callSandbox(`${sb.url}/_sandbox/`, method, path, { auth: false });
    const key = await charge('cc:sale');
    await follow('void', key);
    expect((await admin('GET', `ledger/${key}`)).json).toMatchObject({ key, state: 'voided' });
    expect((await admin('GET', 'ledger')).json).toMatchObject([{ key }]);
    expect((await admin('GET', 'operations')).json).toMatchObject([{ command: 'void', trankey: key, result_code: 'A', delivery: 'delivered' }]);
    expect((await admin('GET', 'ledger/dnosuch')).status).toBe(404);
    const sale = await charge('cc:sale');
    expect((await admin('POST', 'batches/close')).status).toBe(200);
    expect(sb.ledger.get(sale)).toMatchObject({ state: 'settled' });
  });
});
