import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PaymentMethod } from '../../src/gateway/types';
import { createRedisSaleRecords } from '../../src/sale-records';
import { createRedisSettlementStore, type Settlement } from '../../src/settlements';
import { createRedisWalletStore } from '../../src/wallet/redis-wallet-store';
import { createRedisWebhookStore } from '../../src/webhooks/redis-webhook-store';
import { connectRedis, suiteRedis } from '../support/redis';
import { otherTestsAllRan } from '../support/file-runs';
import { checkedSites, sameSlotOnly } from '../support/same-slot';

/**
 * Every MULTI and pipeline under src/ keeps its keys in one hash slot (Redis Cluster refuses a cross-slot MULTI
 * with CROSSSLOT; ioredis' Cluster client a pipeline spread over nodes): each store that opens one runs it here
 * through the checking client (test/support/same-slot.ts), and the last test fails for any `.multi(` or
 * `.pipeline(` under src/ that did not run checked, so a new transaction cannot skip the check.
 */
const { prefix } = suiteRedis('one-slot');
const checked = sameSlotOnly(connectRedis());
afterAll(() => checked.disconnect());
const unique = (name: string) => `${name}${randomBytes(4).toString('hex')}`;

describe('the check itself', () => {
  it('when a MULTI touches keys of two slots, then it fails and writes nothing; under one hash tag, the same MULTI runs', async () => {
    const [a, b] = [`${prefix}:${unique('a')}`, `${prefix}:${unique('b')}`];
    await expect(checked.multi().set(a, '1').set(b, '2').exec()).rejects.toThrow(/^CROSSSLOT /);
    expect(await checked.exists(a, b)).toBe(0);
    const tag = `{${prefix}:${unique('t')}}`;
    expect(await checked.multi().set(`${tag}:a`, '1').set(`${tag}:b`, '2').exec()).toEqual([[null, 'OK'], [null, 'OK']]);
  });

  it('when a pipeline touches keys of two slots, then it fails too', async () => {
    const pipeline = checked.pipeline();
    pipeline.get(`${prefix}:${unique('a')}`);
    pipeline.get(`${prefix}:${unique('b')}`);
    await expect(pipeline.exec()).rejects.toThrow(/^CROSSSLOT /);
  });
});

describe('webhook store (every transaction in one slot)', () => {
  const store = createRedisWebhookStore({ redis: checked, keyPrefix: `${prefix}:${unique('wh')}` });

  it('when a sale is kept as evidence and a bank step is kept early and dropped, then each answers as stored', async () => {
    const invoice = unique('inv');
    await store.keepSale(invoice, { key: 'tx1' });
    expect(await store.salesByInvoice(invoice)).toEqual([{ key: 'tx1' }]);
    expect(await store.keepEarlyAch('tx1', 'submitted', 'B')).toBe(true);
    expect(await store.earlyAchOf('tx1')).toEqual({ submitted: 'B' });
    await store.dropEarlyAch('tx1');
    expect(await store.earlyAchSales(10)).toEqual([]);
  });
});

describe('wallet store (every transaction in one slot)', () => {
  const store = createRedisWalletStore({ redis: checked, keyPrefix: `${prefix}:${unique('w')}` });

  it('when a customer\'s view is forgotten and a method flagged closed, then each answers as stored', async () => {
    const c = unique('cust');
    const method = { type: 'customerpaymentmethod', key: 'pm1', method_name: 'one', pay_type: 'cc' } as unknown as PaymentMethod;
    await store.putMethod(c, 'pm1', method, true);
    await store.forget(c);
    await store.flagClosed(c, 'pm1');
    expect(await store.isClosed(c, 'pm1')).toBe(true);
  });
});

describe('sale records (every transaction in one slot)', () => {
  const records = createRedisSaleRecords({ redis: checked, keyPrefix: `${prefix}:${unique('sr')}` });

  it('when a sale is voided, then its record says so', async () => {
    const sale = unique('tx');
    await records.create(sale, { customer: 'c1', state: 'captured', authorizedCents: 1000, capturedCents: 1000, refundedCents: 0, pendingRefundCents: 0 });
    await records.markVoided(sale);
    expect((await records.get(sale))?.state).toBe('voided');
  });
});

describe('settlement store (every pipeline in one slot)', () => {
  const keyPrefix = `${prefix}:${unique('st')}`;
  const store = createRedisSettlementStore({ redis: checked, keyPrefix });
  const line = (sale: string) => ({ transaction: sale, sale, amount: '1.00', gateway_amount: '1.00', kind: 'sale' as const, verdict: 'matched' as const });
  const settlement = (batch: string): Settlement => ({
    type: 'settlement', batch, closed_at: '2026-11-27 20:00:00', totals: { sales: '2.00', credits: '0.00', count: 2 },
    counts: { matched: 2, amount_differs: 0, not_ours: 0, missing: 0 }, lines: [line(`${batch}s1`), line(`${batch}s2`)],
  });

  it('when two settlements are kept, then the list reads their summaries and the backfill indexes their sales', async () => {
    for (const batch of ['b1', 'b2']) {
      await store.claim(batch, 'o', 60_000);
      expect(await store.save(settlement(batch), 'o', Date.now())).toBe(true);
    }
    expect((await store.list(undefined, 10)).map((s) => s.batch).sort()).toEqual(['b1', 'b2']);
    expect(await store.backfillHeld()).toBe(2);
    expect(await store.heldIn(['b1s1', 'b2s2'])).toEqual(new Map([['b1s1', 'b1'], ['b2s2', 'b2']]));
  });

  it('when a closed batch is due, taken, due again and done, then each step answers as stored', async () => {
    const now = Date.now();
    await store.markDue('b3', now, now);
    expect(await store.takeDue(now, 10_000, 10)).toEqual([{ batch: 'b3', heardMs: now, tries: 0 }]);
    await store.dueAgain({ batch: 'b3', heardMs: now, tries: 1 }, now);
    expect(await store.takeDue(now, 10_000, 10)).toEqual([{ batch: 'b3', heardMs: now, tries: 1 }]);
    await store.dueDone('b3');
    expect(await store.takeDue(now + 60_000, 10_000, 10)).toEqual([]);
  });
});

/** Transactions the check cannot run, each with why (none today): keep it short. */
const EXEMPT: Readonly<Record<string, string>> = {};

/** Every `.multi(` and `.pipeline(` under src/ (the sandbox aside: it keeps no state in Redis), as `src/…:line`. */
function transactionSites(): string[] {
  const src = path.join(__dirname, '../../src');
  const sites: string[] = [];
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.startsWith(`sandbox${path.sep}`)) continue;
    readFileSync(path.join(src, file), 'utf8').split('\n').forEach((text, i) => {
      if (/\.(multi|pipeline)\(/.test(text)) sites.push(`src/${file.split(path.sep).join('/')}:${i + 1}`);
    });
  }
  return sites.sort();
}

// Last in this file: the suites above have run every transaction they open. Judged only when they all ran (a `-t`
// filter or an `.only` leaves some out: test/support/file-runs.ts).
describe('every MULTI and pipeline under src/ runs checked', () => {
  it('when the suites above have run, then each .multi( and .pipeline( under src/ went through the checking client (or is exempt, with a reason)', () => {
    if (!otherTestsAllRan()) return void process.stdout.write('transactions-one-slot: not every test of the file ran (a filter): the transactions\' coverage is not judged\n');
    const sites = transactionSites();
    expect(sites.length).toBeGreaterThan(0);
    expect(sites.filter((s) => !(s in EXEMPT) && !checkedSites().has(s))).toEqual([]);
    expect(Object.keys(EXEMPT).filter((s) => !sites.includes(s) || checkedSites().has(s))).toEqual([]);
  });
});
