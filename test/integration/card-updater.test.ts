import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * The gateway's card updater (issue 37, item 1; gateway-facts.md, "The card updater"): the sandbox changes a
 * stored card and sends the gateway's `cardupdate.*` webhook, signed, to tokengate's intake. What the merchant
 * sees: the card's new expiry and last four from the view (no gateway read), its cached token gone, one
 * `payment_method.updated` event; a closed account is never charged by a renewal (the sandbox's ledger judges)
 * until a new card is put behind its method; an event may name the sale that charged the card instead of it.
 */
const SECRET = 'gateway-webhook-signature-key-for-card-updates';
const DAY = 86_400_000;
const { prefix, redis } = suiteRedis('card-upd');
let bff: Bff;
let seq = 0;

beforeAll(async () => {
  bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, GATEWAY_WEBHOOK_SECRET: SECRET, SUBSCRIPTION_POLL_MS: '25' } });
  bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
});
afterAll(() => bff.stop());

const service = () => token({ sub: 'card-updater-test', scope: 'customers:any payment_methods:read sales:create subscriptions:read subscriptions:write events:read' }, { expiresIn: 600 });
const idem = (name: string) => `${name}-${Date.now().toString(36)}-${(seq += 1)}`;
function card(number: string): { custkey: string; pmkey: string } {
  const found = bff.sandbox.fixtures.findByNumber(number);
  if (!found) throw new Error(`fixture card ${number} is missing`);
  return { custkey: found.customer.key, pmkey: found.method.key };
}
async function method(custkey: string, pmkey: string): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  const res = await call(bff.url, 'GET', `/v1/customers/${custkey}/payment_methods`, service());
  return { status: res.status, body: (res.body.data as Record<string, unknown>[] | undefined)?.find((m) => m.key === pmkey) };
}
const updatedEvents = async (pmkey: string) => {
  const res = await call(bff.url, 'GET', '/v1/events?limit=1000', service());
  return (res.body.data as { type: string; data: { key: string } }[]).filter((e) => e.type === 'payment_method.updated' && e.data.key === pmkey);
};
/** Gateway reads of payment methods and customers tokengate made (the view answers without one). */
const walletReads = () => Object.values(bff.sandbox.stats().endpoints).reduce((n, e) => n + (e.acceptedByKind.customers ?? 0), 0);
const tokenCached = (custkey: string, pmkey: string) => redis.exists(`{${prefix}:tok:${encodeURIComponent(`token:${custkey}:${pmkey}`)}}`);
/**
 * Deliveries of `cardupdate.*` events tokengate's intake answered 2xx. Only those: a sale's own webhooks may be
 * delivered later than the card update on a busy box, and counting them let a test read before its update landed.
 */
const intake = () => bff.sandbox.webhooks.attempts().filter((a) => a.outcome === 'delivered' && a.event_type.startsWith('cardupdate.')).length;

test('when the updater renews a card\'s expiry, then the view answers the new expiry without a gateway read, its cached token is dropped and the merchant is told once', async () => {
  const { custkey, pmkey } = card('4000100111112223');
  expect((await method(custkey, pmkey)).status).toBe(200); // tokengate learns the card (and its customer)
  const sale = await call(bff.url, 'POST', '/v1/sales', service(), { customer: custkey, payment_method: pmkey, amount: '1.00' }, { 'Idempotency-Key': idem('s') });
  expect(sale.status).toBe(201);
  expect(await tokenCached(custkey, pmkey)).toBe(1);
  const delivered = intake();
  bff.sandbox.cardUpdate({ custkey, pmkey, kind: 'updated_expiration', expiration: '0934' });
  await eventually(() => intake() > delivered);
  const readsBefore = walletReads();
  const after = await method(custkey, pmkey);
  expect(after.body).toMatchObject({ key: pmkey, expires: '0934', ccnum4last: '2223' });
  expect(walletReads()).toBe(readsBefore);
  expect(await tokenCached(custkey, pmkey)).toBe(0);
  await eventually(async () => (await updatedEvents(pmkey)).length === 1);
  // The gateway delivers again (a lost answer): nothing more happens.
  const last = bff.sandbox.webhooks.events().filter((e) => e.event_type === 'cardupdate.updated_expiration').at(-1);
  await bff.sandbox.webhooks.redeliver(last?.event_id as string);
  expect((await updatedEvents(pmkey)).length).toBe(1);
});

test('when the updater replaces the card behind a method, then its last four and expiry are the new card\'s', async () => {
  const { custkey, pmkey } = card('4000100211112222');
  expect((await method(custkey, pmkey)).status).toBe(200);
  const delivered = intake();
  bff.sandbox.cardUpdate({ custkey, pmkey, kind: 'updated_card', number: '5555444433332226', expiration: '1133' });
  await eventually(() => intake() > delivered);
  const event = bff.sandbox.webhooks.events().at(-1)?.raw ?? '';
  expect(event).not.toContain('5555444433332226'); // the webhook carries the masked card only
  expect((await method(custkey, pmkey)).body).toMatchObject({ expires: '1133', ccnum4last: '2226' });
  await eventually(async () => (await updatedEvents(pmkey)).length === 1);
});

test('when the updater says a card\'s account is closed, then its next renewal is a hard decline without a gateway call', async () => {
  const { custkey, pmkey } = card('4000200111112221');
  const clock = async (advance?: number) => {
    const res = await fetch(`${bff.adminUrl}/test/clock`, advance === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: advance }) });
    return Date.parse(((await res.json()) as { now: string }).now);
  };
  const start = new Date((await clock()) + DAY).toISOString().slice(0, 10);
  const invoices = `cl${Date.now().toString(36)}`;
  const made = await call(bff.url, 'POST', `/v1/customers/${custkey}/subscriptions`, service(),
    { amount: '7.00', interval: 'month', start, payment_method: pmkey, invoice_prefix: invoices, consent: { text: 'v1' } }, { 'Idempotency-Key': idem('sub') });
  expect(made.status).toBe(201);
  const delivered = intake();
  bff.sandbox.cardUpdate({ custkey, pmkey, kind: 'account_closed' });
  await eventually(() => intake() > delivered);
  await eventually(async () => (await updatedEvents(pmkey)).length === 1);
  await clock(DAY + 1000);
  const k = made.body.key as string;
  await eventually(async () => (await call(bff.url, 'GET', `/v1/subscriptions/${k}`, service())).body.status === 'past_due', 20_000);
  const sub = (await call(bff.url, 'GET', `/v1/subscriptions/${k}`, service())).body;
  expect(sub.history).toEqual([expect.objectContaining({ period: 0, result: 'not_sent', decline_class: 'hard', decline_code: 'account_closed', next_retry_at: null })]);
  expect(bff.sandbox.transactions().filter((t) => t.invoice.startsWith(`${invoices}-`))).toEqual([]);
});

test('when the updater names a card tokengate never learned, then it is acknowledged and changes nothing', async () => {
  const { custkey, pmkey } = card('371122223332225');
  const delivered = intake();
  bff.sandbox.cardUpdate({ custkey, pmkey, kind: 'updated_expiration', expiration: '0835' });
  await eventually(() => intake() > delivered);
  expect(await updatedEvents(pmkey)).toEqual([]);
});

test('when a card flagged closed gets a new card behind its method (updated_card), then the flag is lifted and its next renewal is charged', async () => {
  const { custkey, pmkey } = card('6011222233332224');
  const clock = async (advance?: number) => {
    const res = await fetch(`${bff.adminUrl}/test/clock`, advance === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: advance }) });
    return Date.parse(((await res.json()) as { now: string }).now);
  };
  expect((await method(custkey, pmkey)).status).toBe(200);
  let delivered = intake();
  bff.sandbox.cardUpdate({ custkey, pmkey, kind: 'account_closed' });
  await eventually(() => intake() > delivered);
  await eventually(async () => (await updatedEvents(pmkey)).length === 1);
  delivered = intake();
  bff.sandbox.cardUpdate({ custkey, pmkey, kind: 'updated_card', number: '4000100011112224', expiration: '1034' });
  await eventually(() => intake() > delivered);
  await eventually(async () => (await updatedEvents(pmkey)).length === 2);
  const start = new Date((await clock()) + DAY).toISOString().slice(0, 10);
  const invoices = `nc${Date.now().toString(36)}`;
  const made = await call(bff.url, 'POST', `/v1/customers/${custkey}/subscriptions`, service(),
    { amount: '8.00', interval: 'month', start, payment_method: pmkey, invoice_prefix: invoices, consent: { text: 'v1' } }, { 'Idempotency-Key': idem('sub') });
  expect(made.status).toBe(201);
  await clock(DAY + 1000);
  const k = made.body.key as string;
  await eventually(async () => (await call(bff.url, 'GET', `/v1/subscriptions/${k}`, service())).body.periods_charged === 1, 20_000);
  expect(bff.sandbox.transactions().filter((t) => t.invoice === `${invoices}-1`).map((t) => [t.pmkey, t.result_code, t.recurring])).toEqual([[pmkey, 'A', true]]);
});

test('when a card-update webhook names a transaction (source.object "transaction") rather than a payment method, then the card that sale charged is the one updated', async () => {
  const { custkey, pmkey } = card('5555444433332226');
  const sale = await call(bff.url, 'POST', '/v1/sales', service(), { customer: custkey, payment_method: pmkey, amount: '2.00' }, { 'Idempotency-Key': idem('s') });
  expect(sale.status).toBe(201);
  const delivered = intake();
  bff.sandbox.cardUpdate({ custkey, pmkey, kind: 'updated_expiration', expiration: '0736', sourceTransaction: sale.body.key as string });
  await eventually(() => intake() > delivered);
  expect(bff.sandbox.webhooks.events().at(-1)?.raw).toContain(JSON.stringify({ source: { object: 'transaction', key: sale.body.key } }).slice(1, -1));
  expect((await method(custkey, pmkey)).body).toMatchObject({ key: pmkey, expires: '0736' });
  await eventually(async () => (await updatedEvents(pmkey)).length === 1);
});
