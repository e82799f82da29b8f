import { randomBytes } from 'node:crypto';
import type { Service } from '../../src/compose';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call, type Answer } from '../support/wallet';

/**
 * A subscription's first charge whose answer is lost (guarantees 6, 13; docs/subscriptions.md, "create one"): the
 * sandbox makes the charge and then loses its answer (a hang past GATEWAY_TIMEOUT_MS, a reset after sending, a 5xx), so the
 * create answers an unknown outcome and the reconciler later finds the charge in the gateway's records. The
 * subscription that charge paid for must exist then whether or not the client ever asks again, exactly once
 * whichever path (the reconciler's resolution, the client's replay, another replica) gets there first. The
 * reconciler's passes are driven by hand (the order is the one under test, never a race with the clock).
 */
jest.setTimeout(120_000);
const run = randomBytes(3).toString('hex');
let n = 0;
const id = (what: string) => `${what}-${run}-${++n}`;
const service = () => token({ sub: `first-unknown-${run}`, scope: 'customers:any subscriptions:read subscriptions:write events:read' }, { expiresIn: 900 });

let bff: Bff;
let svc: Service;
beforeAll(async () => {
  bff = await startBff({ env: { SUBSCRIPTION_POLL_MS: '25', GATEWAY_TIMEOUT_MS: '400', RECONCILE_MAX_PROCESSING_MS: '300', RECONCILE_RETRY_MS: '100' } });
  svc = bff.service as Service;
  // Driven by hand below: no reconciler pass runs by itself.
  await svc.reconciler.stop();
});
afterAll(() => bff?.stop());

type Sub = { key: string; status: string; anchor: string; periods_charged: number; next_charge_at: string | null; invoice_prefix: string; created: string; history: { period: number; sale: string | null; result: string }[] };

function card(number: string): { custkey: string; pmkey: string } {
  const found = bff.sandbox.fixtures.findByNumber(number);
  if (!found) throw new Error(`fixture card ${number} is missing`);
  return { custkey: found.customer.key, pmkey: found.method.key };
}
const advance = (ms: number) => fetch(`${bff.adminUrl}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: ms }) });
const create = (base: string, custkey: string, body: Record<string, unknown>, idem: string): Promise<Answer> =>
  call(base, 'POST', `/v1/customers/${custkey}/subscriptions`, service(), { amount: '7.00', interval: 'month', consent: { text: 'monthly plan v5' }, ...body }, { 'Idempotency-Key': idem });
/** The customer's subscriptions under one invoice prefix (GET lists them). */
const listed = async (custkey: string, prefix: string) => ((await call(bff.url, 'GET', `/v1/customers/${custkey}/subscriptions`, service())).body.data as Sub[]).filter((s) => s.invoice_prefix === prefix);
/** Charges the sandbox processed under one subscription's invoices (its ledger is the judge). */
const charged = (prefix: string, period: number, result = 'A') => bff.sandbox.transactions().filter((t) => t.invoice === `${prefix}-${period}` && t.result_code === result);
/** The `subscription.*` events the log holds about one subscription. */
const eventsOf = async (key: string) => ((await call(bff.url, 'GET', '/v1/events?limit=1000', service())).body.data as { type: string; data: { key: string } }[])
  .filter((e) => e.type.startsWith('subscription.') && e.data.key === key).map((e) => e.type);
/** What `get` answers once it answers something (eventually, returning it). */
async function until<T>(get: () => Promise<T | undefined>): Promise<T> {
  let got: T | undefined;
  await eventually(async () => (got = await get()) !== undefined);
  return got as T;
}
/** The subscription the customer's list holds under `prefix`, once there is one. */
const theOne = (custkey: string, prefix: string) => until(async () => {
  const l = await listed(custkey, prefix);
  return l.length === 1 ? l[0] : undefined;
});
/** The first charge's write, as the reconciler sees it (the checkout's key derived from the create's). */
const firstCharge = (idem: string) => svc.idempotency.inspect(`first-unknown-${run}`, `subscription\u0000${idem}`);

/** A create whose first charge the gateway processes and whose answer is then lost: an unknown outcome. */
async function lostFirstCharge(number: string, fault: 'hang' | 'reset' | '5xx', when: 'after' | 'before' = 'after'): Promise<{ custkey: string; prefix: string; idem: string; body: Record<string, unknown> }> {
  const { custkey, pmkey } = card(number);
  const prefix = `fu${run}${++n}`;
  const idem = id('create');
  const body = { payment_method: pmkey, invoice_prefix: prefix };
  bff.sandbox.faults.next({ kind: fault, match: 'sale', when });
  const res = await create(bff.url, custkey, body, idem);
  expect(res.status).toBeGreaterThanOrEqual(500);
  expect((await firstCharge(idem)).state).toBe('unknown');
  return { custkey, prefix, idem, body };
}

/** The reconciler, run by hand until the first charge's write is settled (found, or proven absent and released). */
async function reconciled(idem: string, state: 'completed' | 'absent'): Promise<void> {
  await eventually(async () => {
    await svc.reconciler.runOnce();
    return (await firstCharge(idem)).state === state;
  });
}

test('when a first charge\'s answer is lost and the client never asks again, then once the reconciler finds the charge the subscription exists (listed, first period paid, renewed on schedule), told once', async () => {
  const { custkey, prefix, idem } = await lostFirstCharge('4000100011112224', 'hang');
  expect(charged(prefix, 1)).toHaveLength(1);
  // The shopper was charged; until the reconciler finds it, nothing says what for.
  expect(await listed(custkey, prefix)).toEqual([]);

  await reconciled(idem, 'completed');
  const sale = charged(prefix, 1)[0]?.key;
  const sub = await theOne(custkey, prefix);
  expect(sub).toMatchObject({ status: 'active', periods_charged: 1 });
  expect(sub.history).toEqual([expect.objectContaining({ period: 0, sale, result: 'approved' })]);
  const anchor = Date.parse(sub.anchor);
  const month = new Date(anchor);
  month.setUTCMonth(month.getUTCMonth() + 1);
  // Anchored on the 29th to the 31st, a month on is the next month's last day when it is shorter (contract).
  if (month.getUTCDate() !== new Date(anchor).getUTCDate()) month.setUTCDate(0);
  expect(sub.next_charge_at).toBe(month.toISOString());
  expect(await eventsOf(sub.key)).toEqual(['subscription.created']);

  // The renewal schedule holds: a month on, period 1 is charged once, as for any subscription.
  await advance(month.getTime() - anchor + 60_000);
  await eventually(async () => (await listed(custkey, prefix))[0]?.periods_charged === 2);
  expect(charged(prefix, 1)).toHaveLength(1);
  expect(charged(prefix, 2)).toHaveLength(1);
  expect(await eventsOf(sub.key)).toEqual(['subscription.created', 'subscription.renewed']);
});

test('when the client asks again after the reconciler created the subscription, then it answers the same subscription as a replay: no second charge, no second event', async () => {
  const { custkey, prefix, idem, body } = await lostFirstCharge('4000100011112224', 'reset');
  await reconciled(idem, 'completed');
  const sub = await theOne(custkey, prefix);

  const again = await create(bff.url, custkey, body, idem);
  expect(again.status).toBe(201);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.body).toMatchObject({ key: sub.key, anchor: sub.anchor, created: sub.created, periods_charged: 1, history: sub.history });
  expect(charged(prefix, 1)).toHaveLength(1);
  expect(await listed(custkey, prefix)).toHaveLength(1);
  expect(await eventsOf(sub.key)).toEqual(['subscription.created']);
});

test('when the client asks again on another replica while the reconciler resolves the first charge, then both end with one subscription, one event, the same object', async () => {
  // A 5xx after the gateway processed it: the answer says nothing of the charge.
  const { custkey, prefix, idem, body } = await lostFirstCharge('4000100011112224', '5xx');
  const other = await bff.replica();
  try {
    // The reconciler's pass and the client's retries on the other replica, at once: each retry answers 409 until
    // the write is resolved, then the replay.
    const retried = until(async () => {
      const res = await create(other.url, custkey, body, idem);
      return res.status === 201 ? res : undefined;
    });
    await reconciled(idem, 'completed');
    const again = await retried;
    const subs = await listed(custkey, prefix);
    expect(subs).toHaveLength(1);
    expect(again.body).toMatchObject({ key: subs[0]?.key, anchor: subs[0]?.anchor, created: subs[0]?.created, history: subs[0]?.history });
    expect(charged(prefix, 1)).toHaveLength(1);
    await eventually(async () => (await eventsOf(subs[0]?.key ?? '')).length > 0);
    expect(await eventsOf(subs[0]?.key ?? '')).toEqual(['subscription.created']);
  } finally {
    await other.stop();
  }
});

test('when a lost first charge was declined, then the reconciler\'s resolution creates nothing and the client\'s retry answers the decline', async () => {
  const { custkey, prefix, idem, body } = await lostFirstCharge('4000300011112220', 'hang');
  expect(charged(prefix, 1, 'D')).toHaveLength(1);
  await reconciled(idem, 'completed');
  const again = await create(bff.url, custkey, body, idem);
  expect(again.status).toBe(402);
  expect(await listed(custkey, prefix)).toEqual([]);
  expect(charged(prefix, 1, 'D')).toHaveLength(1);
});

test('when a lost first charge never reached the gateway, then the reconciler releases it, nothing is created, and the client\'s retry charges and creates it once', async () => {
  const { custkey, prefix, idem, body } = await lostFirstCharge('4000100011112224', 'reset', 'before');
  expect(charged(prefix, 1)).toHaveLength(0);
  await reconciled(idem, 'absent');
  expect(await listed(custkey, prefix)).toEqual([]);

  const again = await create(bff.url, custkey, body, idem);
  expect(again.status).toBe(201);
  expect(charged(prefix, 1)).toHaveLength(1);
  expect(await listed(custkey, prefix)).toHaveLength(1);
  expect(await eventsOf(again.body.key as string)).toEqual(['subscription.created']);
});

test('when the customer is deleted while its first charge\'s outcome is unknown, then the reconciler\'s resolution creates the subscription as the deletion left the others: canceled, period 0 paid, nothing due, never charged again', async () => {
  // A customer of its own (the deletion is for good): none of the cards the tests above charge.
  const taken = ['4000100011112224', '4000300011112220'].map((number) => card(number).custkey);
  const number = ['4000100111112223', '4000100211112222', '4000200111112221', '5555444433332226']
    .find((candidate) => bff.sandbox.fixtures.findByNumber(candidate) && !taken.includes(card(candidate).custkey));
  if (!number) throw new Error('no fixture card of a customer of its own');
  const { custkey, prefix, idem } = await lostFirstCharge(number, 'hang');
  expect(charged(prefix, 1)).toHaveLength(1);

  const admin = token({ sub: `first-unknown-${run}`, scope: 'customers:any customers:write' }, { expiresIn: 900 });
  expect((await call(bff.url, 'DELETE', `/v1/customers/${custkey}`, admin, undefined, { 'Idempotency-Key': id('delete') })).status).toBe(204);

  await reconciled(idem, 'completed');
  const sub = await theOne(custkey, prefix);
  expect(sub).toMatchObject({ status: 'canceled', periods_charged: 1, next_charge_at: null });
  expect(sub.history).toEqual([expect.objectContaining({ period: 0, sale: charged(prefix, 1)[0]?.key, result: 'approved' })]);
  await eventually(async () => (await eventsOf(sub.key)).length === 2);
  expect(await eventsOf(sub.key)).toEqual(['subscription.created', 'subscription.canceled']);

  // A witness on another customer, due a month on as well, after it: once it renewed, the renewal passes that would
  // have charged period 1 have run.
  const other = card('4000100011112224');
  const wprefix = `fw${run}${++n}`;
  const witness = await create(bff.url, other.custkey, { payment_method: other.pmkey, invoice_prefix: wprefix }, id('witness'));
  expect(witness.status).toBe(201);
  const anchor = Date.parse(witness.body.anchor as string);
  const month = new Date(anchor);
  month.setUTCMonth(month.getUTCMonth() + 1);
  if (month.getUTCDate() !== new Date(anchor).getUTCDate()) month.setUTCDate(0);
  await advance(month.getTime() - anchor + 60_000);
  await eventually(async () => (await listed(other.custkey, wprefix))[0]?.periods_charged === 2, 20_000);
  expect(bff.sandbox.transactions().filter((t) => t.invoice.startsWith(`${prefix}-`))).toHaveLength(1);
  expect((await listed(custkey, prefix))[0]).toMatchObject({ status: 'canceled', periods_charged: 1, next_charge_at: null });
  expect(await eventsOf(sub.key)).toEqual(['subscription.created', 'subscription.canceled']);
});
