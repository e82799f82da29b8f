import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * Guarantee 13 under an unknown outcome: the gateway charged a renewal and its answer never came. The period stays
 * due, its key answers 409 until the reconciler has found the charge in the gateway's records, and then the
 * subscription takes it as paid: one charge, never a second attempt (the sandbox's ledger is the judge).
 */
const DAY = 86_400_000;
let bff: Bff;

beforeAll(async () => {
  bff = await startBff({ env: { SUBSCRIPTION_POLL_MS: '25', GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '200' } });
});
afterAll(async () => {
  await bff?.stop();
});

test('when a renewal\'s answer is lost after the gateway charged it, then the reconciler settles it and the period is paid once', async () => {
  const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
  if (!found) throw new Error('fixture card missing');
  const custkey = found.customer.key;
  const service = token({ sub: 'billing', scope: 'customers:any subscriptions:read subscriptions:write' }, { expiresIn: 600 });
  const clock = async (advance?: number) => {
    const res = await fetch(`${bff.adminUrl}/test/clock`, advance === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: advance }) });
    return Date.parse(((await res.json()) as { now: string }).now);
  };
  const start = new Date((await clock()) + DAY).toISOString().slice(0, 10);
  const prefix = `lost${Date.now().toString(36)}`;
  const made = await call(bff.url, 'POST', `/v1/customers/${custkey}/subscriptions`, service,
    { amount: '4.20', interval: 'month', start, payment_method: found.method.key, invoice_prefix: prefix, consent: { text: 'v1' } }, { 'Idempotency-Key': `lost-${prefix}` });
  expect(made.status).toBe(201);
  const k = made.body.key as string;
  const charged = () => bff.sandbox.transactions().filter((t) => t.invoice === `${prefix}-1`);

  // The next sale is processed, then its answer hangs past GATEWAY_TIMEOUT_MS: an unknown outcome.
  bff.sandbox.faults.next({ kind: 'hang', match: 'sale' });
  await clock(DAY + 1000);
  await eventually(async () => (await call(bff.url, 'GET', `/v1/subscriptions/${k}`, service)).body.periods_charged === 1, 20_000);
  const sub = (await call(bff.url, 'GET', `/v1/subscriptions/${k}`, service)).body;
  expect(sub.status).toBe('active');
  expect(sub.history).toEqual([expect.objectContaining({ period: 0, result: 'approved' })]);
  expect(charged().length).toBe(1);
  expect(charged()[0]?.result_code).toBe('A');
  // Passes that met the unknown outcome were told 409 and sent nothing; later ones send nothing either.
  await new Promise((r) => setTimeout(r, 300));
  expect(charged().length).toBe(1);
  expect(bff.logs()).toContain('renewal not settled now');
});
