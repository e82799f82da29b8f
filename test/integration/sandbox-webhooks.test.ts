import referenceExamples from '../fixtures/gateway-webhooks/reference-examples.json';
import { createHmac } from 'node:crypto';
import { containsPan, redactPans } from '../../src/card/pan';

/**
 * The sandbox's own event ids (64 random hex digits) left out of a PAN scan: one holds a Luhn-valid run of 13+
 * digits now and then (a run in ~4 of this file failed so today, on `"event_id":"22c…"`); card data could only
 * come from the objects. Both the plain and the JSON-escaped forms.
 */
const withoutEventIds = (text: string) => text.replace(/\\?"event_id\\?":\\?"[0-9a-f]+\\?"/g, '');
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';
import { clientFor } from '../support/gateway';
import { eventually } from '../support/wait';
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from '../support/webhook-receiver';

/** The sandbox sends the gateway's webhooks (issue 27, item 3): what each change of the lifecycle emits. */

const SECRET = 'sandbox-webhook-signature-key';
const APPROVED = '4000100011112224';
const DECLINED = '4000300011112220';
const card = (number: string) => ({ number, expiration: '1230', cvc: '123' });
type Tx = Record<string, unknown>;

describe('sandbox webhooks: every change of the lifecycle is an event', () => {
  let sb: RunningSandbox;
  let receiver: WebhookReceiver;
  let seq = 0;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    sb = await startSandbox({ settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000, webhookUrls: [receiver.url], webhookSecret: SECRET } });
  });
  afterAll(async () => {
    await sb.close();
    await receiver.close();
  });
  beforeEach(() => {
    sb.reset();
    sb.update({ duplicateFolding: false, webhookSecret: SECRET });
    receiver.clear();
  });

  const post = async (body: unknown) => (await callSandbox(sb.baseUrl, 'POST', 'transactions', { body })).json as Tx;
  const charge = async (command: 'cc:sale' | 'authonly', number = APPROVED) => (await post({ command, amount: '10.00', invoice: `inv-${++seq}`, creditcard: card(number) })).key as string;
  const follow = (command: string, trankey: string, extra: Tx = {}) => post({ command, trankey, ...extra });
  const close = () => callSandbox(sb.baseUrl, 'POST', 'batches/current/close');
  /** Waits until the receiver has `n` posts, and a moment more so that an extra one would show. */
  const received = async (n: number): Promise<ReceivedHook[]> => {
    await eventually(() => receiver.hits.length >= n);
    await new Promise((r) => setTimeout(r, 100));
    return receiver.hits;
  };
  const types = () => receiver.hits.map((h) => h.payload.event_type as string);

  it('when a sale is approved, then transaction.sale.success arrives signed over the raw body, with a subset object and no card data', async () => {
    const chargedFrom = Date.now();
    const key = await charge('cc:sale');
    const [hit] = await received(1);
    expect(receiver.hits).toHaveLength(1);
    const h = hit as ReceivedHook;
    expect(h.headers['content-type']).toMatch(/^application\/json/);
    expect(h.headers['x-signature']).toBe(createHmac('sha256', SECRET).update(h.raw).digest('hex'));
    expect(h.headers['x-signature']).toMatch(/^[0-9a-f]{64}$/);
    const p = h.payload;
    expect(Object.keys(p)).toEqual(['type', 'event_triggered', 'event_type', 'event_body', 'event_id']);
    expect(p).toMatchObject({ type: 'event', event_type: 'transaction.sale.success', event_body: { merchant: { merch_key: '5qwnn5b51gnkd1b' } } });
    expect(p.event_id).toMatch(/^[0-9a-f]{64}$/);
    expect(p.event_triggered).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    // When the sale happened (whole seconds, UTC): from the charge's start to the post's arrival, however long a
    // busy box made that (issue 41: it was within 2 s of the arrival).
    const triggered = Date.parse(`${p.event_triggered.replace(' ', 'T')}Z`);
    expect(triggered).toBeGreaterThanOrEqual(Math.floor(chargedFrom / 1000) * 1000);
    expect(triggered).toBeLessThanOrEqual(h.at);
    const object = p.event_body.object;
    expect(object).toMatchObject({ type: 'transaction', key, refnum: expect.any(Number), amount: '10.00', auth_amount: '10.00', result_code: 'A', invoice: `inv-${seq}`, creditcard: { type: 'V', number: '4000xxxxxxxx2224' }, batch: { type: 'batch', key: expect.any(String) } });
    expectReferenceShape('transaction.sale.success', object);
    expect(Object.keys(object.creditcard)).toEqual(['type', 'number']);
    expect(containsPan(withoutEventIds(h.raw.toString('utf8')))).toBe(false);
    expect(p.event_body.changes).toEqual({ old: {}, new: { auth_amount: '10.00', batch: { key: object.batch.key, batchrefnum: object.batch.batchrefnum, sequence: object.batch.sequence } } });
    // What the sandbox says it sent is what arrived.
    expect(sb.webhooks.events().map((e) => e.raw)).toEqual([h.raw.toString('utf8')]);
  });

  it('when no signature key is set, then events go unsigned', async () => {
    sb.update({ webhookSecret: '' });
    await charge('cc:sale');
    const [hit] = await received(1);
    expect(hit?.headers['x-signature']).toBeUndefined();
  });

  /** Each arranges a state, makes one change and says which event it must emit (last) and which key it names. */
  const CASES: { name: string; run: () => Promise<{ key: string; type: string; changes?: unknown; object?: Tx }> }[] = [
    { name: 'a declined sale', run: async () => ({ key: await charge('cc:sale', DECLINED), type: 'transaction.sale.failure', object: { result_code: 'D', auth_amount: '0.00' } }) },
    { name: 'an authorization', run: async () => ({ key: await charge('authonly'), type: 'transaction.sale.success', object: { trantype: 'Credit Card Auth Only', auth_amount: '10.00' } }) },
    {
      name: 'a capture of 7.50 of 10.00',
      run: async () => {
        const key = await charge('authonly');
        await follow('cc:capture', key, { amount: '7.50' });
        return { key, type: 'transaction.sale.captured', object: { auth_amount: '7.50', amount: '7.50', amount_detail: { original_amount: '10.00' } }, changes: { old: { auth_amount: '10.00', batch: null }, new: { auth_amount: '7.50', batch: expect.objectContaining({ key: expect.any(String) }) } } };
      },
    },
    ...(['void', 'cc:void:release', 'creditvoid'] as const).map((command) => ({
      name: `${command} of an unsettled sale`,
      run: async () => {
        const key = await charge('cc:sale');
        await follow(command, key);
        return { key, type: 'transaction.sale.voided', object: { amount_detail: { original_amount: '10.00' } }, changes: { old: { auth_amount: '10.00' }, new: { auth_amount: '0.00' } } };
      },
    })),
    {
      name: 'a void of an open authorization',
      run: async () => {
        const key = await charge('authonly');
        await follow('cc:void:release', key);
        return { key, type: 'transaction.sale.voided', object: { refnum: expect.any(String) } };
      },
    },
    {
      name: 'refund:adjust of an unsettled sale',
      run: async () => {
        const key = await charge('cc:sale');
        await follow('refund:adjust', key, { amount: '1.00' });
        return { key, type: 'transaction.sale.adjusted', changes: { old: { auth_amount: '10.00' }, new: { auth_amount: '9.00' } } };
      },
    },
    ...(['refund', 'creditvoid', 'refund:adjust'] as const).map((command) => ({
      name: `${command} of 4.00 of a settled sale`,
      run: async () => {
        const sale = await charge('cc:sale');
        await close();
        const key = (await follow(command, sale, { amount: '4.00' })).key as string;
        const refnum = (sb.ledger.get(sale) as { refnum: string }).refnum;
        // As the reference's example: the refund names no sale (no original), its amount is auth_amount.
        expect(refnum).toBeDefined();
        return { key, type: 'transaction.refund.success', object: { auth_amount: '4.00', amount_detail: { original_amount: '4.00' } }, changes: { old: {}, new: expect.objectContaining({ auth_amount: '4.00' }) } };
      },
    })),
    {
      name: 'a void of an unsettled refund',
      run: async () => {
        const sale = await charge('cc:sale');
        await close();
        const key = (await follow('refund', sale, { amount: '4.00' })).key as string;
        await follow('void', key);
        return { key, type: 'transaction.refund.voided', object: { amount_detail: { original_amount: '4.00' } }, changes: { old: { auth_amount: '4.00' }, new: { auth_amount: '0.00' } } };
      },
    },
    {
      name: 'an unvoid of a voided sale',
      run: async () => {
        const key = await charge('cc:sale');
        await follow('void', key);
        await follow('unvoid', key);
        return { key, type: 'transaction.sale.unvoided', changes: { old: { auth_amount: '0.00' }, new: { auth_amount: '10.00' } } };
      },
    },
    {
      name: 'cc:adjust of an unsettled sale up to 12.00',
      run: async () => {
        const key = await charge('cc:sale');
        await follow('cc:adjust', key, { amount: '12.00' });
        return { key, type: 'transaction.sale.adjusted', object: { auth_amount: '12.00', amount_detail: { original_amount: '10.00' } }, changes: { old: { auth_amount: '10.00' }, new: { auth_amount: '12.00' } } };
      },
    },
  ];

  it.each(CASES)('when the sandbox processes $name, then its event arrives naming that transaction', async ({ run }) => {
    const expected = await run();
    const emitted = sb.webhooks.events();
    const last = emitted[emitted.length - 1]?.payload as { event_type: string; event_id: string; event_body: { object: Tx; changes: unknown } };
    expect(last.event_type).toBe(expected.type);
    expect(last.event_body.object).toMatchObject({ type: 'transaction', key: expected.key, ...expected.object });
    expectReferenceShape(expected.type, last.event_body.object);
    if (expected.changes) expect(last.event_body.changes).toEqual(expected.changes);
    await eventually(() => receiver.hits.some((h) => h.payload.event_id === last.event_id));
    const all = withoutEventIds(JSON.stringify(emitted));
    if (containsPan(all)) throw new Error(`PAN-like: ${redactPans(all, '<<<CARD>>>').split('<<<CARD>>>').map((x, i, a) => (i < a.length - 1 ? x.slice(-80) : '')).join(' | ')}`);
  });

  it('when an unvoid follows a void that released the funds, or names a settled sale, then it is refused and emits nothing', async () => {
    const released = await charge('cc:sale');
    await follow('cc:void:release', released);
    expect(await follow('unvoid', released)).toMatchObject({ result_code: 'E', error_code: '10125' });
    const settled = await charge('cc:sale');
    await close();
    expect(await follow('cc:adjust', settled, { amount: '5.00' })).toMatchObject({ result_code: 'E', error_code: '10126' });
    expect(types().filter((t) => t === 'transaction.sale.unvoided' || t === 'transaction.sale.adjusted')).toEqual([]);
    expect(sb.webhooks.events().filter((e) => e.event_type === 'transaction.sale.unvoided' || e.event_type === 'transaction.sale.adjusted')).toEqual([]);
  });

  it('when a batch closes, then settlement.batch.success names the batch with its counts, not its sales', async () => {
    const kept = await charge('cc:sale');
    const voided = await charge('cc:sale');
    await follow('void', voided);
    const closed = (await close()).json as Tx;
    const hits = await received(4);
    expect(types()).toEqual(['transaction.sale.success', 'transaction.sale.success', 'transaction.sale.voided', 'settlement.batch.success']);
    const batch = hits[3]?.payload.event_body;
    expect(batch.object).toMatchObject({ type: 'batch', key: closed.key, batchrefnum: closed.batchrefnum, response: 'A', numsales: 1, totalsales: '1000', totalcredits: '000', uri: `batches/${String(closed.key)}` });
    expectReferenceShape('settlement.batch.success', batch.object);
    expect(batch.changes).toEqual({ old: { status: 'open' }, new: { status: 'closed' } });
    const raw = hits[3]?.raw.toString('utf8') as string;
    expect(raw).not.toContain(kept);
    expect(raw).not.toContain(voided);
  });

  it('when a follow-up is refused, a duplicate is folded or a card is in error, then no event is sent for it', async () => {
    sb.update({ duplicateFolding: true });
    const key = await charge('cc:sale');
    await follow('void', key);
    expect((await follow('void', key)).is_duplicate).toBe('Y');
    expect((await follow('void', key, { ignore_duplicate: true })).error_code).toBe('24');
    const folded = await post({ command: 'cc:sale', amount: '3.00', invoice: 'same', creditcard: card(APPROVED) });
    expect((await post({ command: 'cc:sale', amount: '3.00', invoice: 'same', creditcard: card(APPROVED) })).is_duplicate).toBe('Y');
    expect((await post({ command: 'cc:sale', amount: '3.00', creditcard: card('4000100011112225') })).result_code).toBe('E');
    await received(3);
    expect(types()).toEqual(['transaction.sale.success', 'transaction.sale.voided', 'transaction.sale.success']);
    expect(receiver.hits[2]?.payload.event_body.object.key).toBe(folded.key);
  });

  it('when the same void comes from tokengate\'s gateway client or straight from a curl (the console), then both emit the same event', async () => {
    const viaClient = await charge('cc:sale');
    const direct = await charge('cc:sale');
    await clientFor(sb).void({ trankey: viaClient, release: true });
    await follow('cc:void:release', direct);
    const hits = await received(4);
    const voids = hits.filter((h) => h.payload.event_type === 'transaction.sale.voided').map((h) => h.payload.event_body);
    expect(voids.map((b) => b.object.key).sort()).toEqual([viaClient, direct].sort());
    expect(voids[0].changes).toEqual(voids[1].changes);
  });

  it('when receivers are set over the admin route, then the settings show neither the signature key nor a receiver password', async () => {
    const admin = (path: string, body?: unknown) => fetch(new URL(`/_sandbox/${path}`, sb.url), { method: body ? 'POST' : 'GET', headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const withAuth = `http://hook-user:hook-pass@127.0.0.1:${receiver.port}/hooks/gateway`;
    const set = await admin('settings', { webhookUrls: [withAuth] });
    expect(set.status).toBe(200);
    const shown = JSON.stringify(await (await admin('settings')).json());
    expect(shown).toContain(`127.0.0.1:${receiver.port}/hooks/gateway`);
    for (const secret of [SECRET, 'hook-pass']) expect(shown).not.toContain(secret);
    // The credentials in the URL go as Basic authentication, as the gateway's optional hook auth does.
    await charge('cc:sale');
    const [hit] = await received(1);
    expect(hit?.headers.authorization).toBe(`Basic ${Buffer.from('hook-user:hook-pass').toString('base64')}`);
    const bad = await admin('settings', { webhookUrls: ['ftp://hook-user:hook-pass@example.com/'] });
    expect(bad.status).toBe(400);
    expect(await bad.text()).not.toContain('hook-pass');
    sb.update({ webhookUrls: [receiver.url] });
  });
});

/**
 * The sandbox's object of `type` carries only fields of the reference's example of that type (README.md,
 * Webhooks), never trantype_code, status_code or original, and `refnum` in the example's JSON type.
 */
function expectReferenceShape(type: string, object: Record<string, unknown>): void {
  const example = (referenceExamples.examples as Record<string, { event_body: { object: Record<string, unknown> } }>)[type]?.event_body.object;
  expect(example).toBeDefined();
  const allowed = Object.keys(example as object);
  expect(Object.keys(object).filter((f) => !allowed.includes(f))).toEqual([]);
  for (const absent of ['trantype_code', 'status_code', 'original', 'status', 'created']) expect(object).not.toHaveProperty(absent);
  if (example && 'refnum' in example) expect(typeof object.refnum).toBe(typeof example.refnum);
}
