import { randomBytes } from 'node:crypto';
import type { Service } from '../../src/compose';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';

/**
 * A sale whose answer was lost, whose record another path made before the reconciler found it (src/reconcile/README.md,
 * "How a write is found"). tokengate keeps a sale record beside its own writes' (checkout's, the reconciler's) when it
 * reads a sale it has none of: an internal service (`customers:any`) reading `GET /v1/sales/{key}` or acting on the
 * sale (sale-lookup.ts, `seed`). Such a record names no write. The reconciler skipped every transaction with a record
 * naming another write or none, so the seeded one read as "another key's": the write was proven absent, its key freed,
 * and the caller's retry charged the shopper a second time. The sandbox's ledger is the judge.
 * The reconciler's passes are driven by hand: the order (lost answer, seed, look, retry) is the one under test.
 */
const MAX_PROCESSING_MS = 300;
const run = randomBytes(3).toString('hex');
let n = 0;
let bff: Bff;
let svc: Service;
let customer: string;
let paymentMethod: string;

beforeAll(async () => {
  bff = await startBff({
    env: { GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '100', RECONCILE_MAX_PROCESSING_MS: String(MAX_PROCESSING_MS) },
  });
  svc = bff.service as Service;
  // Driven by hand below: no reconciler pass runs by itself.
  await svc.reconciler.stop();
  const found = bff.sandbox.fixtures.findByNumber('4000100011112224');
  if (!found) throw new Error('fixture card missing');
  customer = found.customer.key;
  paymentMethod = found.method.key;
});
afterAll(() => bff?.stop());

interface Answer {
  status: number;
  headers: Headers;
  body: { key?: string; customer?: string; payment_method?: string; error?: { code?: string }; [field: string]: unknown };
}

const shopper = () => token({ sub: `seeded-${run}`, custkey: customer, scope: 'sales:create sales:read refunds:create' });
/** A back office: reaches any customer's sales (the only callers whose read of an unknown sale asks the gateway). */
const office = () => token({ sub: `seeded-office-${run}`, scope: 'customers:any sales:read refunds:create' });

async function call(method: string, path: string, bearer: string, body?: unknown, key?: string): Promise<Answer> {
  const res = await fetch(`${bff.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json' } : {}), ...(key ? { 'idempotency-key': key } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

const approved = (invoice: string) => bff.sandbox.transactions().filter((t) => t.invoice === invoice && t.result_code === 'A');

/** A sale the gateway charged and whose answer was then lost (a hang past GATEWAY_TIMEOUT_MS): outcome unknown. */
async function lostSale(): Promise<{ key: string; body: Record<string, unknown>; invoice: string; charged: string }> {
  n += 1;
  const invoice = `seed.${run}.${n}`;
  const sale = { key: `seed-${run}-${n}`, body: { customer, payment_method: paymentMethod, amount: `${20 + n}.00`, invoice }, invoice };
  bff.sandbox.faults.next({ kind: 'hang', match: 'sale', when: 'after' });
  expect((await call('POST', '/v1/sales', shopper(), sale.body, sale.key)).status).toBe(504);
  expect((await call('POST', '/v1/sales', shopper(), sale.body, sale.key)).body.error?.code).toBe('outcome_unknown');
  const charged = approved(invoice);
  expect(charged).toHaveLength(1);
  return { ...sale, charged: charged[0]?.key as string };
}

/** Reconciler passes by hand, past the longest processing time, until the key answers something else than outcome_unknown. */
async function retryUntilKnown(sale: { key: string; body: Record<string, unknown> }): Promise<Answer> {
  let answer: Answer | undefined;
  await eventually(async () => {
    await svc.reconciler.runOnce();
    answer = await call('POST', '/v1/sales', shopper(), sale.body, sale.key);
    return !(answer.status === 409 && answer.body.error?.code === 'outcome_unknown');
  });
  return answer as Answer;
}

describe('a sale whose answer was lost and whose record another path made first', () => {
  test('when a back office reads the sale before the reconciler looks, then the reconciler still finds it as the write\'s own: the retry replays that one charge', async () => {
    const sale = await lostSale();
    // The back office learns of the charge (the gateway's console, its own webhook receiver) and reads it: tokengate
    // has no record of it, asks the gateway, and keeps one from then on.
    const read = await call('GET', `/v1/sales/${sale.charged}`, office());
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ key: sale.charged, customer });
    await new Promise((r) => setTimeout(r, MAX_PROCESSING_MS + 50));

    const final = await retryUntilKnown(sale);
    expect(approved(sale.invoice)).toHaveLength(1);
    expect(final.status).toBe(201);
    expect(final.headers.get('tokengate-reconciled')).toBe('true');
    expect(final.body).toMatchObject({ key: sale.charged, customer, invoice: sale.invoice });
    // The record is the write's now: what only the write knew (the payment method charged) is on the sale's view.
    const mine = await call('GET', `/v1/sales/${sale.charged}`, shopper());
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ key: sale.charged, payment_method: paymentMethod });
  });

  test('when a back office refunds part of the sale before the reconciler looks, then the retry replays the one charge and the refund stands', async () => {
    const sale = await lostSale();
    const refund = await call('POST', `/v1/sales/${sale.charged}/refunds`, office(), { amount: '1.00' }, `seed-refund-${run}-${n}`);
    expect(refund.status).toBe(201);
    await new Promise((r) => setTimeout(r, MAX_PROCESSING_MS + 50));

    const final = await retryUntilKnown(sale);
    expect(approved(sale.invoice)).toHaveLength(1);
    expect(final.status).toBe(201);
    expect(final.body).toMatchObject({ key: sale.charged });
    const mine = await call('GET', `/v1/sales/${sale.charged}`, shopper());
    expect(mine.body).toMatchObject({ key: sale.charged, amount_refunded: '1.00' });
  });
});
