import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * A deleted customer's subscriptions (issue 37, decision): canceled when the deletion answers, each with
 * `subscription.canceled`; nothing is charged afterwards, whatever the clock does (the sandbox's ledger judges).
 */
const DAY = 86_400_000;
const { prefix } = suiteRedis('subs-del');
let bff: Bff;

beforeAll(async () => {
  bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, SUBSCRIPTION_POLL_MS: '25' } });
});
afterAll(() => bff.stop());

const service = () => token({ sub: 'billing', scope: 'customers:any customers:write subscriptions:read subscriptions:write events:read' }, { expiresIn: 600 });

test('when a customer is deleted, then its subscriptions are canceled at once, told once each, and never charged again', async () => {
  const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
  if (!found) throw new Error('fixture card missing');
  const custkey = found.customer.key;
  const clock = async (advance?: number) => {
    const res = await fetch(`${bff.adminUrl}/test/clock`, advance === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: advance }) });
    return Date.parse(((await res.json()) as { now: string }).now);
  };
  const start = new Date((await clock()) + DAY).toISOString().slice(0, 10);
  const invoices = `del${Date.now().toString(36)}`;
  const keys: string[] = [];
  for (const [i, interval] of (['month', 'week'] as const).entries()) {
    const made = await call(bff.url, 'POST', `/v1/customers/${custkey}/subscriptions`, service(),
      { amount: '3.00', interval, start, payment_method: found.method.key, invoice_prefix: `${invoices}${i}`, consent: { text: 'v1' } }, { 'Idempotency-Key': `${invoices}-${i}` });
    expect(made.status).toBe(201);
    keys.push(made.body.key as string);
  }
  // A witness on another customer, due at the same time: once it renewed, the renewals' passes have run.
  const other = ['4000100111112223', '4000100211112222', '4000200111112221', '5555444433332226'].map((n) => bff.sandbox.fixtures.findByNumber(n)).find((f) => f && f.customer.key !== custkey);
  if (!other) throw new Error('no fixture card of another customer');
  const witness = await call(bff.url, 'POST', `/v1/customers/${other.customer.key}/subscriptions`, service(),
    { amount: '1.00', interval: 'month', start, payment_method: other.method.key, consent: { text: 'v1' } }, { 'Idempotency-Key': `${invoices}-witness` });
  expect(witness.status).toBe(201);
  const deleted = await call(bff.url, 'DELETE', `/v1/customers/${custkey}`, service(), undefined, { 'Idempotency-Key': `${invoices}-delete` });
  expect(deleted.status).toBe(204);
  for (const k of keys) expect((await call(bff.url, 'GET', `/v1/subscriptions/${k}`, service())).body).toMatchObject({ status: 'canceled', next_charge_at: null });
  const events = async () => ((await call(bff.url, 'GET', '/v1/events?limit=1000', service())).body.data as { type: string; data: { key: string } }[])
    .filter((e) => e.type === 'subscription.canceled' && keys.includes(e.data.key));
  await eventually(async () => (await events()).length === 2);
  // A month of renewal passes later: nothing under either subscription's invoices.
  await clock(35 * DAY);
  await eventually(async () => (await call(bff.url, 'GET', `/v1/subscriptions/${witness.body.key as string}`, service())).body.periods_charged === 1, 20_000);
  expect(bff.sandbox.transactions().filter((t) => t.invoice.startsWith(invoices))).toEqual([]);
  expect((await events()).length).toBe(2);
});
