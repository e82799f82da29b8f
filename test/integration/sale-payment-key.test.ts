import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call, gatewayCalls, mintPaymentKey } from '../support/wallet';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * Paying with a new card in one call (issue 26, item 4): `POST /v1/sales` with `payment_key` instead of
 * `payment_method` is one `cc:sale` (no verification authorization or void); with `save_payment_method` the card is
 * kept on the customer and the answer names it when a read slot was free at once (else it is learnt after the
 * answer). The sandbox's ledger and request counts are the judge.
 */

const run = randomBytes(3).toString('hex');
let n = 0;
const id = (what: string) => `${what}-${run}-${++n}`;
const shopper = (custkey: string) => token({ sub: `pk-shopper-${run}`, custkey, scope: 'sales:create sales:read payment_methods:read payment_methods:write' });
/** A checkout token that may pay but not add cards (no payment_methods:write). */
const payOnly = (custkey: string) => token({ sub: `pk-payonly-${run}`, custkey, scope: 'sales:create sales:read payment_methods:read' });
type Listed = { key: string; ccnum4last: string; expires: string };

describe('POST /v1/sales with a payment key', () => {
  let bff: Bff;
  let other: { url: string; stop(): Promise<void> };
  beforeAll(async () => {
    bff = await startBff({ env: { GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '200', RECONCILE_MAX_PROCESSING_MS: '1500' } });
    other = await bff.replica();
  });
  afterAll(() => bff?.stop());
  afterEach(() => bff.sandbox.faults.clear());

  const customer = (i: number) => (bff.sandbox.fixtures.customers[i] as { key: string }).key;
  const pay = async (custkey: string, body: Record<string, unknown>, key = id('pay'), base = bff.url) =>
    call(base, 'POST', '/v1/sales', shopper(custkey), { customer: custkey, amount: '25.00', ...body }, { 'idempotency-key': key });
  const listed = async (custkey: string, base = bff.url) => (await call(base, 'GET', `/v1/customers/${custkey}/payment_methods`, shopper(custkey))).body.data as Listed[];

  it('when a shopper pays with a new card without keeping it, then one gateway call charges it and nothing is stored', async () => {
    const c = customer(10);
    const before = await listed(c);
    const pk = await mintPaymentKey(bff, shopper(c), '4000100011112224', '0330');
    const calls = gatewayCalls(bff);
    const res = await pay(c, { payment_key: pk });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'sale', result_code: 'A', amount: '25.00', customer: c, status: 'pending_settlement', creditcard: { number: '4000xxxxxxxx2224' } });
    expect(res.body.payment_method).toBeUndefined();
    expect(gatewayCalls(bff)).toBe(calls + 1);
    expect(bff.sandbox.ledger.get(res.body.key as string)).toMatchObject({ kind: 'sale', custkey: c });
    expect(await listed(c)).toHaveLength(before.length);
  });

  it('when the shopper keeps the card, then one sale and one read: the answer names the new method, and every list shows it with no call', async () => {
    const c = customer(11);
    const before = await listed(c);
    const pk = await mintPaymentKey(bff, shopper(c), '5555444433332226', '0431');
    const calls = gatewayCalls(bff);
    const res = await pay(c, { payment_key: pk, save_payment_method: true });
    expect(res.status).toBe(201);
    expect(gatewayCalls(bff)).toBe(calls + 2);
    const stored = bff.sandbox.fixtures.paymentMethods(c).find((m) => !before.some((b) => b.key === m.key));
    expect(stored).toBeDefined();
    expect(res.body.payment_method).toBe(stored?.key);
    const after = await listed(c, other.url);
    expect(after.find((m) => m.key === stored?.key)).toMatchObject({ ccnum4last: '2226', expires: '0431' });
    const got = await call(other.url, 'GET', `/v1/sales/${res.body.key as string}`, shopper(c));
    expect(got.body.payment_method).toBe(stored?.key);
    expect(gatewayCalls(bff)).toBe(calls + 2);
  });

  it('when a token without payment_methods:write asks to keep the card, then 403 forbidden and nothing is charged or stored; paying without keeping it is allowed', async () => {
    const c = customer(13);
    const before = bff.sandbox.fixtures.paymentMethods(c).length;
    const pk = await mintPaymentKey(bff, shopper(c), '4000100011112224');
    const calls = gatewayCalls(bff);
    const refused = await call(bff.url, 'POST', '/v1/sales', payOnly(c), { customer: c, amount: '4.00', payment_key: pk, save_payment_method: true }, { 'idempotency-key': id('keep-forbidden') });
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'forbidden']);
    expect(gatewayCalls(bff)).toBe(calls);
    expect(bff.sandbox.fixtures.paymentMethods(c)).toHaveLength(before);
    const paid = await call(bff.url, 'POST', '/v1/sales', payOnly(c), { customer: c, amount: '4.00', payment_key: pk }, { 'idempotency-key': id('pay-only') });
    expect(paid.status).toBe(201);
    expect(bff.sandbox.fixtures.paymentMethods(c)).toHaveLength(before);
  });

  it('when the same key is sent again, then the answer is replayed and the card was charged once', async () => {
    const c = customer(12);
    const key = id('replay');
    const body = { payment_key: await mintPaymentKey(bff, shopper(c), '371122223332225'), save_payment_method: true };
    const first = await pay(c, body, key);
    const again = await pay(c, body, key, other.url);
    expect(first.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.key).toBe(first.body.key);
    expect(bff.sandbox.transactions().filter((t) => t.invoice === first.body.invoice)).toHaveLength(1);
  });

  it('when the card is declined, then 402 and nothing is stored', async () => {
    const c = customer(13);
    const before = bff.sandbox.fixtures.paymentMethods(c).length;
    const res = await pay(c, { payment_key: await mintPaymentKey(bff, shopper(c), '4000300011112220'), save_payment_method: true });
    expect(res.status).toBe(402);
    expect(res.body.error?.code).toBe('card_declined');
    expect(bff.sandbox.fixtures.paymentMethods(c)).toHaveLength(before);
  });

  it('when the gateway refuses the payment key, then 400 naming body.payment_key (and body.authorization, which a check form\'s key would need), and nothing was charged', async () => {
    const c = customer(13);
    const charged = bff.sandbox.transactions().length;
    const res = await pay(c, { payment_key: 'pk_neverminted0123456789' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', details: [{ path: 'body.payment_key', rule: 'refused_by_gateway' }, { path: 'body.authorization', rule: 'required_if_bank_payment_key' }] });
    expect(bff.sandbox.transactions()).toHaveLength(charged);
  });

  it('when the body names both a method and a key, neither, or keeps a stored method, then 400; a card number as the key is 422; nothing is sent', async () => {
    const c = customer(14);
    const pm = (bff.sandbox.fixtures.paymentMethods(c)[0] as { key: string }).key;
    const calls = gatewayCalls(bff);
    expect((await pay(c, { payment_method: pm, payment_key: 'pk_abc' })).status).toBe(400);
    expect((await pay(c, {})).status).toBe(400);
    expect((await pay(c, { payment_method: pm, save_payment_method: true })).status).toBe(400);
    const card = await pay(c, { payment_key: '6011222233332224' });
    expect(card.status).toBe(422);
    expect(card.body.error?.code).toBe('card_data_forbidden');
    expect(gatewayCalls(bff)).toBe(calls);
  });

  it('when the sale\'s answer is lost, then 504, the reconciler finds it by invoice, and the customer\'s view reads the gateway for the stored card', async () => {
    const c = customer(15);
    await listed(c); // the view is loaded
    const key = id('lost');
    const body = { payment_key: await mintPaymentKey(bff, shopper(c), '4000100011112224'), save_payment_method: true };
    bff.sandbox.faults.next({ kind: 'hang', match: 'sale', when: 'after' });
    const lost = await pay(c, body, key);
    expect(lost.status).toBe(504);
    let replay = lost;
    await eventually(async () => (replay = await pay(c, body, key)).status === 201, 10_000, 200);
    expect(replay.headers.get('tokengate-reconciled')).toBe('true');
    expect(bff.sandbox.transactions().filter((t) => t.invoice === replay.body.invoice)).toHaveLength(1);
    const stored = bff.sandbox.fixtures.paymentMethods(c).at(-1) as { key: string };
    expect((await listed(c, other.url)).map((m) => m.key)).toContain(stored.key);
  });

  it('when the customer was removed, then 404 and nothing is charged', async () => {
    const svc = token({ sub: `pk-svc-${run}`, scope: 'customers:write customers:any sales:create' });
    const made = await call(bff.url, 'POST', '/v1/customers', svc, { customerid: id('user'), company: 'Gone Ltd' }, { 'idempotency-key': id('c') });
    const c = made.body.key as string;
    expect((await call(bff.url, 'DELETE', `/v1/customers/${c}`, svc)).status).toBe(204);
    const charged = bff.sandbox.transactions().length;
    const res = await call(other.url, 'POST', '/v1/sales', svc, { customer: c, amount: '5.00', payment_key: await mintPaymentKey(bff, svc, '4000100011112224') }, { 'idempotency-key': id('pay') });
    expect(res.status).toBe(404);
    expect(bff.sandbox.transactions()).toHaveLength(charged);
  });
});

describe('POST /v1/sales with a payment key, when no read slot is free at once', () => {
  let bff: Bff;
  let receiver: WebhookReceiver;
  const EVENTS_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
  // 3 calls per 3 s; reads may take 1 of them (2 are kept for sales and captures).
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    bff = await startBff({
      budget: { perWindow: 3, windowMs: 3000, marginMs: 100 },
      env: { LIMITER_SALE_RESERVED_SLOTS: '2', EVENTS_WEBHOOK_URLS: receiver.url, EVENTS_WEBHOOK_SECRET: EVENTS_SECRET, EVENTS_POLL_MS: '50' },
    });
  });
  afterAll(async () => {
    await bff?.stop();
    await receiver?.close();
  });
  const internal = () => token({ sub: `pk-events-${run}`, scope: 'customers:any events:read' });
  /** The `payment_method.added` events the log holds for `pmkey`. */
  const addedEvents = async (pmkey: string) => {
    const all: { id: string; type: string; data: { key?: string } }[] = [];
    for (let after: string | undefined; ;) {
      const page = await call(bff.url, 'GET', `/v1/events?limit=1000${after ? `&after=${after}` : ''}`, internal());
      expect(page.status).toBe(200);
      const data = page.body.data as typeof all;
      all.push(...data);
      if (!page.body.has_more) break;
      after = data[data.length - 1]?.id;
    }
    return all.filter((e) => e.type === 'payment_method.added' && e.data.key === pmkey);
  };
  const addedHits = (pmkey: string) => receiver.hits.filter((h) => h.payload?.type === 'payment_method.added' && h.payload?.data?.key === pmkey);

  it('when the read that names the stored card must wait, then the sale answers at once without it, and the card is named after', async () => {
    const c = (bff.sandbox.fixtures.customers[16] as { key: string }).key;
    const pk = await mintPaymentKey(bff, shopper(c), '5555444433332226', '0532');
    await new Promise((r) => setTimeout(r, 3200)); // the payment-config read leaves the window
    // The window's one read slot goes to the wallet's first list.
    const before = (await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, shopper(c))).body.data as Listed[];
    const res = await call(bff.url, 'POST', '/v1/sales', shopper(c), { customer: c, amount: '9.00', payment_key: pk, save_payment_method: true }, { 'idempotency-key': id('later') });
    expect(res.status).toBe(201);
    // It did not wait for the read slot: had it waited, the answer would name the card (no clock involved).
    expect(res.body.payment_method).toBeUndefined();
    const stored = () => bff.sandbox.fixtures.paymentMethods(c).find((m) => !before.some((b) => b.key === m.key));
    expect(stored()).toBeDefined();
    await eventually(async () => {
      const now = (await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, shopper(c))).body.data as Listed[];
      return now.some((m) => m.key === stored()?.key);
    }, 10_000, 200);
    const sale = await call(bff.url, 'GET', `/v1/sales/${res.body.key as string}`, shopper(c));
    expect(sale.body.payment_method).toBe(stored()?.key);
    expect(bff.sandbox.stats().endpoints.v2).toMatchObject({ rateLimited: 0 });
  });

  it('when the card is named after the answer, on a later window of the budget, then its payment_method.added is logged and delivered signed exactly once, with the method as the API lists it', async () => {
    const c = (bff.sandbox.fixtures.customers[17] as { key: string }).key;
    const pk = await mintPaymentKey(bff, shopper(c), '4000100011112224', '0633');
    await new Promise((r) => setTimeout(r, 3200)); // the payment-config read leaves the window
    // The window's one read slot goes to the wallet's first list: the naming read waits for the next window.
    const before = (await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, shopper(c))).body.data as Listed[];
    const key = id('later-event');
    const body = { customer: c, amount: '7.00', payment_key: pk, save_payment_method: true };
    const res = await call(bff.url, 'POST', '/v1/sales', shopper(c), body, { 'idempotency-key': key });
    expect(res.status).toBe(201);
    expect(res.body.payment_method).toBeUndefined();
    const stored = bff.sandbox.fixtures.paymentMethods(c).find((m) => !before.some((b) => b.key === m.key)) as { key: string };
    expect(stored).toBeDefined();
    let listed: Listed | undefined;
    await eventually(async () => {
      listed = ((await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, shopper(c))).body.data as Listed[]).find((m) => m.key === stored.key);
      return listed !== undefined;
    }, 10_000, 200);
    await eventually(async () => (await addedEvents(stored.key)).length > 0 && addedHits(stored.key).length > 0, 10_000, 100);
    const [event] = await addedEvents(stored.key);
    expect(event?.data).toMatchObject({ key: stored.key, ccnum4last: '2224', expires: '0633' });
    expect(event?.data).toMatchObject(listed as object);
    const [hit] = addedHits(stored.key);
    expect(new Webhook(EVENTS_SECRET).verify(hit?.raw.toString('utf8') ?? '', hit?.headers as Record<string, string>)).toEqual(event);
    // A replay of the sale tells of nothing again.
    const replay = await call(bff.url, 'POST', '/v1/sales', shopper(c), body, { 'idempotency-key': key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    await new Promise((r) => setTimeout(r, 500));
    expect(await addedEvents(stored.key)).toHaveLength(1);
    expect(addedHits(stored.key)).toHaveLength(1);
  });
});
