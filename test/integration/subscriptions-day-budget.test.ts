import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * The day's budget (issue 37, item 2): a day whose renewals are more than its budget less its checkouts can hold.
 * The gateway key allows 16 calls a day; twelve renewals fall due at once. Those the day holds are charged; the
 * rest stay due, are counted as that day's spill when the next day begins (once), and a checkout still gets its
 * call when the renewals have taken all they may (sales before renewals at the day's end). The sandbox's ledger
 * judges what was charged.
 */
const DAY = 86_400_000;
const SUBS = 12;
const { prefix } = suiteRedis('subs-day');
let bff: Bff;

beforeAll(async () => {
  bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, SUBSCRIPTION_POLL_MS: '25', GATEWAY_RATE_PER_DAY: '16', LIMITER_SALE_RESERVED_SLOTS: '3' } });
});
afterAll(() => bff.stop());

const service = () => token({ sub: 'billing', scope: 'customers:any sales:create subscriptions:read subscriptions:write' }, { expiresIn: 600 });
const clock = async (advance?: number) => {
  const res = await fetch(`${bff.adminUrl}/test/clock`, advance === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: advance }) });
  return Date.parse(((await res.json()) as { now: string }).now);
};
const metric = async (name: string) => {
  const text = await (await fetch(`${bff.adminUrl}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
};
const deferred = async () => {
  const text = await (await fetch(`${bff.adminUrl}/metrics`)).text();
  return Number(/^tokengate_subscription_renewals_total\{result="deferred"\} (\d+)/m.exec(text)?.[1] ?? 0);
};

test('when a day\'s renewals exceed its budget, then the rest move to the next day, are counted once as that day\'s spill, and a checkout still gets its call', async () => {
  const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
  if (!found) throw new Error('fixture card missing');
  const { key: custkey } = found.customer;
  const start = new Date((await clock()) + DAY).toISOString().slice(0, 10);
  const invoices = `day${Date.now().toString(36)}`;
  for (let i = 0; i < SUBS; i++) {
    const made = await call(bff.url, 'POST', `/v1/customers/${custkey}/subscriptions`, service(),
      { amount: '2.00', interval: 'month', start, payment_method: found.method.key, invoice_prefix: `${invoices}x${i}`, consent: { text: 'v1' } }, { 'Idempotency-Key': `${invoices}-${i}` });
    expect(made.status).toBe(201);
  }
  const renewals = () => bff.sandbox.transactions().filter((t) => t.invoice.startsWith(invoices));
  expect(renewals()).toEqual([]);

  await clock(DAY + 1000);
  // The renewals take what the day allows; the others are refused by the budget (not sent) and stay due.
  await eventually(async () => (await deferred()) >= SUBS, 20_000);
  const charged = renewals().length;
  expect(charged).toBeGreaterThan(0);
  expect(charged).toBeLessThan(SUBS);
  expect(renewals().every((t) => t.result_code === 'A')).toBe(true);

  // The day's last calls: a checkout gets one the renewals could not take.
  const sale = await call(bff.url, 'POST', '/v1/sales', service(), { customer: custkey, payment_method: found.method.key, amount: '1.00' }, { 'Idempotency-Key': `${invoices}-checkout` });
  expect(sale.status).toBe(201);

  expect(await metric('tokengate_subscription_renewals_spilled_total')).toBe(0);
  await clock(DAY);
  await eventually(async () => (await metric('tokengate_subscription_renewals_spilled_total')) === SUBS - charged, 20_000);
  // Judged once: more passes of the same day add nothing, and nothing more was charged (the day window is spent).
  const passes = await deferred();
  await eventually(async () => (await deferred()) > passes + SUBS);
  expect(await metric('tokengate_subscription_renewals_spilled_total')).toBe(SUBS - charged);
  expect(renewals().length).toBe(charged);
});
