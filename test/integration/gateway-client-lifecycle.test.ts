import {
  GatewayConnectionResetError, GatewayNotFoundError, GatewayRefusedError, GatewayServerError, GatewayTimeoutError, GatewayUnreadableError,
  type CallEvent, type GatewayClient,
} from '../../src/gateway';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { clientFor } from '../support/gateway';

let sandbox: RunningSandbox;
let custkey: string;
let approvedRef: string;
let declinedRef: string;
let client: GatewayClient;
let seq = 0;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000 } });
  const c = sandbox.fixtures.firstCustomer();
  custkey = c.key;
  const pm = (last4: string) => sandbox.fixtures.paymentMethods(c.key).find((p) => p.number.endsWith(last4))?.key as string;
  approvedRef = sandbox.fixtures.cardrefFor(c.key, pm('2224'));
  declinedRef = sandbox.fixtures.cardrefFor(c.key, pm('2220'));
});
afterAll(() => sandbox.close());
beforeEach(() => {
  sandbox.reset();
  approvedRef = sandbox.fixtures.cardrefFor(custkey, sandbox.fixtures.paymentMethods(custkey)[0]!.key);
  client = clientFor(sandbox);
});
afterEach(() => client.close());

const invoice = () => `inv-lc-${++seq}`;
const settle = () => sandbox.ledger.closeBatch();

async function authorized(amount = '10.00'): Promise<string> {
  return (await client.authorize({ cardref: approvedRef, amount, invoice: invoice(), custkey })).value.key;
}

async function sold(amount = '10.00'): Promise<string> {
  return (await client.sale({ cardref: approvedRef, amount, invoice: invoice(), custkey })).value.key;
}

describe('gateway client: the payment lifecycle against the sandbox', () => {
  it('when a card is authorized with custkey, then it is held (authonly), attached to the customer, and capturable for less', async () => {
    const auth = await client.authorize({ cardref: approvedRef, amount: '20.00', invoice: invoice(), custkey, amount_detail: { tax: '2.00' } });
    expect(auth.value).toMatchObject({ result_code: 'A', auth_amount: '20.00' });
    expect(sandbox.ledger.get(auth.value.key)).toMatchObject({ kind: 'authonly', state: 'authorized', custkey });
    const captured = await client.capture({ trankey: auth.value.key, amount: '15.00' });
    expect(captured.value).toMatchObject({ key: auth.value.key, result_code: 'A', auth_amount: '15.00' });
    expect(sandbox.ledger.get(auth.value.key)).toMatchObject({ state: 'unsettled', captured: '15.00' });
  });

  it('when a sale carries custkey, then the customer transaction list shows it, newest first, parsed', async () => {
    const older = await sold('1.00');
    const newer = await authorized('2.00');
    const page = await client.listCustomerTransactions(custkey, { limit: 10, offset: 0 });
    expect(page.value.total).toBe(2);
    expect(page.value.data.map((t) => t.key)).toEqual([newer, older]);
    expect(page.value.data[0]).toMatchObject({ trantype_code: 'A', status_code: 'P', amount: '2.00', custkey, refunds: [] });
  });

  it('when a settled sale is partially refunded and looked up, then the detail carries status and amounts, and the refund where the look-up lists one', async () => {
    const key = await sold('10.00');
    settle();
    const refund = await client.refund({ trankey: key, amount: '3.25', custom_fields: { 20: 'tokengate:t1' } });
    expect(refund.value.key).not.toBe(key);
    const detail = (await client.getTransaction(key)).value;
    // As documented (SANDBOX_LOOKUP_REFUNDS=none): no refunds listed; the refund is its own transaction, tagged.
    expect(detail).toMatchObject({ key, trantype_code: 'S', trantype: 'Credit Card Sale', status_code: 'S', status: 'Settled', amount: '10.00', auth_amount: '10.00', custkey, refunds: [] });
    expect(detail.created).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(detail.batch?.key).toMatch(/^\w+$/);
    expect((await client.getTransaction(refund.value.key)).value).toMatchObject({ trantype_code: 'C', amount: '3.25', custom_fields: { 20: 'tokengate:t1' } });
    sandbox.update({ lookupRefunds: 'listed' });
    try {
      expect((await client.getTransaction(key)).value).toMatchObject({ refunds: [{ key: refund.value.key, amount: '3.25', status_code: 'P' }] });
      expect((await client.getTransaction(refund.value.key)).value).toMatchObject({ original: { key } });
    } finally {
      sandbox.update({ lookupRefunds: 'none' });
    }
    expect(sandbox.ledger.get(key)).toMatchObject({ refunded: '3.25' });
  });

  it('when an unsettled sale is voided (with release), then it is voided; voiding again is refused as not_voidable', async () => {
    const key = await sold();
    expect((await client.void({ trankey: key, release: true })).value).toMatchObject({ key, result_code: 'A' });
    expect(sandbox.ledger.operations()).toMatchObject([{ command: 'cc:void:release', trankey: key }]);
    const err = await client.void({ trankey: key }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayRefusedError);
    expect(err).toMatchObject({ code: 'gateway_refused', reason: 'not_voidable', errorcode: 24, outcome: 'not_processed', operation: 'void' });
  });

  it.each([
    ['void of a settled sale', 'void', 'already_settled', 26],
    ['capture of a sale', 'capture', 'not_capturable', 10125],
    ['capture of a settled sale', 'capture', 'not_capturable', 10126],
    ['refund of an unsettled sale', 'refund', 'not_refundable', 115],
  ] as const)('when the client sends a %s, then it throws GatewayRefusedError %s (%s)', async (label, op, reason, errorcode) => {
    const key = await sold();
    if (label.includes('settled sale') && !label.includes('unsettled')) settle();
    const call = op === 'void' ? client.void({ trankey: key }) : op === 'capture' ? client.capture({ trankey: key }) : client.refund({ trankey: key });
    await expect(call).rejects.toMatchObject({ reason, errorcode, operation: op });
    expect(sandbox.ledger.get(key)).toMatchObject({ state: label.includes('unsettled') || label === 'capture of a sale' ? 'unsettled' : 'settled', refunded: '0.00' });
  });

  it('when a follow-up is refused, then the call event says refused for its operation (the metric label)', async () => {
    const events: CallEvent[] = [];
    const c = clientFor(sandbox, { onCall: (e) => events.push(e) });
    try {
      const key = (await c.authorize({ cardref: approvedRef, amount: '1.00', invoice: invoice() })).value.key;
      await c.void({ trankey: key });
      await c.capture({ trankey: key }).catch(() => undefined);
      await c.getTransaction(key);
      expect(events.map((e) => [e.op, e.outcome, e.status])).toEqual([
        ['authorize', 'ok', 200],
        ['void', 'ok', 200],
        ['capture', 'refused', 200],
        ['transaction', 'ok', 200],
      ]);
    } finally {
      c.close();
    }
  });

  it('when a capture asks for more than authorized or names an unknown key, then the reasons are capture_exceeds and not_found', async () => {
    const key = await authorized('5.00');
    await expect(client.capture({ trankey: key, amount: '5.01' })).rejects.toMatchObject({ reason: 'capture_exceeds', errorcode: 10133 });
    await expect(client.capture({ trankey: 'dnosuchkey00000' })).rejects.toMatchObject({ reason: 'not_found' });
    await expect(client.void({ trankey: 'dnosuchkey00000' })).rejects.toMatchObject({ reason: 'not_found', errorcode: 35 });
    await expect(client.refund({ trankey: 'dnosuchkey00000' })).rejects.toMatchObject({ reason: 'not_found', errorcode: 113 });
  });

  it('when refunds would exceed what was captured, then refund_exceeds (refund 114, creditvoid 10133) and the ledger holds the bound', async () => {
    const key = await sold('10.00');
    settle();
    await client.refund({ trankey: key, amount: '6.00' });
    await expect(client.refund({ trankey: key, amount: '4.01' })).rejects.toMatchObject({ reason: 'refund_exceeds', errorcode: 114 });
    await expect(client.refund({ trankey: key, amount: '4.01', command: 'creditvoid' })).rejects.toMatchObject({ reason: 'refund_exceeds', errorcode: 10133 });
    await client.refund({ trankey: key, command: 'refund:adjust', amount: '4.00' });
    expect(sandbox.ledger.get(key)).toMatchObject({ captured: '10.00', refunded: '10.00' });
  });

  it('when a refund of a declined sale is asked, then it is not_refundable', async () => {
    const key = (await client.sale({ cardref: declinedRef, amount: '1.00', invoice: invoice() })).value.key;
    await expect(client.refund({ trankey: key })).rejects.toMatchObject({ reason: 'not_refundable', errorcode: 10125 });
  });

  it('when creditvoid meets an unsettled sale, then it voids (the original key comes back)', async () => {
    const key = await sold();
    expect((await client.refund({ trankey: key, command: 'creditvoid' })).value.key).toBe(key);
    expect(sandbox.ledger.get(key)).toMatchObject({ voided: true });
  });

  it('when two equal partial refunds go out with folding on, then ignore_duplicate keeps them two refunds', async () => {
    sandbox.update({ duplicateFolding: true });
    try {
      const key = await sold('10.00');
      settle();
      await client.refund({ trankey: key, amount: '1.00', ignore_duplicate: true });
      const second = await client.refund({ trankey: key, amount: '1.00', ignore_duplicate: true });
      expect(second.value.is_duplicate).toBe('N');
      expect(sandbox.ledger.get(key)).toMatchObject({ refunded: '2.00' });
    } finally {
      sandbox.update({ duplicateFolding: false });
    }
  });

  it('when batches are listed and read, then they parse with counts and totals', async () => {
    const key = await sold('4.00');
    const current = (await client.getBatch('current')).value;
    expect(current).toMatchObject({ type: 'batch', status: 'open', sales_count: 1, sales_amount: '4.00', voids_count: 0 });
    const closedKey = settle();
    expect(closedKey).toBe(current.key);
    const batches = (await client.listBatches({ limit: 10, offset: 0 })).value;
    expect(batches.data[0]).toMatchObject({ key: current.key, status: 'closed' });
    expect(batches.data[0]?.closed).toMatch(/^\d{4}-/);
    const txs = (await client.listBatchTransactions(current.key, { limit: 10, offset: 0 })).value;
    expect(txs.data.map((t) => [t.key, t.status_code])).toEqual([[key, 'S']]);
    expect((await client.listBatchTransactions('current', { limit: 10, offset: 0 })).value.total).toBe(0);
  });

  it('when an unknown transaction or batch is looked up, then GatewayNotFoundError', async () => {
    await expect(client.getTransaction('dnosuchkey00000')).rejects.toBeInstanceOf(GatewayNotFoundError);
    await expect(client.getBatch('nosuchbatch')).rejects.toBeInstanceOf(GatewayNotFoundError);
    await expect(client.listCustomerTransactions('nosuchcustomer', { limit: 1, offset: 0 })).rejects.toBeInstanceOf(GatewayNotFoundError);
  });
});

describe('gateway client: follow-ups are writes, lookups are reads', () => {
  type Op = 'capture' | 'void' | 'refund';
  const arrange: Record<Op, () => Promise<string>> = {
    capture: () => authorized(),
    void: () => sold(),
    refund: async () => {
      const key = await sold();
      settle();
      return key;
    },
  };
  const send = (c: GatewayClient, op: Op, trankey: string) =>
    op === 'capture' ? c.capture({ trankey }) : op === 'void' ? c.void({ trankey }) : c.refund({ trankey, amount: '2.00' });
  const moved = (op: Op, key: string) => {
    const e = sandbox.ledger.get(key);
    return op === 'capture' ? e?.captured === '10.00' : op === 'void' ? e?.voided === true : e?.refunded === '2.00';
  };

  const cases = (['capture', 'void', 'refund'] as const).flatMap((op) =>
    ([
      ['hang', GatewayTimeoutError],
      ['reset', GatewayConnectionResetError],
      ['5xx', GatewayServerError],
      ['garbage', GatewayUnreadableError],
    ] as const).map(([kind, type]) => ({ op, kind, type })),
  );

  it.each(cases)('when a $op meets a $kind after processing, then it fails with an uncertain outcome and is sent exactly once', async ({ op, kind, type }) => {
    const key = await arrange[op]();
    const events: CallEvent[] = [];
    const retries: string[] = [];
    const c = clientFor(sandbox, { timeoutMs: 300, onCall: (e) => events.push(e), beforeRetry: async (o) => void retries.push(o) });
    try {
      sandbox.faults.next({ kind, when: 'after', match: op });
      const err = await send(c, op, key).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(type);
      expect((err as { outcome: string }).outcome).not.toBe('not_processed');
      expect(events.filter((e) => e.op === op)).toHaveLength(1);
      expect(retries).toEqual([]);
      // The sandbox's ledger is the judge: the follow-up reached it once and took effect once.
      expect(sandbox.ledger.operations().filter((o) => o.trankey === key)).toHaveLength(1);
      expect(moved(op, key)).toBe(true);
    } finally {
      c.close();
    }
  });

  it.each(['capture', 'void', 'refund'] as const)('when a %s meets a 5xx before processing, then it is not re-sent and nothing moved', async (op) => {
    const key = await arrange[op]();
    sandbox.faults.next({ kind: '5xx', when: 'before', match: op });
    await expect(send(client, op, key)).rejects.toBeInstanceOf(GatewayServerError);
    expect(sandbox.ledger.operations().filter((o) => o.trankey === key)).toHaveLength(0);
    expect(moved(op, key)).toBe(false);
  });

  it('when a lookup meets a fault once, then it is re-sent once through the budget hook and succeeds', async () => {
    const key = await sold();
    const retries: string[] = [];
    const c = clientFor(sandbox, { timeoutMs: 300, beforeRetry: async (o) => void retries.push(o) });
    try {
      sandbox.faults.next({ kind: 'reset', match: 'lookup' });
      expect((await c.getTransaction(key)).value.key).toBe(key);
      sandbox.faults.next({ kind: '5xx', match: 'batches' });
      expect((await c.listBatches({ limit: 5, offset: 0 })).value.total).toBe(1);
      expect(retries).toEqual(['transaction', 'batches']);
    } finally {
      c.close();
    }
  });
});
