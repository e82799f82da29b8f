import { randomBytes } from 'node:crypto';
import { startBff, token, type Bff } from '../support/bff';

/**
 * Adding a card without card data (issue 13, contract: /v1/payment-config, POST /v1/customers/{c}/payment_methods,
 * guarantee 8) against the sandbox's Pay.js stand-in and real Redis. Payment keys are minted the way the card
 * iframe mints them (POST /js/v2/payment_key on the sandbox's origin); the sandbox's ledger is the judge of
 * what the verification did (an authonly, voided at once).
 */

let bff: Bff;
let custA: string;
let custB: string;
const run = randomBytes(3).toString('hex');
let n = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idem = () => `pm-${run}-${++n}`;

beforeAll(async () => {
  bff = await startBff({ env: { GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '200', RECONCILE_MAX_PROCESSING_MS: '1500' } });
  custA = bff.sandbox.fixtures.firstCustomer().key;
  custB = (bff.sandbox.fixtures.customers.find((c) => c.key !== custA) as { key: string }).key;
});
afterAll(() => bff?.stop());
afterEach(() => bff.sandbox.faults.clear());

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { error?: { code?: string; details?: { path: string; rule: string }[]; transaction?: Record<string, unknown> } };
}

const userA = (scope = 'payment_methods:write payment_methods:read') => token({ sub: `pm-user-a-${run}`, custkey: custA, scope });

async function call(method: string, path: string, bearer: string, body?: unknown, key?: string): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
  if (key) headers['idempotency-key'] = key;
  const res = await fetch(`${bff.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

async function publicKey(): Promise<string> {
  const res = await call('GET', '/v1/payment-config', userA());
  return res.body.public_key as string;
}

/** What the card iframe does with what the customer typed: the sandbox mints a single-use key. */
async function mintKey(number: string, expiration = '1230', pk?: string): Promise<string> {
  const res = await fetch(`${bff.sandbox.url}/js/v2/payment_key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ public_key: pk ?? (await publicKey()), card: { number, expiration, cvc: '123' } }),
  });
  const body = (await res.json()) as { payment_key?: string };
  if (res.status !== 200 || !body.payment_key) throw new Error(`mint: ${res.status} ${JSON.stringify(body)}`);
  return body.payment_key;
}

const add = (paymentKey: string, opts: { customer?: string; bearer?: string; key?: string; extra?: object } = {}) =>
  call('POST', `/v1/customers/${opts.customer ?? custA}/payment_methods`, opts.bearer ?? userA(), { payment_key: paymentKey, ...opts.extra }, opts.key ?? idem());
const listed = async () => ((await call('GET', `/v1/customers/${custA}/payment_methods?limit=100`, userA())).body.data as { key: string; ccnum4last: string }[]);
const authonlyOps = () => bff.sandbox.transactions().filter((t) => t.cardSource === 'payment_key');

describe('GET /v1/payment-config', () => {
  it('when any valid token asks, then it answers the gateway public key and the sandbox origin Pay.js URL', async () => {
    const res = await call('GET', '/v1/payment-config', token({ sub: 'pm-any', scope: '' }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ public_key: expect.stringMatching(/^_P[A-Za-z0-9]{20,}$/), pay_js_url: `${bff.sandbox.url}/js/v2/pay.js` });
  });

  it('when no token is sent, then 401', async () => {
    const res = await fetch(`${bff.url}/v1/payment-config`);
    expect(res.status).toBe(401);
  });

  it('when the sandbox serves Pay.js and its card form, then both are there with the usaepay surface and card autocomplete tokens', async () => {
    const js = await (await fetch(`${bff.sandbox.url}/js/v2/pay.js`)).text();
    for (const name of ['usaepay', 'createPaymentCardEntry', 'generateHTML', 'addHTML', 'addEventListener', 'getPaymentKey']) expect(js).toContain(name);
    const frame = await fetch(`${bff.sandbox.url}/js/v2/card-frame.html`);
    const html = await frame.text();
    for (const token_ of ['autocomplete="cc-number"', 'autocomplete="cc-exp"', 'autocomplete="cc-csc"', '<label for="cc-number">']) expect(html).toContain(token_);
    expect(frame.headers.get('content-security-policy')).toContain("script-src 'self'");
  });
});

describe('POST /v1/customers/{custkey}/payment_methods', () => {
  it('when an approved test card comes as a payment key, then 201 the masked method, listed, and the verification was authorized then voided', async () => {
    const before = (await listed()).length;
    const res = await add(await mintKey('4000100011112224'), { extra: { method_name: 'Work Visa' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'customerpaymentmethod', ccnum4last: '2224', expires: '1230', method_name: 'Work Visa', verification: { result_code: 'A', voided: true, auth_amount: '1.00' } });
    expect(JSON.stringify(res.body)).not.toMatch(/4000100011112224/);
    const methods = await listed();
    expect(methods).toHaveLength(before + 1);
    expect(methods.map((m) => m.key)).toContain(res.body.key);
    const verification = (res.body.verification as { key: string }).key;
    expect(bff.sandbox.ledger.get(verification)).toMatchObject({ kind: 'authonly', state: 'voided', custkey: custA });
    const voids = bff.sandbox.ledger.operations().filter((o) => o.trankey === verification && o.command === 'cc:void:release');
    expect(voids).toHaveLength(1);
  });

  it('when the caller sends the cardholder and AVS details beside the key, then the stored method carries them', async () => {
    const res = await add(await mintKey('4000100111112223'), { extra: { cardholder: 'Body Holder', avs_street: '1 Main St', avs_postalcode: '12345', method_name: 'Home' } });
    expect(res.status).toBe(201);
    const details = { cardholder: 'Body Holder', avs_street: '1 Main St', avs_postalcode: '12345', method_name: 'Home' };
    expect(res.body).toMatchObject(details);
    expect((await listed()).find((m) => m.key === res.body.key)).toMatchObject(details);
  });

  it('when the same Idempotency-Key is sent again, then the stored answer is replayed and the gateway saw one verification', async () => {
    const key = idem();
    const pk = await mintKey('5555444433332226');
    const first = await add(pk, { key });
    const again = await add(pk, { key });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.key).toBe(first.body.key);
    expect(authonlyOps().filter((t) => t.key === (first.body.verification as { key: string }).key)).toHaveLength(1);
  });

  it('when the card is declined, then 402 card_declined with the verification, and no method is attached', async () => {
    const before = (await listed()).length;
    const res = await add(await mintKey('4000300011112220'));
    expect(res.status).toBe(402);
    expect(res.body.error?.code).toBe('card_declined');
    expect(res.body.error?.transaction).toMatchObject({ type: 'card_verification', result_code: 'D' });
    expect(await listed()).toHaveLength(before);
  });

  it('when a payment key is reused under a new Idempotency-Key, then 400 invalid_request names body.payment_key', async () => {
    const pk = await mintKey('4000100011112224');
    expect((await add(pk)).status).toBe(201);
    const res = await add(pk);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', details: [{ path: 'body.payment_key', rule: 'refused_by_gateway' }] });
  });

  it('when a payment key is unknown, then 400 and nothing reached the ledger', async () => {
    const before = bff.sandbox.transactions().length;
    const res = await add('pk_doesnotexist0123456789');
    expect(res.status).toBe(400);
    expect(res.body.error?.details).toEqual([{ path: 'body.payment_key', rule: 'refused_by_gateway' }]);
    expect(bff.sandbox.transactions()).toHaveLength(before);
  });

  it('when a payment key is refused, then the corrected request under the same Idempotency-Key adds the card once (201)', async () => {
    const key = idem();
    const refused = await add('pk_doesnotexist9876543210', { key });
    expect([refused.status, refused.body.error?.details]).toEqual([400, [{ path: 'body.payment_key', rule: 'refused_by_gateway' }]]);
    const before = authonlyOps().length;
    const added = await add(await mintKey('4000100011112224'), { key });
    expect([added.status, added.body.ccnum4last]).toEqual([201, '2224']);
    expect(authonlyOps()).toHaveLength(before + 1);
  });

  it('when a payment key has expired, then 400', async () => {
    bff.sandbox.update({ paymentKeyTtlMs: 50 });
    try {
      const pk = await mintKey('4000100011112224');
      await sleep(120);
      const res = await add(pk);
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe('invalid_request');
    } finally {
      bff.sandbox.update({ paymentKeyTtlMs: 15 * 60_000 });
    }
  });

  it('when a key was minted under another public key, then the sandbox does not mint it (400) and the gateway shape says why', async () => {
    const res = await fetch(`${bff.sandbox.url}/js/v2/payment_key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ public_key: '_Pnotthismerchant000000000', card: { number: '4000100011112224', expiration: '1230', cvc: '123' } }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'Unknown public key', errorcode: 40013 });
  });

  it('when a user bound to one customer adds a card to another, then 404 exactly like an unknown customer, and nothing is sent', async () => {
    const before = bff.sandbox.transactions().length;
    const pk = await mintKey('4000100011112224');
    const other = await add(pk, { customer: custB });
    const unknown = await add(pk, { customer: 'nosuchcustomer01' });
    expect(other.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect({ ...other.body.error, request_id: '' }).toEqual({ ...unknown.body.error, request_id: '' });
    expect(bff.sandbox.transactions()).toHaveLength(before);
  });

  it('when the token lacks payment_methods:write, then 403 and nothing is sent', async () => {
    const res = await add(await mintKey('4000100011112224'), { bearer: userA('payment_methods:read sales:create') });
    expect(res.status).toBe(403);
    expect(res.body.error?.code).toBe('forbidden');
  });

  it('when a card number is sent instead of a payment key, or beside it, then 422 card_data_forbidden and nothing is charged', async () => {
    const before = bff.sandbox.transactions().length;
    const asKey = await add('4000100011112224');
    const beside = await add(await mintKey('4000100011112224'), { extra: { cardholder: '4000 1000 1111 2224' } });
    const field = await call('POST', `/v1/customers/${custA}/payment_methods`, userA(), { creditcard: { number: '4000100011112224' } }, idem());
    for (const res of [asKey, beside, field]) {
      expect(res.status).toBe(422);
      expect(res.body.error?.code).toBe('card_data_forbidden');
      expect(JSON.stringify(res.body)).not.toContain('2224');
    }
    expect(bff.sandbox.transactions()).toHaveLength(before);
  });

  it('when the body lacks payment_key or has an unknown field, then 400 invalid_request', async () => {
    expect((await call('POST', `/v1/customers/${custA}/payment_methods`, userA(), {}, idem())).status).toBe(400);
    expect((await call('POST', `/v1/customers/${custA}/payment_methods`, userA(), { payment_key: 'pk_x', extra: 1 }, idem())).status).toBe(400);
    expect((await call('POST', `/v1/customers/${custA}/payment_methods`, userA(), { payment_key: 'pk_x' })).status).toBe(400); // no Idempotency-Key
  });
});

describe('unknown outcomes of a card verification', () => {
  async function untilKnown(pk: string, key: string, withinMs = 12_000): Promise<Answer[]> {
    const answers: Answer[] = [];
    const until = Date.now() + withinMs;
    for (;;) {
      const a = await add(pk, { key });
      answers.push(a);
      if (a.status === 201 || a.status === 402 || Date.now() > until) return answers;
      await sleep(150);
    }
  }

  it('when the authorization times out after the gateway processed it, then the key answers outcome_unknown, and the reconciler voids it and answers the method', async () => {
    bff.sandbox.faults.next({ kind: 'hang', match: 'authonly', when: 'after' });
    const key = idem();
    const pk = await mintKey('4000100011112224');
    const answers = await untilKnown(pk, key);
    expect(answers[0]?.status).toBe(504);
    const last = answers[answers.length - 1] as Answer;
    expect(last.status).toBe(201);
    expect(last.headers.get('tokengate-reconciled')).toBe('true');
    const verification = (last.body.verification as { key: string }).key;
    expect(bff.sandbox.ledger.get(verification)).toMatchObject({ kind: 'authonly', state: 'voided' });
    expect(authonlyOps().filter((t) => t.key === verification)).toHaveLength(1);
    expect(bff.sandbox.ledger.operations().filter((o) => o.trankey === verification && o.command === 'cc:void:release')).toHaveLength(1);
  });

  it('when the void times out, then the write is outcome_unknown until the reconciler sees it voided, and the void was sent once', async () => {
    bff.sandbox.faults.next({ kind: 'hang', match: 'void', when: 'after' });
    const key = idem();
    const answers = await untilKnown(await mintKey('4000100011112224'), key);
    expect(answers[0]?.status).toBe(409);
    expect(answers[0]?.body.error?.code).toBe('outcome_unknown');
    const last = answers[answers.length - 1] as Answer;
    expect(last.status).toBe(201);
    const verification = (last.body.verification as { key: string }).key;
    expect(bff.sandbox.ledger.get(verification)).toMatchObject({ state: 'voided' });
    expect(bff.sandbox.ledger.operations().filter((o) => o.trankey === verification && o.command === 'cc:void:release')).toHaveLength(1);
  });

  it('when the authorization failed before the gateway processed it, then the key is released and a retry adds the card once', async () => {
    bff.sandbox.faults.next({ kind: '5xx', status: 503, match: 'authonly', when: 'before' });
    const key = idem();
    const pk = await mintKey('4000100011112224');
    const answers = await untilKnown(pk, key, 15_000);
    expect(answers[0]?.status).toBeGreaterThanOrEqual(500);
    const last = answers[answers.length - 1] as Answer;
    expect(last.status).toBe(201);
    expect(last.headers.get('tokengate-reconciled')).toBeNull();
  });
});
