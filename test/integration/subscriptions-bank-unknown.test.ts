import { randomBytes } from 'node:crypto';
import type { Service } from '../../src/compose';
import { RENEWALS_CALLER } from '../../src/subscriptions/renewals';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * A renewal on a bank account whose answer was lost (guarantees 6, 13, 14; docs/subscriptions.md, "Bank accounts"):
 * the sandbox hangs the debit's answer after it made it, the reconciler finds the debit in the gateway's records,
 * and the bank's return of it days later must reach the subscription however the sale was resolved: the
 * reconciler's resolution links the sale to its period, as the renewal's own answer would have. The reconciler's
 * passes are driven by hand, and the subscription's claim is held (as a replica that died holding it would) while
 * the return comes, so the order is the one under test (the return before any renewal pass replays the answer),
 * never a race with the clock. The same holds for the first debit made at a subscription's creation: the resolution
 * creates the subscription, linked to its debit, even if the client never asks again.
 */
jest.setTimeout(120_000);
const SECRET = 'gateway-webhook-signature-key-for-bank-unknown-renewals';
const DAY = 86_400_000;
const run = randomBytes(3).toString('hex');
let n = 0;
const id = (what: string) => `${what}-${run}-${++n}`;
const service = () => token({ sub: `bank-unknown-${run}`, scope: 'customers:any sales:create sales:read payment_methods:read payment_methods:write subscriptions:read subscriptions:write events:read' }, { expiresIn: 900 });

let bff: Bff;
let svc: Service;
beforeAll(async () => {
  bff = await startBff({ env: { GATEWAY_WEBHOOK_SECRET: SECRET, SUBSCRIPTION_POLL_MS: '25' } });
  bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
  svc = bff.service as Service;
  // Driven by hand below: no reconciler pass runs by itself.
  await svc.reconciler.stop();
});
afterAll(() => bff?.stop());

type Sub = { key: string; status: string; periods_charged: number; next_charge_at: string | null; history: { period: number; sale: string | null; result: string; decline_code: string | null }[] };
const sub = async (key: string) => (await call(bff.url, 'GET', `/v1/subscriptions/${key}`, service())).body as unknown as Sub;
const now = async () => Date.parse(((await (await fetch(`${bff.adminUrl}/test/clock`)).json()) as { now: string }).now);
const advance = (ms: number) => fetch(`${bff.adminUrl}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: ms }) });

/**
 * A subscription on a bank method kept from `account` whose first renewal's debit is made at the gateway with its
 * answer lost (outcome unknown), then held by a test claim so that no renewal pass works on it.
 */
async function lostBankRenewal(customer: number, account: string, prefix: string): Promise<{ key: string; saleKey: string; write: string }> {
  const c = (bff.sandbox.fixtures.customers[customer] as { key: string }).key;
  const payment_key = bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account, account_type: 'checking' });
  const kept = await call(bff.url, 'POST', '/v1/sales', service(), { customer: c, amount: '1.00', payment_key, authorization: { text: 'one-off v1' }, save_payment_method: true }, { 'idempotency-key': id('keep') });
  expect(kept.status).toBe(201);
  const start = new Date((await now()) + DAY).toISOString().slice(0, 10);
  const created = await call(bff.url, 'POST', `/v1/customers/${c}/subscriptions`, service(), { amount: '25.00', interval: 'month', payment_method: kept.body.payment_method, start, invoice_prefix: prefix, consent: { text: 'Monthly debit, terms v4' } }, { 'idempotency-key': id('sub') });
  expect(created.status).toBe(201);
  const key = created.body.key as string;
  // The renewal's debit is made at the gateway, its answer lost (tokengate times out): the outcome is unknown.
  const write = `renewal:${key}:0:0`;
  bff.sandbox.faults.next({ kind: 'hang', match: 'sale' });
  await advance(DAY + 60_000);
  await eventually(async () => (await svc.idempotency.inspect(RENEWALS_CALLER.sub, write)).state === 'unknown');
  const debits = bff.sandbox.ledger.entries().filter((t) => t.kind === 'sale' && t.invoice === `${prefix}-1` && t.result_code === 'A');
  expect(debits).toHaveLength(1);
  // No renewal pass works on it from here until the test releases it (a replica holding its claim).
  await eventually(() => svc.subscriptions.store.claim(key, 'the-test', 600_000));
  return { key, saleKey: debits[0]?.key as string, write };
}

/** The reconciler, run by hand until it finds the debit in the gateway's records and resolves the write. */
async function resolvedByReconciler(write: string): Promise<void> {
  await eventually(async () => {
    await svc.reconciler.runOnce();
    return (await svc.idempotency.inspect(RENEWALS_CALLER.sub, write)).state === 'completed';
  });
}

/** A renewal pass after the test's claim is released: a replay of the stored answer, which must not mark the period paid. */
async function afterRenewalPass(key: string): Promise<Sub> {
  await svc.subscriptions.store.release(key, 'the-test');
  await svc.subscriptions.renewals.tick();
  return sub(key);
}

test('when a bank renewal\'s answer is lost and the reconciler finds the debit, then the bank\'s later return reaches the subscription (past_due, period unpaid) before any renewal pass replays it', async () => {
  // 10178102 comes back R02 (account closed) on the third day: a hard return.
  const { key, saleKey, write } = await lostBankRenewal(17, '10178102', `bu${run}`);

  // The reconciler finds it in the gateway's records: the write is resolved (no renewal pass has run since).
  await resolvedByReconciler(write);

  // Days later the bank returns it (the sandbox's ACH clock): the sale shows it, and so must its subscription.
  bff.sandbox.clock.advance(5 * DAY);
  await eventually(async () => (await call(bff.url, 'GET', `/v1/sales/${saleKey}`, service())).body.status === 'returned');
  await eventually(async () => (await sub(key)).status === 'past_due');
  // A renewal pass now (a replay of the stored answer) does not turn the returned period back into a paid one.
  const after = await afterRenewalPass(key);
  expect(after).toMatchObject({ status: 'past_due', periods_charged: 0, next_charge_at: null });
  expect(after.history.map((a) => [a.period, a.sale, a.result, a.decline_code])).toEqual([[0, saleKey, 'approved', null], [0, saleKey, 'returned', 'R02']]);
});

test('when a bank renewal\'s answer is lost and its debit fails (ach.failed) before the reconciler finds it, then the failure reaches the subscription once the debit is resolved (past_due, period unpaid), and a renewal pass does not mark it paid', async () => {
  // An ordinary account (never returned): the sandbox fails the debit on request.
  const { key, saleKey, write } = await lostBankRenewal(16, '000111222666', `bf${run}`);

  // The debit is submitted, then fails, while tokengate does not know the sale yet: the failure is kept.
  const failed = () => bff.sandbox.webhooks.attempts().filter((a) => a.outcome === 'delivered' && a.event_type === 'ach.failed').length;
  const before = failed();
  bff.sandbox.clock.advance(DAY);
  bff.sandbox.achFail(saleKey);
  await eventually(() => failed() > before);

  // The reconciler finds the debit: its record and link are written, the kept failure applied to both.
  await resolvedByReconciler(write);
  await eventually(async () => (await sub(key)).status === 'past_due');
  const after = await afterRenewalPass(key);
  expect(after).toMatchObject({ status: 'past_due', periods_charged: 0, next_charge_at: null });
  expect(after.history.map((a) => [a.period, a.sale, a.result, a.decline_code])).toEqual([[0, saleKey, 'approved', null], [0, saleKey, 'returned', 'ach_failed']]);
});

test('when a bank subscription\'s first debit (charged at creation) has its answer lost, then the reconciler creates the subscription, linked to the debit, and the bank\'s later return reaches it', async () => {
  const c = (bff.sandbox.fixtures.customers[15] as { key: string }).key;
  const payment_key = bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account: '10178102', account_type: 'checking' });
  const kept = await call(bff.url, 'POST', '/v1/sales', service(), { customer: c, amount: '1.00', payment_key, authorization: { text: 'one-off v1' }, save_payment_method: true }, { 'idempotency-key': id('keep') });
  expect(kept.status).toBe(201);
  const prefix = `bfirst${run}`;
  const idem = id('sub');
  // The first debit is made at the gateway, its answer lost: the create answers an unknown outcome.
  bff.sandbox.faults.next({ kind: 'hang', match: 'sale' });
  const created = await call(bff.url, 'POST', `/v1/customers/${c}/subscriptions`, service(), { amount: '30.00', interval: 'month', payment_method: kept.body.payment_method, invoice_prefix: prefix, consent: { text: 'Monthly debit, terms v4' } }, { 'idempotency-key': idem });
  expect(created.status).toBe(504);
  const debits = bff.sandbox.ledger.entries().filter((t) => t.kind === 'sale' && t.invoice === `${prefix}-1` && t.result_code === 'A');
  expect(debits).toHaveLength(1);
  const saleKey = debits[0]?.key as string;
  const listed = async () => ((await call(bff.url, 'GET', `/v1/customers/${c}/subscriptions`, service())).body.data as Sub[]);

  // The reconciler finds the debit; the client never asks again.
  await eventually(async () => {
    await svc.reconciler.runOnce();
    return (await svc.idempotency.inspect(`bank-unknown-${run}`, `subscription\u0000${idem}`)).state === 'completed';
  });
  await eventually(async () => (await listed()).length === 1);
  const key = (await listed())[0]?.key as string;
  expect(await sub(key)).toMatchObject({ status: 'active', periods_charged: 1 });

  // Days later the bank returns it (R02, hard): the subscription created by the resolution hears it.
  bff.sandbox.clock.advance(5 * DAY);
  await eventually(async () => (await sub(key)).status === 'past_due');
  const after = await sub(key);
  expect(after).toMatchObject({ periods_charged: 0, next_charge_at: null });
  expect(after.history.map((a) => [a.period, a.sale, a.result, a.decline_code])).toEqual([[0, saleKey, 'approved', null], [0, saleKey, 'returned', 'R02']]);
});
