import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call, type Answer } from '../support/wallet';

/**
 * Subscriptions (issue 37) against real Redis and the sandbox, whose ledger judges what was charged. Time moves
 * with the admin port's test clock; renewals are waited for (eventually), never raced.
 */
const DAY = 86_400_000;
let bff: Bff;
let seq = 0;

beforeAll(async () => {
  bff = await startBff({ env: { SUBSCRIPTION_POLL_MS: '25' } });
});
afterAll(async () => {
  await bff.stop();
});

const key = (name: string) => `${name}-${Date.now()}-${(seq += 1)}`;
const shopper = (custkey: string) => token({ sub: `shopper-${custkey}`, custkey, scope: 'subscriptions:read subscriptions:write' }, { expiresIn: 600 });
const backOffice = () => token({ sub: 'billing-service', scope: 'customers:any subscriptions:read subscriptions:write' }, { expiresIn: 600 });

async function clockNow(): Promise<number> {
  const res = await fetch(`${bff.adminUrl}/test/clock`);
  return Date.parse(((await res.json()) as { now: string }).now);
}
async function advance(ms: number): Promise<number> {
  const res = await fetch(`${bff.adminUrl}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: ms }) });
  expect(res.status).toBe(200);
  return Date.parse(((await res.json()) as { now: string }).now);
}

function card(number: string): { custkey: string; pmkey: string } {
  const found = bff.sandbox.fixtures.findByNumber(number);
  if (!found) throw new Error(`fixture card ${number} is missing`);
  return { custkey: found.customer.key, pmkey: found.method.key };
}

/** Charges the sandbox processed on this card (its ledger is the judge). */
const charges = (pmkey: string, result: 'A' | 'D' = 'A') => bff.sandbox.transactions().filter((t) => t.pmkey === pmkey && t.result_code === result);
/** Charges the sandbox processed under one subscription's invoices (`<invoice_prefix>-<period>`). */
const chargesOf = (prefix: string, result: 'A' | 'D' = 'A') => bff.sandbox.transactions().filter((t) => t.invoice.startsWith(`${prefix}-`) && t.result_code === result);
const prefix = () => `p${Date.now().toString(36)}${(seq += 1)}`;

function create(custkey: string, body: Record<string, unknown>, idem = key('create'), bearer = shopper(custkey)): Promise<Answer> {
  return call(bff.url, 'POST', `/v1/customers/${custkey}/subscriptions`, bearer, { interval: 'month', consent: { text: 'monthly plan v3' }, ...body }, { 'Idempotency-Key': idem });
}
const read = (k: string, bearer = backOffice()) => call(bff.url, 'GET', `/v1/subscriptions/${k}`, bearer);
const tomorrow = async () => new Date((await clockNow()) + DAY).toISOString().slice(0, 10);

describe('creating a subscription', () => {
  test('when a bound shopper creates one, then the first period is charged now and the consent is recorded', async () => {
    const { custkey, pmkey } = card('4000100011112224');
    const invoices = prefix();
    const res = await create(custkey, { amount: '9.99', payment_method: pmkey, invoice_prefix: invoices });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'subscription', customer: custkey, payment_method: pmkey, amount: '9.99', status: 'active', periods_charged: 1 });
    expect(res.body.consent).toMatchObject({ text: 'monthly plan v3', by: `shopper-${custkey}` });
    expect((res.body.latest_sale as { status: string }).status).toBe('pending_settlement');
    expect(chargesOf(invoices).map((t) => t.invoice)).toEqual([`${invoices}-1`]);
    const anchor = Date.parse(res.body.anchor as string);
    const next = new Date(anchor);
    next.setUTCMonth(next.getUTCMonth() + 1);
    if (next.getUTCDate() !== new Date(anchor).getUTCDate()) next.setUTCDate(0); // clamped to the month's end
    expect(Date.parse(res.body.next_charge_at as string)).toBe(next.getTime());
  });

  test('when the same Idempotency-Key comes again, then the same subscription answers and nothing more is charged', async () => {
    const { custkey, pmkey } = card('4000100011112224');
    const idem = key('again');
    const invoices = prefix();
    const first = await create(custkey, { amount: '4.00', payment_method: pmkey, invoice_prefix: invoices }, idem);
    const again = await create(custkey, { amount: '4.00', payment_method: pmkey, invoice_prefix: invoices }, idem);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.key).toBe(first.body.key);
    expect(chargesOf(invoices).length).toBe(1);
    const other = await create(custkey, { amount: '5.00', payment_method: pmkey, invoice_prefix: invoices }, idem);
    expect(other.status).toBe(422);
    expect(other.body.error?.code).toBe('idempotency_key_reused');
  });

  test('when the first charge is declined, then 402 carries the sale and no subscription exists', async () => {
    const { custkey, pmkey } = card('4000300011112220');
    const bearer = shopper(custkey);
    const listed = (await call(bff.url, 'GET', `/v1/customers/${custkey}/subscriptions`, bearer)).body.data as unknown[];
    const res = await create(custkey, { amount: '3.00', payment_method: pmkey });
    expect(res.status).toBe(402);
    expect(res.body.error?.code).toBe('card_declined');
    const after = (await call(bff.url, 'GET', `/v1/customers/${custkey}/subscriptions`, bearer)).body.data as unknown[];
    expect(after.length).toBe(listed.length);
  });

  test('when a token bound to another customer asks, then every route answers 404 with no hint', async () => {
    const { custkey, pmkey } = card('4000100011112224');
    const made = await create(custkey, { amount: '2.00', payment_method: pmkey });
    const stranger = token({ sub: 'stranger', custkey: 'someoneelse00001', scope: 'subscriptions:read subscriptions:write' });
    const k = made.body.key as string;
    expect((await read(k, stranger)).status).toBe(404);
    expect((await call(bff.url, 'PATCH', `/v1/subscriptions/${k}`, stranger, { description: 'x' })).status).toBe(404);
    expect((await call(bff.url, 'POST', `/v1/subscriptions/${k}/cancel`, stranger, {})).status).toBe(404);
    expect((await call(bff.url, 'GET', `/v1/customers/${custkey}/subscriptions`, stranger)).status).toBe(404);
    expect((await create(custkey, { amount: '2.00', payment_method: pmkey }, key('x'), stranger)).status).toBe(404);
    expect((await read('sub_doesnotexist00000')).status).toBe(404);
    const readOnly = token({ sub: 'ro', custkey, scope: 'subscriptions:read' });
    expect((await call(bff.url, 'POST', `/v1/subscriptions/${k}/cancel`, readOnly, {})).status).toBe(403);
  });
});

describe('renewals', () => {
  test('when a period falls due on tokengate\'s clock, then it is charged once, with the recurring indicator, even with two replicas', async () => {
    const { custkey, pmkey } = card('4000100011112224');
    const replica = await bff.replica();
    try {
      const invoices = prefix();
      const made = await create(custkey, { amount: '7.00', payment_method: pmkey, interval: 'day', invoice_prefix: invoices });
      const k = made.body.key as string;
      await advance(DAY + 1000);
      await eventually(async () => (await read(k)).body.periods_charged === 2, 10_000);
      // A further look by both replicas over the same due time charges nothing more.
      await advance(1000);
      await new Promise((r) => setTimeout(r, 300));
      const renewed = chargesOf(invoices).filter((t) => t.invoice === `${invoices}-2`);
      expect(renewed.length).toBe(1);
      expect(renewed[0]?.amount).toBe('7.00');
      // The renewal carries the gateway's recurring indicator; the first charge (the shopper present) does not.
      expect(renewed[0]?.recurring).toBe(true);
      expect(chargesOf(invoices).find((t) => t.invoice === `${invoices}-1`)?.recurring).toBeUndefined();
      // Counted by the replica that ran it (one of the two), for the operator (TokengateRenewalsLate's runbook).
      const metrics = await Promise.all([bff.adminUrl].map(async (u) => (await fetch(`${u}/metrics`)).text()));
      expect(metrics.join('\n')).toMatch(/tokengate_subscription_renewals_late \d+/);
      const sub = (await read(k)).body;
      expect(sub.status).toBe('active');
      expect((sub.history as Array<{ result: string }>).map((h) => h.result)).toEqual(['approved', 'approved']);
    } finally {
      await replica.stop();
    }
  });

  test('when a subscription is canceled, then nothing is charged after the cancel answered', async () => {
    const { custkey, pmkey } = card('4000100011112224');
    const invoices = prefix();
    const made = await create(custkey, { amount: '6.00', payment_method: pmkey, interval: 'day', invoice_prefix: invoices });
    const k = made.body.key as string;
    const canceled = await call(bff.url, 'POST', `/v1/subscriptions/${k}/cancel`, shopper(custkey));
    expect(canceled.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    expect(chargesOf(invoices).length).toBe(1);
    await advance(3 * DAY);
    await new Promise((r) => setTimeout(r, 300));
    expect(chargesOf(invoices).length).toBe(1);
    expect((await read(k)).body.periods_charged).toBe(1);
    const again = await call(bff.url, 'PATCH', `/v1/subscriptions/${k}`, shopper(custkey), { description: 'x' });
    expect(again.status).toBe(409);
    expect(again.body.error?.code).toBe('subscription_not_active');
  });

  test('when a soft decline comes, then the subscription is past due with a retry planned, and a new card retries at once', async () => {
    const declined = card('4000300011112220');
    const approved = card('4000100011112224');
    expect(declined.custkey).toBe(approved.custkey);
    const invoices = prefix();
    const made = await create(declined.custkey, { amount: '5.50', payment_method: declined.pmkey, start: await tomorrow(), interval: 'week', invoice_prefix: invoices });
    expect(made.status).toBe(201);
    expect(made.body.periods_charged).toBe(0);
    const k = made.body.key as string;
    await advance(DAY + 1000);
    await eventually(async () => (await read(k)).body.status === 'past_due', 10_000);
    const sub = (await read(k)).body;
    const attempt = (sub.history as Array<Record<string, unknown>>)[0];
    expect(attempt).toMatchObject({ period: 0, result: 'declined', decline_class: 'soft', decline_code: '10127' });
    expect(Date.parse(attempt?.next_retry_at as string) - Date.parse(sub.anchor as string)).toBe(DAY);
    expect(chargesOf(invoices).length).toBe(0);
    const patched = await call(bff.url, 'PATCH', `/v1/subscriptions/${k}`, backOffice(), { payment_method: approved.pmkey });
    expect(patched.status).toBe(200);
    await eventually(async () => (await read(k)).body.status === 'active', 10_000);
    expect(chargesOf(invoices).map((t) => t.pmkey)).toEqual([approved.pmkey]);
    expect((await read(k)).body.periods_charged).toBe(1);
  });

  test('when a hard decline comes, then that card is never charged again for the subscription', async () => {
    const hard = card('4000300811112222');
    const made = await create(hard.custkey, { amount: '8.00', payment_method: hard.pmkey, start: await tomorrow(), interval: 'day' }, key('hard'), backOffice());
    expect(made.status).toBe(201);
    const k = made.body.key as string;
    await advance(DAY + 1000);
    await eventually(async () => (await read(k)).body.status === 'past_due', 10_000);
    const sub = (await read(k)).body;
    expect((sub.history as Array<Record<string, unknown>>)[0]).toMatchObject({ decline_class: 'hard', decline_code: '10257', next_retry_at: null });
    expect(sub.next_charge_at).toBeNull();
    const declines = charges(hard.pmkey, 'D').length;
    await advance(30 * DAY);
    await new Promise((r) => setTimeout(r, 300));
    expect(charges(hard.pmkey, 'D').length).toBe(declines);
  });

  test('when the card is removed, then the renewal sends nothing and the subscription waits for a new card', async () => {
    const { custkey, pmkey } = card('4000100011112224');
    const made = await create(custkey, { amount: '1.25', payment_method: pmkey, start: await tomorrow(), interval: 'day' }, key('rm'), backOffice());
    const k = made.body.key as string;
    const wallet = token({ sub: 'wallet-admin', custkey, scope: 'payment_methods:write payment_methods:read' });
    // Another card of the customer, added and then removed, is what the subscription charges.
    const extra = bff.sandbox.fixtures.paymentMethods(custkey).find((m) => m.key !== pmkey);
    expect(extra).toBeDefined();
    const onExtra = await call(bff.url, 'PATCH', `/v1/subscriptions/${k}`, backOffice(), { payment_method: extra?.key });
    expect(onExtra.status).toBe(200);
    const removed = await call(bff.url, 'DELETE', `/v1/customers/${custkey}/payment_methods/${extra?.key}`, wallet);
    expect(removed.status).toBe(204);
    const before = bff.sandbox.transactions().filter((t) => t.pmkey === extra?.key).length;
    await advance(DAY + 1000);
    await eventually(async () => (await read(k)).body.status === 'past_due', 10_000);
    expect((await read(k)).body.history).toEqual([expect.objectContaining({ result: 'not_sent', decline_class: 'hard', decline_code: 'removed' })]);
    expect(bff.sandbox.transactions().filter((t) => t.pmkey === extra?.key).length).toBe(before);
  });
});

describe('pause, resume, the period\'s end, the count', () => {
  const approved = () => card('4000100211112222');

  test('when paused, then nothing is charged; when resumed, then the next period ahead of the clock is charged, not those missed', async () => {
    const { custkey, pmkey } = approved();
    const invoices = prefix();
    const made = await create(custkey, { amount: '2.00', payment_method: pmkey, interval: 'day', invoice_prefix: invoices }, key('pause'), backOffice());
    const k = made.body.key as string;
    expect((await call(bff.url, 'PATCH', `/v1/subscriptions/${k}`, backOffice(), { status: 'paused' })).body).toMatchObject({ status: 'paused', next_charge_at: null });
    await advance(3 * DAY + 1000);
    await new Promise((r) => setTimeout(r, 300));
    expect(chargesOf(invoices).length).toBe(1);
    const resumed = await call(bff.url, 'PATCH', `/v1/subscriptions/${k}`, backOffice(), { status: 'active' });
    expect(resumed.body.status).toBe('active');
    expect(Date.parse(resumed.body.next_charge_at as string)).toBe(Date.parse(made.body.anchor as string) + 4 * DAY);
    await advance(DAY);
    await eventually(async () => (await read(k)).body.periods_charged === 2, 10_000);
    expect(chargesOf(invoices).map((t) => t.invoice)).toEqual([`${invoices}-1`, `${invoices}-5`]);
  });

  test('when canceled at the period\'s end, then the next due date cancels it without a charge', async () => {
    const { custkey, pmkey } = approved();
    const invoices = prefix();
    const made = await create(custkey, { amount: '2.00', payment_method: pmkey, interval: 'day', invoice_prefix: invoices }, key('end'), backOffice());
    const k = made.body.key as string;
    const answer = await call(bff.url, 'POST', `/v1/subscriptions/${k}/cancel`, backOffice(), { at_period_end: true });
    expect(answer.body).toMatchObject({ status: 'active', cancel_at_period_end: true });
    await advance(DAY + 1000);
    await eventually(async () => (await read(k)).body.status === 'canceled', 10_000);
    expect(chargesOf(invoices).length).toBe(1);
  });

  test('when the count is reached, then the subscription is completed and charges no more', async () => {
    const { custkey, pmkey } = approved();
    const invoices = prefix();
    const made = await create(custkey, { amount: '2.00', payment_method: pmkey, interval: 'day', count: 2, invoice_prefix: invoices }, key('count'), backOffice());
    const k = made.body.key as string;
    await advance(DAY + 1000);
    await eventually(async () => (await read(k)).body.status === 'completed', 10_000);
    await advance(2 * DAY);
    await new Promise((r) => setTimeout(r, 300));
    expect(chargesOf(invoices).length).toBe(2);
    expect((await read(k)).body).toMatchObject({ periods_charged: 2, next_charge_at: null });
  });
});

describe('dunning', () => {
  test('when a card declines softly twice and then approves, then the period is retried on the schedule and paid once', async () => {
    const { custkey, pmkey } = card('5555444433332226');
    const invoices = prefix();
    const made = await create(custkey, { amount: '12.00', payment_method: pmkey, start: await tomorrow(), interval: 'month', invoice_prefix: invoices }, key('dun'), backOffice());
    const k = made.body.key as string;
    bff.sandbox.declineNext(pmkey, 2, '10251');
    const history = async () => (await read(k)).body.history as Array<Record<string, unknown>>;
    await advance(DAY + 1000); // the due date: declined, retry planned 1 day after it
    await eventually(async () => (await history()).length === 1, 10_000);
    expect((await read(k)).body.status).toBe('past_due');
    await advance(DAY); // the first retry (1 day after the due date): declined again, the next 3 days after it
    await eventually(async () => (await history()).length === 2, 10_000);
    expect(chargesOf(invoices, 'A').length).toBe(0);
    await advance(2 * DAY); // the second retry: approved
    await eventually(async () => (await read(k)).body.status === 'active', 10_000);
    const attempts = await history();
    expect(attempts.map((a) => [a.period, a.result, a.decline_class])).toEqual([[0, 'declined', 'soft'], [0, 'declined', 'soft'], [0, 'approved', null]]);
    expect(Date.parse(attempts[1]?.next_retry_at as string) - Date.parse((await read(k)).body.anchor as string)).toBe(3 * DAY);
    expect(chargesOf(invoices, 'A').length).toBe(1);
    expect(chargesOf(invoices, 'D').length).toBe(2);
    expect((await read(k)).body.periods_charged).toBe(1);
  });
});

describe('the test clock', () => {
  test('when advanced, then every replica reads the same time', async () => {
    const replica = await bff.replica();
    try {
      const now = await advance(60_000);
      const res = await fetch(`${bff.adminUrl}/test/clock`);
      // The advance (60 s) seen, not the wall clock: within half of it, room for a busy box (issue 41: 5 s).
      expect(Math.abs(Date.parse(((await res.json()) as { now: string }).now) - now)).toBeLessThan(30_000);
    } finally {
      await replica.stop();
    }
  });
});

describe('a cancel during a renewal', () => {
  test('when a renewal is on its way to the gateway, then the cancel answers after it, so no charge follows the answer', async () => {
    // The slow test card answers after a delay (slowCardScale): the renewal is sent and not yet answered.
    const slow = card('4000000011112226');
    const invoices = prefix();
    const made = await create(slow.custkey, { amount: '2.50', payment_method: slow.pmkey, interval: 'day', invoice_prefix: invoices }, key('slow'), backOffice());
    expect(made.status).toBe(201);
    const k = made.body.key as string;
    bff.sandbox.update({ slowCardScale: 0.2 }); // 1 s, within GATEWAY_TIMEOUT_MS
    try {
      await advance(DAY + 1000);
      await eventually(() => chargesOf(invoices).length === 2, 10_000); // received by the gateway, answer pending
      const canceled = await call(bff.url, 'POST', `/v1/subscriptions/${k}/cancel`, backOffice());
      const answeredAt = bff.sandbox.clock.now(); // the clock the sandbox stamps a transaction's time with
      expect(canceled.status).toBe(200);
      // The renewal's answer was in the subscription before the cancel's.
      expect(canceled.body).toMatchObject({ status: 'canceled', periods_charged: 2 });
      expect(chargesOf(invoices).every((t) => t.time <= answeredAt)).toBe(true);
    } finally {
      bff.sandbox.update({ slowCardScale: 0.05 });
    }
  });
});

describe('"recurring": true on POST /v1/sales', () => {
  test('when an internal service sends it, then the sale carries the recurring indicator; a shopper\'s token gets 403 and nothing is sent', async () => {
    const { custkey, pmkey } = card('4000100011112224');
    const invoice = `rec-${prefix()}`;
    const body = { customer: custkey, payment_method: pmkey, amount: '3.33', invoice, recurring: true };
    const service = token({ sub: 'billing-engine', scope: 'customers:any sales:create' });
    const ok = await call(bff.url, 'POST', '/v1/sales', service, body, { 'Idempotency-Key': key('rec') });
    expect(ok.status).toBe(201);
    expect(bff.sandbox.transactions().filter((t) => t.invoice === invoice).map((t) => t.recurring)).toEqual([true]);
    const shopperToken = token({ sub: 'shopper-rec', custkey, scope: 'sales:create' });
    const refused = await call(bff.url, 'POST', '/v1/sales', shopperToken, { ...body, invoice: `${invoice}-x` }, { 'Idempotency-Key': key('rec') });
    expect(refused.status).toBe(403);
    expect(bff.sandbox.transactions().filter((t) => t.invoice === `${invoice}-x`)).toEqual([]);
  });
});

describe('the renewals\' own caller', () => {
  test('when a token claims a sub with a control character (as the renewals\' own does), then it is refused', async () => {
    const { custkey } = card('4000100011112224');
    const forged = token({ sub: 'tokengate\u0000renewals', scope: 'customers:any sales:create subscriptions:read' });
    expect((await call(bff.url, 'GET', `/v1/customers/${custkey}/subscriptions`, forged)).status).toBe(401);
  });
});
