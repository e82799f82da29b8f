import { createMemorySettlementStore, createRedisSettlementStore, settlementsCsv, type Settlement, type SettlementStore } from '../../src/settlements';
import { declaredKeysOnly } from '../support/declared-keys';
import { connectRedis, suiteRedis } from '../support/redis';

/** The settlement store's rules, the same on Redis and in memory (issue 39): kept once, one claim, newest first. */
const { prefix, redis } = suiteRedis('settle-store');
// Its scripts run checked: a key a script touches that its KEYS do not name fails the script (support/declared-keys.ts).
const checked = declaredKeysOnly(connectRedis());
afterAll(() => checked.disconnect());
let n = 0;
const settlement = (batch: string): Settlement => ({
  type: 'settlement', batch, closed_at: '2026-11-27 20:00:00', totals: { sales: '10.00', credits: '0.00', count: 1 },
  counts: { matched: 1, amount_differs: 0, not_ours: 0, missing: 0 }, lines: [{ transaction: `t${batch}`, sale: `t${batch}`, amount: '10.00', gateway_amount: '10.00', kind: 'sale', verdict: 'matched' }],
});

describe.each([
  ['Redis', () => createRedisSettlementStore({ redis, keyPrefix: `${prefix}:${n++}` })],
  ['Redis, every key a script touches declared', () => createRedisSettlementStore({ redis: checked, keyPrefix: `${prefix}:${n++}` })],
  ['memory', () => createMemorySettlementStore()],
] as [string, () => SettlementStore][])('settlement store (%s)', (_name, make) => {
  it('when a batch is marked due, then it is taken once it is due and held back a lease, due again when rescheduled, and gone once done; marking it again keeps its entry', async () => {
    const store = make();
    const t = 1_000_000;
    expect(await store.takeDue(t, 10_000, 10)).toEqual([]);
    await store.markDue('d1', t - 5, t);
    await store.markDue('d2', t, t + 5_000);
    await store.markDue('d1', t + 99, t + 99); // a second webhook changes nothing
    expect(await store.takeDue(t, 10_000, 10)).toEqual([{ batch: 'd1', heardMs: t - 5, tries: 0 }]);
    expect(await store.takeDue(t + 5_000, 10_000, 10)).toEqual([{ batch: 'd2', heardMs: t, tries: 0 }]); // d1 held till t + 10 s
    expect((await store.takeDue(t + 10_000, 10_000, 10)).map((d) => d.batch)).toEqual(['d1']);
    await store.dueAgain({ batch: 'd1', heardMs: t - 5, tries: 1 }, t + 12_000);
    expect(await store.takeDue(t + 12_000, 10_000, 10)).toEqual([{ batch: 'd1', heardMs: t - 5, tries: 1 }]);
    await store.dueDone('d1');
    await store.dueAgain({ batch: 'd1', heardMs: t - 5, tries: 2 }, t); // done meanwhile: not due again
    expect((await store.takeDue(t + 60_000, 10_000, 10)).map((d) => d.batch)).toEqual(['d2']);
  });

  it('when two owners claim one batch, then one holds it; once kept, every claim answers kept and a second save changes nothing', async () => {
    const store = make();
    expect(await store.claim('b1', 'one', 60_000)).toBe('claimed');
    expect(await store.claim('b1', 'two', 60_000)).toBe('busy');
    expect(await store.save(settlement('b1'), 'one', 1000)).toBe(true);
    expect(await store.claim('b1', 'two', 60_000)).toBe('kept');
    const other = { ...settlement('b1'), closed_at: 'changed' };
    expect(await store.save(other, 'two', 1000)).toBe(false);
    expect((await store.get('b1'))?.closed_at).toBe('2026-11-27 20:00:00');
  });

  it('when a kept settlement is amended, then a line of a new transaction is appended, one of a known transaction replaced, the counts recounted, and only what changed is answered', async () => {
    const store = make();
    await store.claim('b3', 'o', 60_000);
    await store.save(settlement('b3'), 'o', Date.now());
    const missing = { transaction: 'lost', sale: 'lost', amount: '5.00', gateway_amount: '0.00', kind: 'sale' as const, verdict: 'missing' as const };
    expect(await store.amend('b3', [missing])).toEqual([missing]);
    expect(await store.amend('b3', [missing])).toEqual([]);
    // A later change to a line (a bank payment returned after its batch: issue 38) replaces it.
    const returned = { transaction: 'tb3', sale: 'tb3', amount: '10.00', gateway_amount: '0.00', kind: 'sale' as const, verdict: 'amount_differs' as const };
    expect(await store.amend('b3', [returned])).toEqual([returned]);
    const kept = await store.get('b3');
    expect(kept?.lines).toEqual([returned, missing]);
    expect(kept?.counts).toEqual({ matched: 0, amount_differs: 1, not_ours: 0, missing: 1 });
    expect((await store.list(undefined, 10)).find((x) => x.batch === 'b3')?.counts).toEqual(kept?.counts);
    expect(await store.amend('nosuch', [missing])).toEqual([]);
  });

  it('when a settlement is kept, then each sale of its lines is found in it, and a bank line under review is listed as open', async () => {
    const store = make();
    const kept = settlement('b4');
    const bank = { transaction: 'tbank4', sale: 'tbank4', amount: '7.00', gateway_amount: '7.00', kind: 'sale' as const, verdict: 'matched' as const, bank: 'open' as const, open_until: '2099-01-01T00:00:00.000Z' };
    await store.claim('b4', 'o', 60_000);
    expect(await store.save({ ...kept, lines: [...kept.lines, bank] }, 'o', Date.now())).toBe(true);
    expect(await store.heldIn(['tb4', 'tbank4', 'elsewhere'])).toEqual(new Map([['tb4', 'b4'], ['tbank4', 'b4']]));
    expect((await store.openBankLines(Date.parse('2099-01-02'), 10)).map((o) => o.line.transaction)).toEqual(['tbank4']);
  });

  it('when two owners ask to sweep at once, then one sweeps; after its sweep ended, none until a day has passed', async () => {
    const store = make();
    const now = Date.now();
    const claimed = await Promise.all([store.claimSweep('one', now - 86_400_000, 60_000), store.claimSweep('two', now - 86_400_000, 60_000)]);
    expect(claimed.filter(Boolean)).toHaveLength(1);
    await store.sweepDone(claimed[0] ? 'one' : 'two', now);
    expect(await store.claimSweep('three', now - 86_400_000, 60_000)).toBe(false);
    expect(await store.claimSweep('three', now + 1, 60_000)).toBe(true);
  });

  it('when a read fails and gives its claim back, then another owner claims it at once', async () => {
    const store = make();
    expect(await store.claim('b2', 'one', 60_000)).toBe('claimed');
    await store.release('b2', 'two'); // not its claim: nothing
    expect(await store.claim('b2', 'two', 60_000)).toBe('busy');
    await store.release('b2', 'one');
    expect(await store.claim('b2', 'two', 60_000)).toBe('claimed');
  });

  it('when settlements are listed, then newest close first, without lines, paged by the last batch; an unknown cursor is an empty page', async () => {
    const store = make();
    const now = Date.now();
    for (const [batch, order] of [['a', now + 3000], ['b', now + 1000], ['c', now + 2000]] as const) {
      await store.claim(batch, 'o', 60_000);
      await store.save(settlement(batch), 'o', order);
    }
    expect((await store.list(undefined, 10)).map((s) => s.batch)).toEqual(['a', 'c', 'b']);
    expect(await store.list(undefined, 1)).toEqual([{ type: 'settlement', batch: 'a', closed_at: '2026-11-27 20:00:00', totals: settlement('a').totals, counts: settlement('a').counts }]);
    expect((await store.list('a', 10)).map((s) => s.batch)).toEqual(['c', 'b']);
    expect(await store.list('nope', 10)).toEqual([]);
    expect(await store.get('nope')).toBeUndefined();
  });
});

describe('settlement CSV', () => {
  it('when a field could start a formula or holds a comma or quote, then it is escaped (a spreadsheet runs nothing)', () => {
    const s = settlement('b');
    s.lines = [{ transaction: '=cmd', gateway_amount: '1.00', kind: 'sale', verdict: 'not_ours' }, { transaction: 'a,"b"', gateway_amount: '2.00', kind: 'refund', verdict: 'not_ours' }];
    const rows = settlementsCsv(s).split('\r\n');
    expect(rows[1]).toBe("b,2026-11-27 20:00:00,'=cmd,,sale,,1.00,not_ours,,,,,");
    expect(rows[2]).toBe('b,2026-11-27 20:00:00,"a,""b""",,refund,,2.00,not_ours,,,,,');
  });
});
