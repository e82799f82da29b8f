import { createHmac, randomBytes } from 'node:crypto';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * A bank payment's `ach.*` events applied at once (issue 38, caveat 1; guarantee 14): a clock jump makes the
 * gateway send ach.submitted, ach.settled and ach.returned together, and the intake serves them concurrently.
 * Posted at once in each of the six orders, each sale ends `returned` (returned wins over settled whatever the
 * arrival order) with exactly one sale.submitted, sale.settled and sale.returned.
 */
jest.setTimeout(120_000);
const SECRET = 'gateway-webhook-signature-key-for-ach-races';
const DAY = 86_400_000;
const run = randomBytes(3).toString('hex');
let n = 0;
const service = () => token({ sub: `ach-races-${run}`, scope: 'customers:any sales:create sales:read events:read' }, { expiresIn: 600 });
const sign = (raw: string) => createHmac('sha256', SECRET).update(raw).digest('hex');
const STEPS = ['ach.submitted', 'ach.settled', 'ach.returned'] as const;
const ORDERS = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] as const;

let bff: Bff;
beforeAll(async () => {
  bff = await startBff({ env: { GATEWAY_WEBHOOK_SECRET: SECRET } });
  // Held: the test posts the sandbox's signed bodies itself, at once, in the order it chooses.
  bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
  bff.sandbox.webhooks.hold();
});
afterAll(() => bff?.stop());

const customer = (i: number) => (bff.sandbox.fixtures.customers[i] as { key: string }).key;
const post = (raw: string) =>
  fetch(`${bff.url}/v1/webhooks/gateway`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': sign(raw) }, body: raw });
const eventsOf = async (key: string) => {
  const res = await call(bff.url, 'GET', '/v1/events?limit=1000', service());
  return (res.body.data as { type: string; data: { key: string } }[]).filter((e) => e.data.key === key).map((e) => e.type);
};

test('when ach.submitted, ach.settled and ach.returned arrive at once in any order, then the sale ends returned with one event per step', async () => {
  const keys: string[] = [];
  for (let i = 0; i < ORDERS.length; i++) {
    const payment_key = bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account: `101781${String(1 + i).padStart(2, '0')}` });
    const res = await call(bff.url, 'POST', '/v1/sales', service(), { customer: customer(10 + i), amount: '30.00', payment_key, authorization: { text: 'I agree' } }, { 'idempotency-key': `race-${run}-${++n}` });
    expect(res.status).toBe(201);
    keys.push(res.body.key as string);
  }
  bff.sandbox.clock.advance(5 * DAY);
  const rawOf = (key: string, type: string) => bff.sandbox.webhooks.events().find((e) => e.event_type === type && (e.payload.event_body as { object: { key: string } }).object.key === key)?.raw;
  await eventually(() => keys.every((k) => STEPS.every((t) => rawOf(k, t) !== undefined)));
  await Promise.all(
    keys.map(async (key, i) => {
      const answers = await Promise.all((ORDERS[i] as readonly number[]).map((s) => post(rawOf(key, STEPS[s] as string) as string)));
      expect(answers.map((a) => a.status)).toEqual([204, 204, 204]);
    }),
  );
  for (const [i, key] of keys.entries()) {
    const sale = (await call(bff.url, 'GET', `/v1/sales/${key}`, service())).body as Record<string, unknown>;
    expect([ORDERS[i], sale.status, sale.return_code]).toEqual([ORDERS[i], 'returned', expect.stringMatching(/^R\d{2}$/)]);
    const types = (await eventsOf(key)).filter((t) => ['sale.submitted', 'sale.settled', 'sale.returned'].includes(t));
    expect([ORDERS[i], types.sort()]).toEqual([ORDERS[i], ['sale.returned', 'sale.settled', 'sale.submitted']]);
  }
  // Issue 38, caveat 4: the ach.* events are labelled by their type in the webhook metric, not `other`.
  const metrics = await (await fetch(`${bff.adminUrl}/metrics`)).text();
  for (const type of STEPS) expect(metrics).toMatch(new RegExp(`^tokengate_gateway_webhooks_total\\{[^}]*event_type="${type.replace('.', '\\.')}"[^}]*result="applied"[^}]*\\} 6$`, 'm'));
});
