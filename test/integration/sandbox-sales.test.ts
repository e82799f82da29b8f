import { CARDREF_INVALID_ERROR_CODE, TEST_CARDS, startSandbox, type RunningSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';

const FUTURE = '1230';
const raw = (number: string, extra: Record<string, unknown> = {}) => ({ command: 'cc:sale', amount: '10.00', invoice: `inv-${number.slice(-6)}`, creditcard: { number, expiration: FUTURE, cvc: '123', cardholder: 'Test', avs_street: '1 Main', avs_zip: '12345' }, ...extra });

describe('sandbox over HTTP: sales', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ settings: { slowCardScale: 0.02, ratePerMinute: 10_000 } });
  });
  afterAll(() => sb.close());
  beforeEach(() => {
    sb.reset();
    sb.update({ duplicateFolding: false });
  });

  const sale = (body: unknown) => callSandbox(sb.baseUrl, 'POST', 'transactions', { body });

  it.each([...TEST_CARDS.entries()].map(([number, o]) => ({ number, o, kind: o.kind })))('when test card $number is charged, then the outcome is $kind as in gateway-facts.md', async ({ number, o }) => {
    const r = await sale(raw(number));
    expect(r.status).toBe(200);
    const t = r.json as Record<string, unknown>;
    const masked = `${number.slice(0, 4)}${'x'.repeat(number.length - 8)}${number.slice(-4)}`;
    expect(t).toMatchObject({ type: 'transaction', is_duplicate: 'N', invoice: `inv-${number.slice(-6)}`, creditcard: { number: masked }, avs: { result_code: o.avs }, cvc: { result_code: o.cvc } });
    expect(t.key).toMatch(/^[a-z0-9]{15}$/);
    expect(t.refnum).toMatch(/^\d+$/);
    expect(r.text).not.toContain(number);
    if (o.kind === 'approved') expect(t).toMatchObject({ result_code: 'A', result: 'Approved', auth_amount: '10.00', batch: { type: 'batch' } });
    if (o.kind === 'declined') expect(t).toMatchObject({ result_code: 'D', result: 'Declined', authcode: '', ...o.decline });
    if (o.kind === 'partial') expect(t).toMatchObject({ result_code: 'P', auth_amount: o.partialPercent === 50 ? '5.00' : '7.50' });
    if (o.kind !== 'declined') expect(t.authcode).toMatch(/^\w{6}$/);
    const recorded = sb.transactions();
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ refnum: t.refnum, key: t.key, result_code: t.result_code, maskedNumber: masked, delivery: 'delivered', delivered: true, endpointKey: 'v2', cardSource: 'card' });
  });

  it('when a slow card is charged, then the answer waits 5 s × slowCardScale', async () => {
    const started = Date.now();
    await sale(raw('4000000011112226'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
  });

  it('when a stored token is charged as UMCardRef or as creditcard.number + 0000, then the fixture card decides the outcome', async () => {
    const c = sb.fixtures.firstCustomer();
    const [approved, declined, partial] = c.payment_methods.map((m) => sb.fixtures.cardrefFor(c.key, m.key));
    expect((await sale({ command: 'cc:sale', amount: '4.00', UMCardRef: approved })).json).toMatchObject({ result_code: 'A', creditcard: { number: '4000xxxxxxxx2224' } });
    expect((await sale({ command: 'cc:sale', amount: '4.00', creditcard: { number: declined, expiration: '0000' } })).json).toMatchObject({ result_code: 'D', error_code: '10127' });
    expect((await sale({ command: 'cc:sale', amount: '4.01', UMCardRef: partial, amount_detail: { tax: '0.40', tip: '1.00' } })).json).toMatchObject({ result_code: 'P', auth_amount: '2.00' });
    expect(sb.transactions().map((t) => [t.cardSource, t.custkey, t.cardref])).toEqual([
      ['UMCardRef', c.key, approved],
      ['creditcard.number', c.key, declined],
      ['UMCardRef', c.key, partial],
    ]);
  });

  it('when the token is unknown, rotated or expired, then HTTP 200 result E "Invalid card reference" 10142 and nothing is charged', async () => {
    const c = sb.fixtures.firstCustomer();
    const pm = c.payment_methods[0]!;
    const old = sb.fixtures.cardrefFor(c.key, pm.key);
    const fresh = sb.rotateCardRef(c.key, pm.key);
    expect(fresh).not.toBe(old);
    expect(fresh).toMatch(/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/);
    for (const cardref of ['zzzz-zzzz-zzzz-zzzz', old, 'not-a-token']) {
      const r = await sale({ command: 'cc:sale', amount: '1.00', UMCardRef: cardref });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ result_code: 'E', result: 'Error', error: 'Invalid card reference', error_code: CARDREF_INVALID_ERROR_CODE });
    }
    expect((await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}/payment_methods/${pm.key}/cardref`)).json).toMatchObject({ cardref: fresh });
    expect((await sale({ command: 'cc:sale', amount: '1.00', UMCardRef: fresh })).json).toMatchObject({ result_code: 'A' });
    sb.setTokenExpires(c.key, pm.key, '2020-01-31');
    expect((await sale({ command: 'cc:sale', amount: '1.00', UMCardRef: fresh })).json).toMatchObject({ error_code: '10142' });
    expect(sb.transactions()).toHaveLength(1);
    expect(sb.stats().sales).toMatchObject({ processed: 1, errors: 4 });
  });

  it.each([
    { name: 'a card failing Luhn', body: raw('4000100011112225'), code: '10004' },
    { name: 'a 12-digit number', body: raw('400010001111'), code: '10004' },
    { name: 'an expiration in the past', body: raw('4000100011112224', { creditcard: { number: '4000100011112224', expiration: '0120' } }), code: '10007' },
    { name: 'a malformed expiration', body: raw('4000100011112224', { creditcard: { number: '4000100011112224', expiration: '12/30' } }), code: '10006' },
  ])('when the sale has $name, then HTTP 200 result E with error_code $code', async ({ body, code }) => {
    const r = await sale(body);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ result_code: 'E', result: 'Error', error_code: code });
    expect(typeof (r.json as { error: unknown }).error).toBe('string');
    expect(sb.transactions()).toHaveLength(0);
  });

  it.each([
    { name: 'malformed JSON', rawBody: '{"command":', code: 40000 },
    { name: 'an empty body', rawBody: '', code: 40000 },
    { name: 'a JSON array', rawBody: '[1,2]', code: 40001 },
    { name: 'a JSON string', rawBody: '"cc:sale"', code: 40001 },
    { name: 'no command', rawBody: '{"amount":"1.00"}', code: 40002 },
    { name: 'a real command the sandbox does not carry out', rawBody: '{"command":"cash:sale","amount":"1.00"}', code: 40003 },
    { name: 'no amount', rawBody: '{"command":"cc:sale","UMCardRef":"abcd-abcd-abcd-abcd"}', code: 40004 },
    { name: 'amount "abc"', rawBody: '{"command":"cc:sale","amount":"abc","UMCardRef":"abcd-abcd-abcd-abcd"}', code: 40005 },
    { name: 'amount "0"', rawBody: '{"command":"cc:sale","amount":"0","UMCardRef":"abcd-abcd-abcd-abcd"}', code: 40005 },
    { name: 'amount 1.555 as a number', rawBody: '{"command":"cc:sale","amount":1.555,"UMCardRef":"abcd-abcd-abcd-abcd"}', code: 40005 },
    { name: 'amount true', rawBody: '{"command":"cc:sale","amount":true,"UMCardRef":"abcd-abcd-abcd-abcd"}', code: 40005 },
    { name: 'a bad tax', rawBody: '{"command":"cc:sale","amount":"1.00","amount_detail":{"tax":"1.234"},"UMCardRef":"abcd-abcd-abcd-abcd"}', code: 40007 },
    { name: 'no card', rawBody: '{"command":"cc:sale","amount":"1.00"}', code: 40006 },
    { name: 'creditcard without number', rawBody: '{"command":"cc:sale","amount":"1.00","creditcard":{"expiration":"1230"}}', code: 40006 },
  ])('when the body has $name, then HTTP 400 with errorcode $code and nothing is charged', async ({ rawBody, code }) => {
    const r = await callSandbox(sb.baseUrl, 'POST', 'transactions', { rawBody });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ errorcode: code });
    expect(typeof (r.json as { error: unknown }).error).toBe('string');
    expect(Object.keys(r.json as object).sort()).toEqual(['error', 'errorcode']);
    expect(r.text).not.toMatch(/\s+at \S+ \(|\.ts:\d/); // no stack trace
    expect(sb.transactions()).toHaveLength(0);
  });

  it('when the body is over 64 KiB, then 413 in the gateway error shape', async () => {
    const r = await callSandbox(sb.baseUrl, 'POST', 'transactions', { body: { ...raw('4000100011112224'), pad: 'x'.repeat(70_000) } });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ errorcode: 41300 });
    expect(sb.transactions()).toHaveLength(0);
  });

  it('when folding is on and the same sale repeats, then the ORIGINAL answer returns with is_duplicate Y and no new charge', async () => {
    sb.update({ duplicateFolding: true });
    const first = await sale(raw('4000100011112224', { invoice: 'order-77' }));
    const again = await sale(raw('4000100011112224', { invoice: 'order-77' }));
    expect(again.json).toEqual({ ...(first.json as object), is_duplicate: 'Y' });
    const otherAmount = await sale(raw('4000100011112224', { invoice: 'order-77', amount: '11.00' }));
    expect((otherAmount.json as { is_duplicate: string }).is_duplicate).toBe('N');
    expect(sb.transactions()).toHaveLength(2);
    expect(sb.transactions()[0]?.foldedDuplicates).toBe(1);
    expect(sb.stats().sales.foldedDuplicates).toBe(1);
  });

  it('when folding is off (the default), then a repeated sale is charged again', async () => {
    await sale(raw('4000100011112224', { invoice: 'order-78' }));
    const again = await sale(raw('4000100011112224', { invoice: 'order-78' }));
    expect((again.json as { is_duplicate: string }).is_duplicate).toBe('N');
    expect(sb.transactions()).toHaveLength(2);
  });

  it('when refnums are issued over HTTP, then they increase', async () => {
    const a = (await sale(raw('5555444433332226'))).json as { refnum: string };
    const b = (await sale(raw('6011222233332224'))).json as { refnum: string };
    expect(BigInt(b.refnum)).toBeGreaterThan(BigInt(a.refnum));
  });
});
