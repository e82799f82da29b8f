import { createRedisWalletStore } from '../../src/wallet/redis-wallet-store';
import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * A renewal's wallet read travels in the renewal class (docs/subscriptions.md, "The budget"). In the
 * 10,000-subscription run every refusal on the 1st was the renewal's read of the customer's view, refused in the
 * paced read class while the renewal itself had a slot. Here the reads' day share is spent by shoppers' reads
 * (each further read answers 429), the customer's view is distrusted (as a card update or an uncertain write
 * leaves it), so the renewal must read the gateway for its method: it still renews. The sandbox's ledger judges.
 */
const DAY = 86_400_000;
const { prefix, redis } = suiteRedis('subs-read-class');
let bff: Bff;

beforeAll(async () => {
  // 40 calls a day, reads at most 1/20 of it: two reads, then the read class is refused for the day.
  bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, SUBSCRIPTION_POLL_MS: '25', GATEWAY_RATE_PER_DAY: '40', LIMITER_READ_DAY_SHARE: '0.05' } });
});
afterAll(() => bff.stop());

const service = () => token({ sub: 'billing', scope: 'customers:any sales:create subscriptions:read subscriptions:write' }, { expiresIn: 600 });
const clock = async (advance?: number) => {
  const res = await fetch(`${bff.adminUrl}/test/clock`, advance === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: advance }) });
  return Date.parse(((await res.json()) as { now: string }).now);
};

test('when the reads\' day share is spent and the customer\'s view must be read again, then a due renewal still reads it and renews', async () => {
  const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
  if (!found) throw new Error('fixture card missing');
  const { key: custkey } = found.customer;
  const start = new Date((await clock()) + DAY).toISOString().slice(0, 10);
  const invoice = `rc${Date.now().toString(36)}`;
  const made = await call(bff.url, 'POST', `/v1/customers/${custkey}/subscriptions`, service(),
    { amount: '3.00', interval: 'month', start, payment_method: found.method.key, invoice_prefix: invoice, consent: { text: 'v1' } }, { 'Idempotency-Key': invoice });
  expect(made.status).toBe(201);

  // Other shoppers read their cards until the read class is refused for the day (each a customer the view lacks).
  const others = bff.sandbox.fixtures.customers.map((c) => (c as { key: string }).key).filter((k) => k !== custkey);
  let refused = false;
  for (let i = 0; i < 10 && !refused; i++) {
    const c = others[i] as string;
    const read = await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, token({ sub: `rc-shopper-${i}`, custkey: c, scope: 'payment_methods:read' }));
    refused = read.status === 429;
  }
  expect(refused).toBe(true);

  // The view no longer vouches for the customer: the renewal's method must come from the gateway's word.
  await createRedisWalletStore({ redis, keyPrefix: prefix }).forget(custkey);
  const renewals = () => bff.sandbox.transactions().filter((t) => t.invoice.startsWith(invoice));
  expect(renewals()).toEqual([]);

  await clock(DAY + 1000);
  await eventually(() => renewals().length === 1);
  expect(renewals()[0]).toMatchObject({ result_code: 'A' });
  // The subscription moved on to its next period (not left due for another pass).
  await eventually(async () => {
    const sub = await call(bff.url, 'GET', `/v1/subscriptions/${made.body.key as string}`, service());
    return sub.status === 200 && sub.body.status === 'active' && sub.body.periods_charged === 1;
  });
});
