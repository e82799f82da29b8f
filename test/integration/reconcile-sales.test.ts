import { randomBytes } from 'node:crypto';
import { startBff, token, type Bff } from '../support/bff';

/**
 * Unknown sale outcomes resolved from the gateway's own records (issue 12, contract guarantee 6), against the
 * sandbox, whose ledger is the judge of "charged once". The reconciler's timings are shrunk: it looks every
 * 100 ms and counts a write absent for good 1.5 s after its outcome became unknown.
 */

const MAX_PROCESSING_MS = 1500;
let bff: Bff;
let customer: string;
let paymentMethod: string;
const run = randomBytes(3).toString('hex');
let n = 0;

beforeAll(async () => {
  bff = await startBff({
    env: {
      GATEWAY_TIMEOUT_MS: '400',
      RECONCILE_INTERVAL_MS: '100',
      RECONCILE_RETRY_MS: '200',
      RECONCILE_MAX_PROCESSING_MS: String(MAX_PROCESSING_MS),
    },
  });
  const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
  if (!found) throw new Error('fixture card missing');
  customer = found.customer.key;
  paymentMethod = found.method.key;
});
afterAll(async () => {
  await bff?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function newSale(over: Record<string, unknown> = {}) {
  n += 1;
  return { key: `rec-${run}-${n}`, body: { customer, payment_method: paymentMethod, amount: `${10 + n}.00`, invoice: `rec.${run}.${n}`, ...over } };
}

/** The fields these tests read of a sale or an error answer. */
interface SaleAnswer {
  key?: string;
  error?: { code?: string };
  [field: string]: unknown;
}

async function post(sale: { key: string; body: Record<string, unknown> }) {
  const bearer = token({ sub: `reconcile-${run}`, custkey: customer, scope: 'sales:create sales:read' });
  const res = await fetch(`${bff.url}/v1/sales`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': sale.key },
    body: JSON.stringify(sale.body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as SaleAnswer };
}

/** Retries with the same key until the answer is no longer outcome_unknown, honouring Retry-After. */
async function untilKnown(sale: { key: string; body: Record<string, unknown> }, withinMs = 10_000) {
  const until = Date.now() + withinMs;
  for (;;) {
    const answer = await post(sale);
    if (answer.status !== 409 || answer.body.error?.code !== 'outcome_unknown' || Date.now() > until) return answer;
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    await sleep(100);
  }
}

const charges = (invoice: unknown) => bff.sandbox.transactions().filter((t) => t.invoice === invoice);

describe('a sale whose answer never came', () => {
  test('when the gateway charged it and then hung, then the key completes with the real sale, replayed as reconciled', async () => {
    const sale = newSale();
    bff.sandbox.faults.next({ kind: 'hang', match: 'sale', when: 'after' });
    const first = await post(sale);
    expect(first.status).toBe(504);
    expect((await post(sale)).body.error?.code).toBe('outcome_unknown');

    const final = await untilKnown(sale);
    expect(final.status).toBe(201);
    expect(final.headers.get('tokengate-reconciled')).toBe('true');
    expect(final.headers.get('idempotent-replayed')).toBe('true');
    const charged = charges(sale.body.invoice);
    expect(charged).toHaveLength(1);
    expect(final.body).toMatchObject({ key: charged[0]?.key, result_code: 'A', invoice: sale.body.invoice, status: 'pending_settlement', customer });
    // The one sale shape: what a fresh answer carries (the payment method, verification results, is_duplicate),
    // and exactly what a GET right after reads.
    expect(final.body).toMatchObject({ payment_method: paymentMethod, is_duplicate: 'N', avs: { result_code: 'YYY' }, cvc: { result_code: 'M' }, amount: sale.body.amount });
    const read = await fetch(`${bff.url}/v1/sales/${final.body.key}`, { headers: { authorization: `Bearer ${token({ sub: `reconcile-${run}`, custkey: customer, scope: 'sales:read' })}` } });
    expect(read.status).toBe(200);
    expect(final.body).toEqual(await read.json());
    // The log says which key was resolved how, and carries no card number.
    const line = bff.logs().split('\n').find((l) => l.includes(sale.key) && l.includes('resolved from the gateway records'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({ idempotency_key: sale.key, operation: 'sale', resolution: 'found', transaction: charged[0]?.key });
    expect(bff.logs()).not.toMatch(/4000\D?1000\D?1111\D?2224/);
  });

  test('when the gateway never got it (5xx before processing), then after the longest processing time the key is released and a retry charges once', async () => {
    const sale = newSale();
    bff.sandbox.faults.next({ kind: '5xx', match: 'sale', when: 'before', status: 503 });
    const first = await post(sale);
    expect(first.status).toBe(502);
    const pending = await post(sale);
    expect(pending.body.error?.code).toBe('outcome_unknown');
    // The reconciler found nothing at once and will look again when a slow processor would have recorded it.
    expect(Number(pending.headers.get('retry-after'))).toBeLessThanOrEqual(Math.ceil(MAX_PROCESSING_MS / 1000) + 1);

    const final = await untilKnown(sale);
    expect(final.status).toBe(201);
    expect(final.headers.get('tokengate-reconciled')).toBeNull();
    expect(charges(sale.body.invoice)).toHaveLength(1);
  });

  test('when a declined sale reset the connection, then the retry replays the decline (402) and nothing was charged', async () => {
    const declined = bff.sandbox.fixtures.findByNumber('4000300011112220');
    if (!declined) throw new Error('declining fixture card missing');
    const sale = newSale({ payment_method: declined.method.key });
    bff.sandbox.faults.next({ kind: 'reset', match: 'sale', when: 'after' });
    expect([502, 504]).toContain((await post(sale)).status);
    const final = await untilKnown(sale);
    expect(final.status).toBe(402);
    expect(final.body.error?.code).toBe('card_declined');
    expect(final.headers.get('tokengate-reconciled')).toBe('true');
    expect(charges(sale.body.invoice).filter((t) => t.result_code !== 'D')).toHaveLength(0);
  });

  test('when two keys sent the same invoice and amount and only one was charged, then only one key gets the charge', async () => {
    const invoice = `shared.${run}`;
    const a = newSale({ invoice, amount: '77.00' });
    const b = newSale({ invoice, amount: '77.00' });
    bff.sandbox.faults.next({ kind: 'hang', match: 'sale', when: 'after' });
    await post(a);
    bff.sandbox.faults.next({ kind: 'hang', match: 'sale', when: 'before' });
    await post(b);
    const [fa, fb] = await Promise.all([untilKnown(a), untilKnown(b)]);
    const statuses = [fa, fb].map((f) => f.status).sort();
    expect(statuses).toEqual([201, 201]);
    expect([fa, fb].filter((f) => f.headers.get('tokengate-reconciled') === 'true')).toHaveLength(1);
    expect(charges(invoice)).toHaveLength(2); // the found one, and the released key's retry
    expect(fa.body.key).not.toBe(fb.body.key);
  });
});
