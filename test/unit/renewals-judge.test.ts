/**
 * The renewals bench's judge (bench/renewals/judge.js) is what makes `npm run bench:renewals` fail: these check
 * that it sees a period charged twice, a charge on a removed card or after a cancel, a hard decline retried on the
 * same card, and that it measures lateness and spill from the ledger (the untried counted late until the end),
 * without crying wolf on a clean month.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
export {};
interface Tx { endpointKey: string; recurring?: boolean; invoice: string; time: number; result_code: string; pmkey?: string; key: string }
interface Sub { key: string; anchorMs: number; pmkey: string; kind: string; canceledAtMs?: number }
const { judgeRenewals, dueOf } = require('../../bench/renewals/judge') as {
  judgeRenewals(input: { transactions: Tx[]; endpointKey: string; subs: Map<string, Sub>; removed: Map<string, number>; endMs: number }): {
    periods_charged_twice: number; charges_on_removed_cards: number; charges_after_cancel: number; hard_declines_retried_on_same_card: number;
    periods_never_tried: number; late_hours: { p50: number | null; p99: number | null }; spilled_days: Record<string, number>;
  };
  dueOf(anchorMs: number, n: number): number;
};

const H = 3_600_000;
const D = 24 * H;
const m1 = Date.UTC(2026, 11, 1);
let seq = 0;
const tx = (invoice: string, time: number, result = 'A', pmkey = 'p0'): Tx => ({ endpointKey: 'v2', recurring: true, invoice, time, result_code: result, pmkey, key: `t${(seq += 1)}` });
const month = (transactions: Tx[], subs: [string, Sub][], removed: [string, number][] = []) =>
  judgeRenewals({ transactions, endpointKey: 'v2', subs: new Map(subs), removed: new Map(removed), endMs: m1 + 3 * D });

test('when every period is charged once, on time, then every zero target is 0 and nothing spilled', () => {
  const v = month([tx('a-1', m1 + H), tx('b-1', m1 + D + 2 * H, 'A', 'p1')], [['a', { key: 's1', anchorMs: m1, pmkey: 'p0', kind: 'plain' }], ['b', { key: 's2', anchorMs: m1 + D, pmkey: 'p1', kind: 'plain' }]]);
  expect(v).toMatchObject({ periods_charged_twice: 0, charges_on_removed_cards: 0, charges_after_cancel: 0, hard_declines_retried_on_same_card: 0, periods_never_tried: 0, spilled_days: {} });
  expect(v.late_hours.p99).toBe(2);
});

test('when a period is approved twice, a removed card is charged after its removal, a canceled one after its cancel, and a hard decline is retried, then each is counted', () => {
  const v = month([
    tx('a-1', m1 + H), tx('a-1', m1 + 2 * H), // twice
    tx('b-1', m1 + 5 * H, 'A', 'p1'), // after p1's removal at +4 h
    tx('c-1', m1 + D + H, 'A', 'p2'), // after the cancel at +1 h
    tx('d-1', m1 + H, 'D', 'p3'), tx('d-1', m1 + 2 * H, 'D', 'p3'), // a hard decline tried again
  ], [
    ['a', { key: 's1', anchorMs: m1, pmkey: 'p0', kind: 'plain' }],
    ['b', { key: 's2', anchorMs: m1, pmkey: 'p1', kind: 'plain' }],
    ['c', { key: 's3', anchorMs: m1 + D, pmkey: 'p2', kind: 'plain', canceledAtMs: m1 + H }],
    ['d', { key: 's4', anchorMs: m1, pmkey: 'p3', kind: 'hard' }],
  ], [['p1', m1 + 4 * H]]);
  expect(v).toMatchObject({ periods_charged_twice: 1, charges_on_removed_cards: 1, charges_after_cancel: 1, hard_declines_retried_on_same_card: 1 });
});

test('when a period due on the 1st is first tried on the 2nd and another is never tried, then the 1st spilled and the untried one is late until the end', () => {
  const v = month([tx('a-1', m1 + D + H)], [['a', { key: 's1', anchorMs: m1, pmkey: 'p0', kind: 'plain' }], ['b', { key: 's2', anchorMs: m1, pmkey: 'p1', kind: 'plain' }]]);
  expect(v.spilled_days).toEqual({ '2026-12-01': 1 });
  expect(v.periods_never_tried).toBe(1);
  expect(v.late_hours.p99).toBe(72);
});

test('a month anchored on the 31st falls due on the last day of a shorter month', () => {
  expect(new Date(dueOf(Date.UTC(2027, 0, 31), 1)).toISOString().slice(0, 10)).toBe('2027-02-28');
  expect(new Date(dueOf(Date.UTC(2027, 0, 31), 2)).toISOString().slice(0, 10)).toBe('2027-03-31');
});

const { judgeCheckouts } = require('../../bench/renewals/judge') as {
  judgeCheckouts(samples: { side: string; ms: number; status: number; startedAt: number; answeredAt: number }[], windows?: { from: number; to: number }[]): Record<'with_renewals' | 'without_renewals', {
    count: number; p99_ms: number | null; max_ms: number | null; outside_faults: { count: number; p99_ms: number | null; max_ms: number | null; in_windows: number };
  }>;
};

test('when a checkout is in flight during the kill\'s window, then it counts overall but not outside the window, on both sides alike', () => {
  const sample = (side: string, startedAt: number, ms: number) => ({ side, ms, status: 201, startedAt, answeredAt: startedAt + ms });
  const samples = [];
  for (let i = 0; i < 100; i++) samples.push(sample('with_renewals', i * 1000, 80), sample('without_renewals', i * 1000, 70));
  // The kill at 50.5 s, the replica back and its lease over at 60 s: the checkout started at 50 s waited out the lease,
  // the one started before the kill and answered inside it (50.45 s to 50.55 s) and those started within it are left out.
  samples.push(sample('with_renewals', 50_450, 66_000), sample('without_renewals', 50_450, 70));
  const c = judgeCheckouts(samples, [{ from: 50_500, to: 60_000 }]);
  expect(c.with_renewals.count).toBe(101);
  expect(c.with_renewals.max_ms).toBe(66_000);
  expect(c.with_renewals.outside_faults).toMatchObject({ count: 91, in_windows: 10, p99_ms: 80, max_ms: 80 });
  expect(c.without_renewals.outside_faults).toMatchObject({ count: 91, in_windows: 10, max_ms: 70 });
  // A checkout answered before the window or started after it stays in.
  expect(judgeCheckouts([sample('with_renewals', 0, 50_400)], [{ from: 50_500, to: 60_000 }]).with_renewals.outside_faults.count).toBe(1);
  expect(judgeCheckouts([sample('with_renewals', 60_000, 10)], [{ from: 50_500, to: 60_000 }]).with_renewals.outside_faults.count).toBe(1);
});

test('with no window, every checkout is outside one', () => {
  const c = judgeCheckouts([{ side: 'with_renewals', ms: 5, status: 201, startedAt: 0, answeredAt: 5 }]);
  expect(c.with_renewals.outside_faults).toMatchObject({ count: 1, in_windows: 0, p99_ms: 5 });
});

test('when a period falls due and its card is removed or its subscription canceled before it is reached, then it is neither untried nor late past the stop', () => {
  const v = month([], [
    ['a', { key: 's1', anchorMs: m1, pmkey: 'p0', kind: 'plain' }],
    ['b', { key: 's2', anchorMs: m1, pmkey: 'p1', kind: 'plain', canceledAtMs: m1 + 2 * H }],
  ], [['p0', m1 + 4 * H]]) as unknown as { periods_never_tried: number; periods_stopped_before_tried: number; late_hours: { p99: number } };
  expect(v.periods_never_tried).toBe(0);
  expect(v.periods_stopped_before_tried).toBe(2);
  expect(v.late_hours.p99).toBe(4);
});
