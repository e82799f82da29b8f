import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until just after the start of the next aligned window, so fixed-window tests do not straddle an edge. */
async function alignToWindow(windowMs: number, after = 20): Promise<void> {
  await sleep(windowMs - (Date.now() % windowMs) + after);
}

/**
 * A fixed day window of 86,400,000 ms is the UTC day of the wall clock (the rate windows never follow the sandbox's
 * clock): a test that counts "N of 5/day" must not straddle UTC midnight, where the count starts again at 1.
 */
async function awayFromUtcMidnight(marginMs = 10_000): Promise<void> {
  const left = 86_400_000 - (Date.now() % 86_400_000);
  if (left < marginMs) await sleep(left + 20);
}

describe('sandbox over HTTP: rate limits and X-Rate-Limit', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ settings: { ratePerMinute: 3, ratePerDay: 5, rateWindowMs: 1000, rateDayWindowMs: 86_400_000, endpointKeys: [{ key: 'big', ratePerMinute: 10, ratePerDay: 100 }] } });
  });
  afterAll(() => sb.close());
  beforeEach(async () => {
    await awayFromUtcMidnight();
    sb.reset();
    sb.update({ rateMode: 'fixed', ratePerMinute: 3, ratePerDay: 5, rateWindowMs: 1000, rateDayWindowMs: 86_400_000 });
  });

  it('when calls exceed the per-minute limit in a fixed window, then 429 API Rate Limit Exceed (155) and rejected calls do not count', async () => {
    await alignToWindow(1000);
    const headers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await callSandbox(sb.baseUrl, 'GET', 'customers');
      expect(r.status).toBe(200);
      headers.push(r.headers.get('x-rate-limit') as string);
    }
    expect(headers).toEqual(['1 of 3/min; 1 of 5/day', '2 of 3/min; 2 of 5/day', '3 of 3/min; 3 of 5/day']);
    const limited = await callSandbox(sb.baseUrl, 'GET', 'customers');
    expect(limited.status).toBe(429);
    expect(limited.statusText).toBe('API Rate Limit Exceed');
    expect(limited.json).toEqual({ error: 'API Rate Limit Exceed', errorcode: 155 });
    expect(limited.headers.get('x-rate-limit')).toBe('3 of 3/min; 3 of 5/day');
    expect(sb.stats().endpoints.v2).toMatchObject({ calls: 4, accepted: 3, rateLimited: 1, maxInWindow: 3 });
  });

  it('when the next fixed window starts, then calls are accepted again until the day limit', async () => {
    await alignToWindow(1000);
    for (let i = 0; i < 3; i++) await callSandbox(sb.baseUrl, 'GET', 'customers');
    await alignToWindow(1000);
    expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).headers.get('x-rate-limit')).toBe('1 of 3/min; 4 of 5/day');
    expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).status).toBe(200);
    const dayLimited = await callSandbox(sb.baseUrl, 'GET', 'customers');
    expect(dayLimited.status).toBe(429);
    expect(dayLimited.headers.get('x-rate-limit')).toBe('2 of 3/min; 5 of 5/day');
  });

  it('when fixed windows let a burst straddle the edge, then maxInWindow reports the 2N seen in one span', async () => {
    sb.update({ ratePerDay: 100 });
    await alignToWindow(1000, 1000 - 400); // 400 ms before an edge
    for (let i = 0; i < 3; i++) expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).status).toBe(200);
    await alignToWindow(1000, 5);
    for (let i = 0; i < 3; i++) expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).status).toBe(200);
    expect(sb.stats().endpoints.v2?.maxInWindow).toBe(6);
  });

  it('when mode is sliding, then no span of the window length holds more than N accepted calls', async () => {
    sb.update({ rateMode: 'sliding', ratePerDay: 100 });
    await alignToWindow(1000, 1000 - 400);
    for (let i = 0; i < 3; i++) expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).status).toBe(200);
    await alignToWindow(1000, 5);
    // A new calendar window, but the last 1000 ms already hold 3.
    expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).status).toBe(429);
    await sleep(1000);
    expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).status).toBe(200);
    expect(sb.stats().endpoints.v2).toMatchObject({ maxInWindow: 3, rateLimited: 1 });
  });

  it('when the limit is reached on v2, then a configured endpoint key still answers with its own limits', async () => {
    await alignToWindow(1000);
    for (let i = 0; i < 4; i++) await callSandbox(sb.baseUrl, 'GET', 'customers');
    const big = await callSandbox(`${sb.url}/api/big/`, 'GET', 'customers');
    expect(big.status).toBe(200);
    expect(big.headers.get('x-rate-limit')).toBe('1 of 10/min; 1 of 100/day');
  });

  it('when a call is refused by auth or bad input, then it still counts and carries the header; a 404 does not count', async () => {
    await alignToWindow(1000);
    const badAuth = await callSandbox(sb.baseUrl, 'GET', 'customers', { apiPin: 'nope' });
    expect(badAuth.headers.get('x-rate-limit')).toBe('1 of 3/min; 1 of 5/day');
    const badBody = await callSandbox(sb.baseUrl, 'POST', 'transactions', { rawBody: '{not json' });
    expect(badBody.status).toBe(400);
    expect(badBody.headers.get('x-rate-limit')).toBe('2 of 3/min; 2 of 5/day');
    const notFound = await callSandbox(sb.baseUrl, 'GET', 'nothing-here');
    expect(notFound.headers.get('x-rate-limit')).toBe('2 of 3/min; 2 of 5/day');
    expect(sb.stats().endpoints.v2).toMatchObject({ calls: 3, accepted: 2, unauthorized: 1 });
  });

  it('when settings change over the admin route, then the limits follow', async () => {
    const r = await callSandbox(sb.url, 'POST', '/_sandbox/settings', { auth: false, body: { ratePerMinute: 7 } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ratePerMinute: 7, apiPin: '[redacted]' });
    expect((await callSandbox(sb.baseUrl, 'GET', 'customers')).headers.get('x-rate-limit')).toMatch(/of 7\/min/);
    const bad = await callSandbox(sb.url, 'POST', '/_sandbox/settings', { auth: false, body: { ratePerMinute: -1 } });
    expect(bad.status).toBe(400);
    expect(() => sb.update({ rateMode: 'calendar' as 'fixed' })).toThrow(/rateMode/);
  });
});
