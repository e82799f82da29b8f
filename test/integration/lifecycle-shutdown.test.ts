import net from 'node:net';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { TEST_JWT_ENV, TEST_JWT_SECRET, token } from '../support/bff';
import { redisUrl, uniquePrefix } from '../support/redis';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { eventually } from '../support/wait';

/**
 * The shutdown sequence of issue 5 item 3 on the real artefact: `node dist/main.js` in production mode, SIGTERM
 * while a sale is in flight or queued for the budget. Production refuses the sandbox's default credentials, so
 * the sandbox runs with its own pair and the service is given the same.
 */
const API_KEY = 'lifecycle-key-0123456789abcdef';
const API_PIN = '864213';
const SLOW_CARD = '4000000011112226';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Card {
  customer: string;
  pm: string;
}
let sandbox: RunningSandbox;
let slow: Card;
let fast: Card;

beforeEach(async () => {
  // A sandbox per test: its X-Rate-Limit counts are per client IP, and an earlier test's calls would show up
  // as phantom use in the next service's budget.
  // (Invoices are base 36: a 13-digit timestamp can pass Luhn and be refused as card data.)
  // The slow card takes 5 s at scale 1: 0.3 keeps the sale in flight ~1.5 s.
  sandbox = await startSandbox({ port: 0, settings: { apiKey: API_KEY, apiPin: API_PIN, ratePerMinute: 100_000, ratePerDay: 1_000_000, slowCardScale: 0.3 } });
  const card = (n: string): Card => {
    const found = sandbox.fixtures.findByNumber(n);
    if (!found) throw new Error(`the sandbox fixtures hold no ${n}`);
    return { customer: found.customer.key, pm: found.method.key };
  };
  slow = card(SLOW_CARD);
  fast = card('4000100011112224');
});
afterEach(() => sandbox.close());

function productionEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    GATEWAY_ALLOW_INSECURE: 'true',
    GATEWAY_BASE_URL: sandbox.baseUrl,
    GATEWAY_API_KEY: API_KEY,
    GATEWAY_API_PIN: API_PIN,
    GATEWAY_TIMEOUT_MS: '5000',
    REDIS_URL: redisUrl(),
    REDIS_KEY_PREFIX: uniquePrefix('life').replace(/[^A-Za-z0-9:_-]/g, '_'),
    ...TEST_JWT_ENV,
    HOST: '127.0.0.1',
    ...extra,
  };
}

function sale(url: string, { customer, pm }: Card, invoice: string): Promise<{ status: number; body: { error?: { code: string } } & Record<string, unknown>; retryAfter: string | null }> {
  const bearer = token({ sub: `life-${invoice}`, custkey: customer, scope: 'sales:create' });
  return fetch(`${url}/v1/sales`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json', 'Idempotency-Key': `idem-${invoice}` },
    body: JSON.stringify({ customer, payment_method: pm, amount: '4.20', invoice }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as never, retryAfter: res.headers.get('retry-after') }));
}

const statusOf = (url: string) => fetch(url).then((r) => r.status, () => 0);

/** Resolves with the connect error code, or 'connected' if the port still accepts. */
function tryConnect(url: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('graceful shutdown of node dist/main.js', () => {
  let proc: ServiceProcess | undefined;
  let passed = false;
  afterEach(async () => {
    // On a failure, what the process said is the first thing to read.
    if (proc && !passed) process.stderr.write(proc.output().slice(-4000));
    passed = false;
    await proc?.stop('SIGKILL');
    proc = undefined;
  });

  test('when SIGTERM arrives during a slow sale, then /readyz turns 503 at once, new connections are refused, the sale completes 201 and the process exits 0', async () => {
    proc = await startServiceProcess(productionEnv({ SHUTDOWN_GRACE_MS: '60000' }));
    const { url, adminUrl } = proc;
    expect(await statusOf(`${adminUrl}/readyz`)).toBe(200);
    const exited = new Promise<number | null>((resolve) => proc?.child.once('exit', (code) => resolve(code)));

    const invoice = `inflight-${Date.now().toString(36)}`;
    const startedAt = Date.now();
    const inFlight = sale(url, slow, invoice);
    await sleep(400); // token read + the sale sent: the slow card now holds it ~1.5 s at the gateway
    proc.child.kill('SIGTERM');
    const signalledAt = Date.now();

    // Readiness flips at once (waited for, not slept on: a busy box delivers the signal late); liveness keeps
    // answering while the sale drains.
    await eventually(async () => (await statusOf(`${adminUrl}/readyz`)) === 503, 10_000, 10);
    expect(await statusOf(`${adminUrl}/healthz`)).toBe(200);
    expect(await tryConnect(url)).toBe('ECONNREFUSED');

    const res = await inFlight;
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ result_code: 'A', invoice });
    expect(Date.now() - startedAt).toBeGreaterThan(1000); // it really was in flight across the signal
    // No liveness check here: with the sale answered, the drain may already have closed everything, the admin
    // port last (a clean CI run once saw it refused by then). Liveness during the drain is checked above.

    expect(await exited).toBe(0);
    // Well before the hard deadline (timeout + grace = 65 s): the sale's keep-alive socket must not hold the close.
    // A ceiling far from both (the drain itself takes the sale's second), so a busy box does not fail it (issue 41:
    // the deadline was 25 s and the ceiling 15 s).
    expect(Date.now() - signalledAt).toBeLessThan(30_000);
    expect(sandbox.transactions().filter((t) => t.invoice === invoice)).toHaveLength(1);
    const log = proc.output();
    expect(log).toContain('"shutting down"');
    expect(log).toContain('"stopped"');
    for (const secret of [API_PIN, API_KEY, TEST_JWT_SECRET]) expect(log).not.toContain(secret);
    passed = true;
  });

  test('when a sale is still queued for the budget after SHUTDOWN_GRACE_MS, then it (and a queued read) is answered 503 unavailable with Retry-After and nothing is charged', async () => {
    // Two calls a minute: the first sale takes both (token read + sale); the second waits ~a minute for a slot.
    proc = await startServiceProcess(
      productionEnv({ SHUTDOWN_GRACE_MS: '500', GATEWAY_RATE_PER_MINUTE: '2', GATEWAY_RATE_WINDOW_MS: '60000', LIMITER_SALE_RESERVED_SLOTS: '0', LIMITER_SALE_MAX_WAIT_MS: '120000', LIMITER_READ_MAX_WAIT_MS: '120000' }),
    );
    const { url } = proc;
    const exited = new Promise<number | null>((resolve) => proc?.child.once('exit', (code) => resolve(code)));
    const first = await sale(url, fast, `first-${Date.now().toString(36)}`);
    expect(first.status).toBe(201);

    const invoice = `queued-${Date.now().toString(36)}`;
    const queued = sale(url, fast, invoice);
    // A token read of another card (a cache miss) queues the same way.
    const other = sandbox.fixtures.paymentMethods(fast.customer).find((p) => p.key !== fast.pm) as { key: string };
    const bearer = token({ sub: 'life-reader', custkey: fast.customer, scope: 'tokens:read' });
    const read = fetch(`${url}/v1/customers/${fast.customer}/payment_methods/${other.key}/token`, { headers: { Authorization: `Bearer ${bearer}` } }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as { error?: { code: string } } }));
    await sleep(300);
    proc.child.kill('SIGTERM');
    const signalledAt = Date.now();

    const res = await queued;
    expect(res.status).toBe(503);
    expect(res.body.error?.code).toBe('unavailable');
    expect(Number(res.retryAfter)).toBeGreaterThan(0);
    const answeredAfter = Date.now() - signalledAt;
    expect(answeredAfter).toBeGreaterThanOrEqual(400);
    // At the grace's end, not after its wait for a slot (up to 120 s): a ceiling a quarter of that (issue 41: 3 s).
    expect(answeredAfter).toBeLessThan(30_000);
    const readRes = await read;
    expect(readRes.status).toBe(503);
    expect(readRes.body.error?.code).toBe('unavailable');
    expect(Number(readRes.retryAfter)).toBeGreaterThan(0);
    expect(await exited).toBe(0);
    expect(sandbox.transactions().filter((t) => t.invoice === invoice)).toHaveLength(0);
    passed = true;
  });
});
