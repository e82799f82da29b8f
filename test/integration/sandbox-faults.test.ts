import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';
import { eventually } from '../support/wait';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const body = (invoice: string) => ({ command: 'cc:sale', amount: '5.00', invoice, creditcard: { number: '4000100011112224', expiration: '1230' } });

describe('sandbox over HTTP: fault injection', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ settings: { ratePerMinute: 10_000 } });
  });
  afterAll(() => sb.close());
  beforeEach(() => {
    sb.reset();
    sb.update({ latencyMs: 0, jitterMs: 0 });
  });

  const sale = (invoice: string, timeoutMs?: number) => callSandbox(sb.baseUrl, 'POST', 'transactions', { body: body(invoice), ...(timeoutMs ? { timeoutMs } : {}) });

  it.each([500, 502, 503] as const)('when a 5xx (%s) fault is queued, then the gateway error shape comes back and nothing is charged', async (status) => {
    sb.faults.next({ kind: '5xx', match: 'sale', status });
    const r = await sale('f-5xx');
    expect(r.status).toBe(status);
    expect(r.json).toMatchObject({ errorcode: expect.any(Number), error: expect.any(String) });
    expect(r.headers.get('x-rate-limit')).not.toBeNull();
    expect(sb.transactions()).toHaveLength(0);
    expect((await sale('f-after')).status).toBe(200); // one-shot
  });

  it('when a hang fault hits a sale, then it is charged, never answered, and recorded as lost once the client gives up', async () => {
    sb.faults.next({ kind: 'hang', match: 'sale' });
    await expect(sale('f-hang', 300)).rejects.toThrow();
    await sleep(50);
    const [t] = sb.transactions();
    expect(t).toMatchObject({ invoice: 'f-hang', result_code: 'A', delivery: 'lost', delivered: false });
    expect(sb.stats().sales).toMatchObject({ processed: 1, lostAnswers: 1 });
  });

  it('when a reset fault hits a sale, then the body is read and charged and the connection is reset without an answer', async () => {
    sb.faults.next({ kind: 'reset', match: 'sale' });
    await expect(sale('f-reset')).rejects.toThrow();
    // The sandbox records the lost delivery once its reset is done: waited for, not slept on.
    await eventually(() => sb.transactions().some((t) => t.invoice === 'f-reset' && t.delivery === 'lost'));
    expect(sb.transactions()).toMatchObject([{ invoice: 'f-reset', delivery: 'lost', delivered: false }]);
  });

  it('when a garbage fault hits a sale, then it is charged and answered 200 with a body that is not JSON', async () => {
    sb.faults.next({ kind: 'garbage', match: 'sale' });
    const r = await sale('f-garbage');
    expect(r.status).toBe(200);
    expect(r.json).toBeUndefined();
    expect(sb.transactions()).toMatchObject([{ invoice: 'f-garbage', delivery: 'garbled', delivered: false }]);
    expect(sb.stats().sales.garbledAnswers).toBe(1);
  });

  it('when a 429 fault is queued, then the rate-limit error comes back without processing or counting the call', async () => {
    sb.faults.next({ kind: '429', match: 'sale', count: 2 });
    for (let i = 0; i < 2; i++) {
      const r = await sale(`f-429-${i}`);
      expect(r.status).toBe(429);
      expect(r.statusText).toBe('API Rate Limit Exceed');
      expect(r.json).toEqual({ error: 'API Rate Limit Exceed', errorcode: 155 });
    }
    expect((await sale('f-429-ok')).headers.get('x-rate-limit')).toMatch(/^1 of /);
    expect(sb.transactions().map((t) => t.invoice)).toEqual(['f-429-ok']);
    expect(sb.stats().endpoints.v2).toMatchObject({ injected429: 2, rateLimited: 0, accepted: 1 });
  });

  it('when a fault matches cardref only, then sales and lists pass and the next cardref read takes it', async () => {
    sb.faults.next({ kind: '5xx', match: 'cardref' });
    const c = sb.fixtures.firstCustomer();
    expect((await sale('f-match')).status).toBe(200);
    expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).status).toBe(200);
    expect((await callSandbox(sb.baseUrl, 'GET', `customers/${c.key}/payment_methods/${c.payment_methods[0]!.key}/cardref`)).status).toBe(503);
    expect(sb.faults.pending()).toEqual([]);
  });

  it('when a hang hits a read and the sandbox closes, then close() returns promptly', async () => {
    const local = await startSandbox();
    local.faults.next({ kind: 'hang', match: 'customers' });
    const pending = callSandbox(local.baseUrl, 'GET', 'customers', { timeoutMs: 100_000 }).catch((e: unknown) => e);
    await sleep(100);
    const started = Date.now();
    await local.close();
    // Not held until the client's 100 s timeout (a safety-net ceiling, far from it: issue 41).
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await pending).toHaveProperty('message'); // the client saw the connection end
  });

  it('when error rates are set, then roughly that share of calls fails, and clear() stops it', async () => {
    sb.faults.set({ errorRate: 0.5, match: 'customers' });
    let failed = 0;
    for (let i = 0; i < 60; i++) if ((await callSandbox(sb.baseUrl, 'GET', 'customers')).status >= 500) failed++;
    expect(failed).toBeGreaterThan(10);
    expect(failed).toBeLessThan(50);
    expect((await sale('f-rate')).status).toBe(200); // match limits the rates to customers
    sb.faults.clear();
    for (let i = 0; i < 10; i++) expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).status).toBe(200);
  });

  it('when latency is set, then every API answer waits at least that long', async () => {
    sb.faults.set({ latencyMs: 120 });
    expect(sb.settings.latencyMs).toBe(120);
    const started = Date.now();
    await callSandbox(sb.baseUrl, 'GET', 'customers');
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
  });

  it('when faults are driven over the admin routes, then they act like the API and show in stats and transactions', async () => {
    const admin = (method: string, path: string, b?: unknown) => callSandbox(sb.url, method, `/_sandbox/${path}`, { auth: false, ...(b === undefined ? {} : { body: b }) });
    expect((await admin('POST', 'faults', { kind: 'hang', match: 'sale' })).json).toMatchObject({ pending: [{ kind: 'hang', match: 'sale', count: 1 }] });
    await expect(sale('a-hang', 200)).rejects.toThrow();
    await sleep(50);
    const txs = (await admin('GET', 'transactions')).json as { invoice: string; delivery: string }[];
    expect(txs).toMatchObject([{ invoice: 'a-hang', delivery: 'lost' }]);
    const stats = (await admin('GET', 'stats')).json as { sales: { lostAnswers: number }; faults: { hang: number } };
    expect(stats).toMatchObject({ sales: { lostAnswers: 1 }, faults: { hang: 1 } });
    expect((await admin('POST', 'faults', { errorRate: 1 })).status).toBe(200);
    expect((await sale('a-5xx')).status).toBeGreaterThanOrEqual(500);
    expect((await admin('DELETE', 'faults')).status).toBe(204);
    expect((await sale('a-ok')).status).toBe(200);
    expect((await admin('POST', 'faults', { kind: 'meteor' })).status).toBe(400);
    expect((await admin('POST', 'reset')).status).toBe(204);
    expect((await admin('GET', 'transactions')).json).toEqual([]);
  });
});
