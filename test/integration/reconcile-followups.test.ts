import { randomBytes } from 'node:crypto';
import { startBff, token, type Bff } from '../support/bff';

/**
 * Unknown outcomes of captures, voids and refunds resolved from the original transaction (issue 12, contract
 * guarantees 6 and 7), against the sandbox, whose ledger is the judge: never moved twice, never beyond the
 * captured amount, the reservation of a refund kept while unknown and settled from the gateway's records.
 * Under both readings of the look-up (issue 42): `none` (as documented: no `refunds` list) and `listed`; the
 * reconciler must never need the list. And with the look-up's `auth_amount` omitted (the reference's look-up
 * example and the capture have none): a capture is settled at the amount it asked; a refund that only auth_amount
 * could prove (a refund:adjust of an unsettled capture) or disprove stays unknown and nothing is sent again.
 */

const MAX_PROCESSING_MS = 1500;

describe.each([
  ['none', 'listed'],
  ['listed', 'listed'],
  ['none', 'omitted'],
] as const)('the look-up lists refunds: %s, auth_amount: %s', (lookupRefunds, lookupAuthAmount) => {
  const omitted = lookupAuthAmount === 'omitted';
  let bff: Bff;
  let customer: string;
  let paymentMethod: string;
  const run = randomBytes(3).toString('hex');
  let n = 0;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    bff = await startBff({
      sandbox: { lookupRefunds, lookupAuthAmount },
      env: { GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '200', RECONCILE_MAX_PROCESSING_MS: String(MAX_PROCESSING_MS) },
    });
    const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
    if (!found) throw new Error('fixture card missing');
    customer = found.customer.key;
    paymentMethod = found.method.key;
  });
  afterAll(async () => {
    await bff?.stop();
  });

  interface Answer {
    status: number;
    headers: Headers;
    body: { key?: string; status?: string; amount?: string; method?: string; amount_refunded?: string; error?: { code?: string }; [f: string]: unknown };
  }

  const bearer = () => token({ sub: `reconcile-fu-${run}`, custkey: customer, scope: 'sales:create sales:read sales:capture sales:void refunds:create' });

  async function call(method: string, path: string, key?: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${bearer()}`, 'content-type': 'application/json' };
    if (key) headers['idempotency-key'] = key;
    const res = await fetch(`${bff.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
  }

  async function untilKnown(path: string, key: string, body?: unknown, withinMs = 10_000): Promise<Answer> {
    const until = Date.now() + withinMs;
    for (;;) {
      const answer = await call('POST', path, key, body);
      if (answer.status !== 409 || answer.body.error?.code !== 'outcome_unknown' || Date.now() > until) return answer;
      await sleep(100);
    }
  }

  /** A reconciled answer is the sale a GET right after reads (the one sale shape): every field, every value. */
  async function expectSameAsRead(answer: Answer, sale: string): Promise<void> {
    const read = await call('GET', `/v1/sales/${sale}`);
    expect(read.status).toBe(200);
    expect(answer.body).toEqual(read.body);
    expect(answer.body).toMatchObject({ payment_method: paymentMethod, is_duplicate: 'N', avs: { result_code: expect.any(String) }, cvc: { result_code: expect.any(String) }, amount_refunded: '0.00', refunds: [] });
  }

  async function newSale(capture = true): Promise<string> {
    n += 1;
    const answer = await call('POST', '/v1/sales', `fu-sale-${run}-${n}`, { customer, payment_method: paymentMethod, amount: '40.00', invoice: `fu.${run}.${n}`, ...(capture ? {} : { capture: false }) });
    expect(answer.status).toBe(201);
    return answer.body.key as string;
  }

  test('when a capture was processed and its answer lost, then the key completes as captured and the ledger shows one capture', async () => {
    const sale = await newSale(false);
    bff.sandbox.faults.next({ kind: 'hang', match: 'capture', when: 'after' });
    const key = `fu-cap-${run}`;
    expect((await call('POST', `/v1/sales/${sale}/capture`, key, { amount: '25.00' })).status).toBe(504);
    const final = await untilKnown(`/v1/sales/${sale}/capture`, key, { amount: '25.00' });
    expect(final.status).toBe(200);
    expect(final.headers.get('tokengate-reconciled')).toBe('true');
    expect(final.body).toMatchObject({ key: sale, status: 'pending_settlement', amount_captured: '25.00' });
    await expectSameAsRead(final, sale);
    expect(bff.sandbox.ledger.get(sale)).toMatchObject({ captured: '25.00' });
    expect(bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.command === 'cc:capture')).toHaveLength(1);
  });

  test('when a partial refund was processed and its connection reset, then it is found, and the refund bound counts it', async () => {
    const sale = await newSale();
    bff.sandbox.faults.next({ kind: 'reset', match: 'refund', when: 'after' });
    const key = `fu-ref-${run}`;
    expect([502, 504]).toContain((await call('POST', `/v1/sales/${sale}/refunds`, key, { amount: '30.00' })).status);
    const final = await untilKnown(`/v1/sales/${sale}/refunds`, key, { amount: '30.00' });
    if (omitted) {
      // Its only mark is the lowered auth_amount: unknown, nothing re-sent, the 30.00 still reserved.
      expect([final.status, final.body.error?.code]).toEqual([409, 'outcome_unknown']);
      expect((await call('POST', `/v1/sales/${sale}/refunds`, `fu-ref2-${run}`, { amount: '20.00' })).body.error?.code).toBe('refund_exceeds_sale');
      expect(bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.command === 'refund:adjust')).toHaveLength(1);
      return;
    }
    expect(final.status).toBe(201);
    expect(final.headers.get('tokengate-reconciled')).toBe('true');
    // Unsettled, the sale stays captured for 10.00: the replay says what the live answer says, a refund.
    expect(final.body).toMatchObject({ type: 'refund', amount: '30.00', sale, method: 'refund' });
    expect((await call('GET', `/v1/sales/${sale}`)).body.status).toBe('pending_settlement');
    // 30 of 40 refunded: 20 more would exceed what was captured, on any replica.
    expect((await call('POST', `/v1/sales/${sale}/refunds`, `fu-ref2-${run}`, { amount: '20.00' })).body.error?.code).toBe('refund_exceeds_sale');
    // Unsettled, a partial refund lowers what is captured (refund:adjust); settled, it is a refund: 30 either way.
    const entry = bff.sandbox.ledger.get(sale);
    expect(40 - Number(entry?.captured) + Number(entry?.refunded)).toBe(30);
  });

  test('when a whole refund of an unsettled sale was processed and its answer lost, then it replays as the void it was', async () => {
    const sale = await newSale();
    bff.sandbox.faults.next({ kind: '5xx', match: 'refund', when: 'after' });
    const key = `fu-ref-whole-${run}`;
    expect((await call('POST', `/v1/sales/${sale}/refunds`, key)).status).toBe(502);
    const final = await untilKnown(`/v1/sales/${sale}/refunds`, key);
    expect([final.status, final.headers.get('tokengate-reconciled')]).toEqual([201, 'true']);
    expect(final.body).toMatchObject({ type: 'refund', amount: '40.00', sale, method: 'void', key: sale });
    expect((await call('GET', `/v1/sales/${sale}`)).body.status).toBe('voided');
  });

  /**
   * A settled sale with two refunds of unknown outcome: r1 never reached the gateway (5xx before), r2 was made
   * and its answer lost (reset after).
   */
  async function twoUnknownRefunds(prefix: string, first: string, second: string): Promise<{ sale: string; r1: string; r2: string }> {
    const sale = await newSale();
    bff.sandbox.ledger.closeBatch();
    bff.sandbox.faults.next({ kind: '5xx', match: 'refund', when: 'before', status: 502 });
    const r1 = `${prefix}-r1-${run}`;
    expect((await call('POST', `/v1/sales/${sale}/refunds`, r1, { amount: first })).status).toBe(502);
    bff.sandbox.faults.next({ kind: 'reset', match: 'refund', when: 'after' });
    const r2 = `${prefix}-r2-${run}`;
    expect([502, 504]).toContain((await call('POST', `/v1/sales/${sale}/refunds`, r2, { amount: second })).status);
    return { sale, r1, r2 };
  }

  test('when two refunds of one settled sale are unknown at once and only one reached the gateway, then each key resolves to its own truth and no refund is made twice', async () => {
    // r1 (3.00) never reaches the gateway; r2 (5.00) is made and its answer lost. Both keys turn unknown.
    const { sale, r1, r2 } = await twoUnknownRefunds('fu-two', '3.00', '5.00');
    const made = bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.createdKey);
    expect(made.map((o) => o.amount)).toEqual(['5.00']);

    const [final1, final2] = await Promise.all([untilKnown(`/v1/sales/${sale}/refunds`, r1, { amount: '3.00' }), untilKnown(`/v1/sales/${sale}/refunds`, r2, { amount: '5.00' })]);
    // r2 is found, naming the gateway's 5.00 refund; r1 is proven absent, released, and its retry refunds once.
    expect([final2.status, final2.headers.get('tokengate-reconciled'), final2.body.amount, final2.body.key]).toEqual([201, 'true', '5.00', made[0]?.createdKey]);
    if (omitted) {
      // Without auth_amount nothing proves r1 was not a refund:adjust made before the batch closed: it waits.
      expect([final1.status, final1.body.error?.code]).toEqual([409, 'outcome_unknown']);
      expect(bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.createdKey).map((o) => o.amount)).toEqual(['5.00']);
      return;
    }
    expect([final1.status, final1.headers.get('tokengate-reconciled'), final1.body.amount]).toEqual([201, null, '3.00']);
    const refunds = bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.createdKey);
    expect(refunds.map((o) => o.amount).sort()).toEqual(['3.00', '5.00']);
    expect((await call('GET', `/v1/sales/${sale}`)).body.amount_refunded).toBe('8.00');
  });

  test('when two refunds of the same amount are unknown at once and only one reached the gateway, then once neither can land one is found and the other released, and the sale is refunded exactly twice', async () => {
    const { sale, r1, r2 } = await twoUnknownRefunds('fu-eq', '4.00', '4.00');
    expect(bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.createdKey)).toHaveLength(1);

    const finals = await Promise.all([r1, r2].map((k) => untilKnown(`/v1/sales/${sale}/refunds`, k, { amount: '4.00' })));
    if (omitted) {
      // The tagged credit names r2; r1 cannot be proven absent without auth_amount: one found, one unknown, one refund.
      expect(finals.map((f) => [f.status, f.headers.get('tokengate-reconciled')])).toEqual([[409, null], [201, 'true']]);
      expect(bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.createdKey)).toHaveLength(1);
      return;
    }
    // One key is credited with the refund the gateway made; the other is proven absent and its retry refunds once.
    expect(finals.map((f) => [f.status, f.body.amount]).sort()).toEqual([[201, '4.00'], [201, '4.00']]);
    expect(finals.map((f) => f.headers.get('tokengate-reconciled')).sort()).toEqual(['true', null].sort());
    const made = bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.createdKey);
    expect(made.map((o) => o.amount)).toEqual(['4.00', '4.00']);
    expect(new Set(finals.map((f) => f.body.key)).size).toBe(2);
    expect((await call('GET', `/v1/sales/${sale}`)).body.amount_refunded).toBe('8.00');
  });

  test('when a refund of one amount is unknown and a later refund of the same amount succeeds first, then the unknown one is found naming its own gateway refund, not the later one', async () => {
    const sale = await newSale();
    bff.sandbox.ledger.closeBatch();
    // r1 (4.00) is made and its answer lost; the gateway's reads fail until r2 is done, so it cannot be looked up yet.
    bff.sandbox.faults.next({ kind: '5xx', match: 'lookup', count: 10_000, status: 502 });
    bff.sandbox.faults.next({ kind: 'reset', match: 'refund', when: 'after' });
    const r1 = `fu-later-r1-${run}`;
    expect([502, 504]).toContain((await call('POST', `/v1/sales/${sale}/refunds`, r1, { amount: '4.00' })).status);
    const r2 = await call('POST', `/v1/sales/${sale}/refunds`, `fu-later-r2-${run}`, { amount: '4.00' });
    expect([r2.status, r2.body.amount]).toEqual([201, '4.00']);
    bff.sandbox.faults.clear();

    const final1 = await untilKnown(`/v1/sales/${sale}/refunds`, r1, { amount: '4.00' });
    const made = bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.createdKey).map((o) => o.createdKey);
    expect(made).toHaveLength(2);
    // Each key names its own gateway refund: r1 the first made, r2 the one it was answered with.
    expect([final1.status, final1.headers.get('tokengate-reconciled'), final1.body.key]).toEqual([201, 'true', made[0]]);
    expect(r2.body.key).toBe(made[1]);
    expect((await call('GET', `/v1/sales/${sale}`)).body.amount_refunded).toBe('8.00');
  });

  test('when a refund never reached the gateway (5xx before), then its reservation and key are released and a retry refunds once', async () => {
    const sale = await newSale();
    bff.sandbox.faults.next({ kind: '5xx', match: 'refund', when: 'before', status: 502 });
    const key = `fu-ref-none-${run}`;
    expect((await call('POST', `/v1/sales/${sale}/refunds`, key, { amount: '40.00' })).status).toBe(502);
    // While unknown, the whole amount stays reserved: nothing else can be refunded.
    expect((await call('POST', `/v1/sales/${sale}/refunds`, `fu-other-${run}`, { amount: '1.00' })).body.error?.code).toBe('refund_exceeds_sale');
    const final = await untilKnown(`/v1/sales/${sale}/refunds`, key, { amount: '40.00' });
    if (omitted) {
      // Not voided, and no auth_amount to show the capture untouched: absence is not proven, nothing is sent.
      expect([final.status, final.body.error?.code]).toEqual([409, 'outcome_unknown']);
      expect(bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.result_code === 'A' && o.command !== 'cc:sale')).toHaveLength(0);
      return;
    }
    expect(final.status).toBe(201);
    expect(final.headers.get('tokengate-reconciled')).toBeNull();
    const entry = bff.sandbox.ledger.get(sale);
    expect(entry?.voided || entry?.refunded === '40.00').toBe(true);
    expect(bff.sandbox.ledger.operations().filter((o) => o.trankey === sale && o.result_code === 'A')).toHaveLength(1);
  });

  test('when a void was processed and the gateway then hung, then the key completes as voided', async () => {
    const sale = await newSale();
    bff.sandbox.faults.next({ kind: 'hang', match: 'void', when: 'after' });
    const key = `fu-void-${run}`;
    expect((await call('POST', `/v1/sales/${sale}/void`, key)).status).toBe(504);
    const final = await untilKnown(`/v1/sales/${sale}/void`, key);
    expect(final.status).toBe(200);
    expect(final.body).toMatchObject({ key: sale, status: 'voided' });
    await expectSameAsRead(final, sale);
    expect(bff.sandbox.ledger.get(sale)?.voided).toBe(true);
  });
});
