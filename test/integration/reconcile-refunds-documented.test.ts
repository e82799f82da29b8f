import { randomBytes } from 'node:crypto';
import { callSandbox } from '../../src/sandbox/client';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';

/**
 * Issue 42: a refund whose answer was lost is decided only from what the gateway documents (the sale's look-up
 * status and auth_amount, the batch lists where a refund is its own transaction, tagged in custom_fields), never
 * from a look-up's `refunds` list, which the gateway does not have. The sandbox's ledger is the judge: one
 * Idempotency-Key, one refund at the gateway, under both readings of the look-up (`none` is the documented one).
 * Where the records cannot decide (the custom field dropped), the key stays unknown past the deadline, the
 * metric the alert reads says so, and an operator settles it on the admin port.
 */

const MAX_PROCESSING_MS = 1500;
const DEADLINE_MS = 2500;
const ENV = {
  GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '200',
  RECONCILE_MAX_PROCESSING_MS: String(MAX_PROCESSING_MS), RECONCILE_DEADLINE_MS: String(DEADLINE_MS),
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  headers: Headers;
  body: { key?: string; amount?: string; method?: string; amount_refunded?: string; error?: { code?: string }; [f: string]: unknown };
}

function harness(sandbox: Record<string, string>) {
  const run = randomBytes(3).toString('hex');
  const ctx = { bff: undefined as unknown as Bff, customer: '', paymentMethod: '', n: 0 };
  beforeAll(async () => {
    ctx.bff = await startBff({ sandbox, env: ENV });
    const found = ctx.bff.sandbox.fixtures.findByNumber('4000100011112224');
    if (!found) throw new Error('fixture card missing');
    ctx.customer = found.customer.key;
    ctx.paymentMethod = found.method.key;
  });
  afterAll(async () => {
    await ctx.bff?.stop();
  });
  const sub = `reconcile-doc-${run}`;
  const bearer = () => token({ sub, custkey: ctx.customer, scope: 'sales:create sales:read refunds:create' });
  async function call(method: string, path: string, key?: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${bearer()}`, 'content-type': 'application/json' };
    if (key) headers['idempotency-key'] = key;
    const res = await fetch(`${ctx.bff.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
  }
  /** A 40.00 sale, settled (its batch closed) or not. */
  async function sale(settled: boolean): Promise<string> {
    ctx.n += 1;
    const answer = await call('POST', '/v1/sales', `doc-sale-${run}-${ctx.n}`, { customer: ctx.customer, payment_method: ctx.paymentMethod, amount: '40.00', invoice: `doc.${run}.${ctx.n}` });
    expect(answer.status).toBe(201);
    if (settled) ctx.bff.sandbox.ledger.closeBatch();
    return answer.body.key as string;
  }
  /** A refund the gateway processed and whose answer was lost (5xx after processing): 502, the key unknown. */
  async function lostRefund(saleKey: string, key: string, amount: string): Promise<number> {
    ctx.bff.sandbox.faults.next({ kind: '5xx', match: 'refund', when: 'after', status: 502 });
    const first = await call('POST', `/v1/sales/${saleKey}/refunds`, key, { amount });
    expect(first.status).toBe(502);
    const unknownAt = Date.now();
    expect((await call('POST', `/v1/sales/${saleKey}/refunds`, key, { amount })).body.error?.code).toBe('outcome_unknown');
    return unknownAt;
  }
  /** The retry the caller makes once the deadline has passed (the reconciler has had all its time). */
  async function retryAfterDeadline(saleKey: string, key: string, amount: string, unknownAt: number): Promise<Answer> {
    await sleep(Math.max(0, unknownAt + DEADLINE_MS + 200 - Date.now()));
    return call('POST', `/v1/sales/${saleKey}/refunds`, key, { amount });
  }
  /** Money the gateway returned on the sale: its refunds (credits) and what refund:adjust took off it. */
  const refundsAtGateway = (saleKey: string) => ctx.bff.sandbox.ledger.operations().filter((o) => o.trankey === saleKey && o.result_code === 'A' && !o.folded);
  return { ctx, run, call, sale, lostRefund, retryAfterDeadline, refundsAtGateway };
}

// The look-up's readings: its `refunds` list (none, as documented, or listed) and its `auth_amount` (listed, as the
// spec's transaction response, or omitted, as the reference's look-up example and the capture).
describe.each([
  ['none', 'listed'],
  ['listed', 'listed'],
  ['none', 'omitted'],
] as const)('the look-up lists refunds: %s, auth_amount: %s', (lookupRefunds, lookupAuthAmount) => {
  const h = harness({ lookupRefunds, lookupAuthAmount });

  test.each([['settled', true], ['unsettled', false]] as const)('when a refund of a %s sale was processed and its answer lost, then the retry after the deadline replays it (or, with no auth_amount to show an unsettled sale\'s adjust, stays unknown) and the gateway holds one refund', async (_name, settled) => {
    const saleKey = await h.sale(settled);
    const key = `doc-lost-${settled ? 's' : 'u'}-${h.run}`;
    const unknownAt = await h.lostRefund(saleKey, key, '10.00');
    const retry = await h.retryAfterDeadline(saleKey, key, '10.00', unknownAt);
    if (!settled && lookupAuthAmount === 'omitted') {
      // refund:adjust left its mark only in auth_amount: nothing documented proves it either way, nothing is re-sent.
      expect([retry.status, retry.body.error?.code]).toEqual([409, 'outcome_unknown']);
      expect(h.refundsAtGateway(saleKey)).toHaveLength(1);
      expect(h.ctx.bff.logs()).toMatch(/carries no auth_amount/);
      return;
    }
    expect([retry.status, retry.headers.get('tokengate-reconciled'), retry.body.amount, retry.body.method]).toEqual([201, 'true', '10.00', 'refund']);
    expect(h.refundsAtGateway(saleKey)).toHaveLength(1);
    const entry = h.ctx.bff.sandbox.ledger.get(saleKey);
    // Settled: one credit of 10.00; unsettled: the capture lowered by 10.00 (refund:adjust). 10.00 either way.
    expect(Number(entry?.refunded) + 40 - Number(entry?.captured)).toBe(10);
    if (settled) expect(retry.body.key).toBe(entry?.refunds[0]?.key);
    expect((await h.call('GET', `/v1/sales/${saleKey}`)).body.amount_refunded).toBe('10.00');
  });

  test('when all of a settled sale was refunded and its answer lost, then the retry replays that refund (tagged, though the view did not know the sale settled)', async () => {
    const saleKey = await h.sale(true);
    const key = `doc-lost-all-${h.run}`;
    h.ctx.bff.sandbox.faults.next({ kind: '5xx', match: 'refund', when: 'after', status: 502 });
    expect((await h.call('POST', `/v1/sales/${saleKey}/refunds`, key)).status).toBe(502);
    const unknownAt = Date.now();
    await new Promise((r) => setTimeout(r, Math.max(0, unknownAt + DEADLINE_MS + 200 - Date.now())));
    const retry = await h.call('POST', `/v1/sales/${saleKey}/refunds`, key);
    expect([retry.status, retry.headers.get('tokengate-reconciled'), retry.body.amount, retry.body.method]).toEqual([201, 'true', '40.00', 'refund']);
    expect(h.refundsAtGateway(saleKey).map((o) => o.command)).toEqual(['refund']);
    expect(retry.body.key).toBe(h.ctx.bff.sandbox.ledger.get(saleKey)?.refunds[0]?.key);
  });

  test('when two refunds of one settled sale were both processed and their answers lost at once, then each key replays its own and the gateway holds exactly two', async () => {
    const saleKey = await h.sale(true);
    const keys = [`doc-two-a-${h.run}`, `doc-two-b-${h.run}`];
    h.ctx.bff.sandbox.faults.next({ kind: '5xx', match: 'refund', when: 'after', status: 502, count: 2 });
    const firsts = await Promise.all(keys.map((k) => h.call('POST', `/v1/sales/${saleKey}/refunds`, k, { amount: '7.00' })));
    const unknownAt = Date.now();
    expect(firsts.map((f) => f.status)).toEqual([502, 502]);
    const retries = await Promise.all(keys.map((k) => h.retryAfterDeadline(saleKey, k, '7.00', unknownAt)));
    expect(retries.map((r) => [r.status, r.headers.get('tokengate-reconciled'), r.body.amount])).toEqual([[201, 'true', '7.00'], [201, 'true', '7.00']]);
    const made = h.refundsAtGateway(saleKey);
    expect(made).toHaveLength(2);
    // Each key names the refund it made (its tag), never the other's.
    expect(new Set(retries.map((r) => r.body.key))).toEqual(new Set(made.map((o) => o.createdKey)));
    expect((await h.call('GET', `/v1/sales/${saleKey}`)).body.amount_refunded).toBe('14.00');
  });
});

describe('where the gateway keeps no custom field (SANDBOX_CUSTOM_FIELDS=dropped)', () => {
  const h = harness({ customFields: 'dropped' });
  const operator = (claims: { sub?: string; custkey?: string; scope?: string } = {}) => token({ sub: claims.sub ?? 'ops-alice', scope: claims.scope ?? 'outcomes:settle', ...(claims.custkey ? { custkey: claims.custkey } : {}) });
  async function admin(method: string, path: string, bearer?: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) };
    const res = await fetch(`${h.ctx.bff.adminUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
  const oldestAge = async () => Number(/^tokengate_unknown_outcomes_oldest_age_seconds (\S+)$/m.exec(await (await fetch(`${h.ctx.bff.adminUrl}/metrics`)).text())?.[1]);

  test('when a refund of a settled sale was processed untagged and its answer lost, then nothing is sent again, the key stays unknown past the deadline, and an operator settles it as found', async () => {
    const saleKey = await h.sale(true);
    const key = `doc-hand-found-${h.run}`;
    const unknownAt = await h.lostRefund(saleKey, key, '10.00');
    const retry = await h.retryAfterDeadline(saleKey, key, '10.00', unknownAt);
    expect([retry.status, retry.body.error?.code]).toEqual([409, 'outcome_unknown']);
    expect(h.refundsAtGateway(saleKey)).toHaveLength(1);
    // What the alert reads: the oldest unknown outcome is past the deadline.
    expect(await oldestAge()).toBeGreaterThan(DEADLINE_MS / 1000);
    const sub = `reconcile-doc-${h.run}`;
    const listed = await admin('GET', '/unknown-outcomes', operator());
    expect(listed.body.data).toEqual(expect.arrayContaining([expect.objectContaining({ caller: sub, idempotency_key: key })]));

    const credit = h.ctx.bff.sandbox.ledger.get(saleKey)?.refunds[0]?.key as string;
    const body = { caller: sub, idempotency_key: key, outcome: 'found', transaction: credit, reason: 'console shows the 10.00 credit' };
    // Who may decide: a token with outcomes:settle, bound to no customer; nothing else moves the key.
    expect((await admin('POST', '/unknown-outcomes/settle', undefined, body)).status).toBe(401);
    expect((await admin('POST', '/unknown-outcomes/settle', operator({ scope: 'sales:read' }), body)).status).toBe(403);
    expect((await admin('POST', '/unknown-outcomes/settle', operator({ custkey: h.ctx.customer }), body)).status).toBe(403);
    expect((await admin('POST', '/unknown-outcomes/settle', operator(), { ...body, transaction: saleKey })).body.error).toMatchObject({ code: 'transaction_mismatch' });
    const settled = await admin('POST', '/unknown-outcomes/settle', operator(), body);
    expect(settled).toMatchObject({ status: 200, body: { result: 'settled', operation: 'refund', decided_by: 'ops-alice' } });

    const replay = await h.call('POST', `/v1/sales/${saleKey}/refunds`, key, { amount: '10.00' });
    expect([replay.status, replay.headers.get('tokengate-reconciled'), replay.body.key]).toEqual([201, 'true', credit]);
    expect(h.refundsAtGateway(saleKey)).toHaveLength(1);
    await eventually(() => /unknown outcome settled by hand: found.*ops-alice|ops-alice.*unknown outcome settled by hand: found/.test(h.ctx.bff.logs()));
    expect((await admin('POST', '/unknown-outcomes/settle', operator(), body)).body.error).toMatchObject({ code: 'not_unknown' });
  });

  test('when an untagged credit of the same amount stands beside a refund that never reached the gateway, then it is not proven absent on a missing tag, and an operator releases it', async () => {
    const saleKey = await h.sale(true);
    // A 10.00 refund made in the console (not through tokengate).
    const console = await callSandbox(h.ctx.bff.sandbox.baseUrl, 'POST', 'transactions', { body: { command: 'refund', trankey: saleKey, amount: '10.00' } });
    expect(console.json).toMatchObject({ result_code: 'A' });
    h.ctx.bff.sandbox.faults.next({ kind: '5xx', match: 'refund', when: 'before', status: 502 });
    const key = `doc-hand-absent-${h.run}`;
    expect((await h.call('POST', `/v1/sales/${saleKey}/refunds`, key, { amount: '10.00' })).status).toBe(502);
    const unknownAt = Date.now();
    const retry = await h.retryAfterDeadline(saleKey, key, '10.00', unknownAt);
    expect([retry.status, retry.body.error?.code]).toEqual([409, 'outcome_unknown']);
    expect(h.refundsAtGateway(saleKey)).toHaveLength(1);
    const settled = await admin('POST', '/unknown-outcomes/settle', operator({ sub: 'ops-bob' }), { caller: `reconcile-doc-${h.run}`, idempotency_key: key, outcome: 'absent', reason: 'the console refund was the clerk\'s' });
    expect(settled).toMatchObject({ status: 200, body: { result: 'settled', decided_by: 'ops-bob' } });
    const again = await h.call('POST', `/v1/sales/${saleKey}/refunds`, key, { amount: '10.00' });
    expect([again.status, again.headers.get('tokengate-reconciled')]).toEqual([201, null]);
    expect(h.refundsAtGateway(saleKey)).toHaveLength(2);
  });
});
