import fc from 'fast-check';
import { earliestSlot, pacedStart } from '../../src/limiter/window-math';
import { maxInAnyWindow, orderViolations, utilisation, waves } from '../../src/limiter/measure';

/** Entries built the way the scheduler builds them: each placed at its earliest slot, so the invariant holds. */
function schedule(arrivals: number[], cap: number, span: number): number[] {
  const entries: number[] = [];
  for (const a of arrivals) {
    const r = earliestSlot(entries, a, cap, span);
    entries.push(r);
    entries.sort((x, y) => x - y);
  }
  return entries;
}

/** Any span [x, x + span) holding `cap` + 1 entries? Brute force over spans starting at each entry. */
function violates(entries: number[], cap: number, span: number): boolean {
  return entries.some((x) => entries.filter((e) => e >= x && e < x + span).length > cap);
}

describe('earliestSlot', () => {
  it('when the log is empty, then the slot is the start', () => {
    expect(earliestSlot([], 42, 3, 100)).toBe(42);
  });

  it('when cap entries sit in the last span, then the slot is one span after the oldest of them', () => {
    expect(earliestSlot([0, 10, 20], 30, 3, 100)).toBe(100);
    expect(earliestSlot([0, 10, 20], 30, 4, 100)).toBe(30);
  });

  it('when float clock values make (first + span) - span round below first, then a caller at first is not pushed a window late', () => {
    // In doubles, (a + 60000) - 60000 < a and (a + 60000) - a < 60000 for this a (the memory backend's clock is a float).
    const a = 467214.9616985084;
    const span = 60000;
    expect(earliestSlot([a, a + span], a, 2, span)).toBe(a);
  });

  it('when a gap exists between queued entries, then a later arrival may take it without breaking any span', () => {
    // Reads left room at 0..100 (cap 3 of 5): a sale with cap 5 fits at the start, between queued entries.
    const reads = [0, 0, 0, 100, 100, 100, 200, 200, 200];
    const r = earliestSlot(reads, 50, 5, 100);
    expect(r).toBe(50);
    expect(violates([...reads, r, r].sort((a, b) => a - b), 5, 100)).toBe(false);
  });

  it('when random entries and a random start are given, then the slot keeps every span within cap and no earlier time would', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 500 }),
        (arrivals, start, cap, span) => {
          const entries = schedule(arrivals, cap, span);
          expect(violates(entries, cap, span)).toBe(false);
          const r = earliestSlot(entries, start, cap, span);
          expect(r).toBeGreaterThanOrEqual(start);
          const withR = [...entries, r].sort((a, b) => a - b);
          expect(violates(withR, cap, span)).toBe(false);
          // Minimal: every earlier candidate (the start, or one span after an entry) breaks some span.
          const candidates = [start, ...entries.map((e) => e + span)].filter((c) => c >= start && c < r);
          for (const c of candidates) expect(violates([...entries, c].sort((a, b) => a - b), cap, span)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('measurements', () => {
  it('when starts are listed, then the fullest half-open window is counted', () => {
    expect(maxInAnyWindow([0, 10, 99, 100, 150], 100)).toBe(3);
    expect(maxInAnyWindow([0, 10, 99, 100, 150], 101)).toBe(4);
    expect(maxInAnyWindow([], 100)).toBe(0);
  });

  it('when a scheduler sends N per window back to back, then utilisation is 1', () => {
    expect(utilisation([0, 0, 100, 100, 200, 200], 2, 100)).toBeCloseTo(1);
    expect(utilisation([0, 0, 200, 200], 2, 100)).toBeCloseTo(4 / 6);
  });

  it('when starts come in bursts, then waves split where a gap exceeds the bound, in time order, whatever the input order', () => {
    expect(waves([2210, 5, 0, 2200, 4400, 12], 1000)).toEqual([{ at: 0, size: 3 }, { at: 2200, size: 2 }, { at: 4400, size: 1 }]);
    expect(waves([0, 1000, 2000], 1000)).toEqual([{ at: 0, size: 3 }]);
    expect(waves([], 1000)).toEqual([]);
  });

  it('when later arrivals start before an earlier one beyond the tolerance, then that call counts once', () => {
    const calls = [{ arrivedAt: 0, startedAt: 50 }, { arrivedAt: 10, startedAt: 20 }, { arrivedAt: 11, startedAt: 30 }, { arrivedAt: 14, startedAt: 25 }];
    expect(orderViolations(calls, 2)).toBe(2);
    expect(orderViolations(calls, 2, 22)).toBe(1);
    expect(orderViolations(calls, 40)).toBe(0);
  });
});

describe('pacedStart (day pacing)', () => {
  const DAY = 1000;
  it('when the class holds less than its share of what the others leave, then it may start now', () => {
    // D = 40, others 10: reads may hold floor(0.5 × 30) = 15; 14 held.
    const own = Array.from({ length: 14 }, (_, i) => i);
    const day = [...own, ...Array.from({ length: 10 }, (_, i) => 100 + i)].sort((a, b) => a - b);
    expect(pacedStart(own, day, 40, 0.5, DAY, 200)).toEqual({ from: Number.NEGATIVE_INFINITY, hold: false });
  });

  it('when the class holds its share, then it may start once enough of its oldest entries have left the day', () => {
    // 15 held of 15 allowed: the oldest must leave first. Had the others used 2 more, 13 allowed: the third oldest.
    const own = Array.from({ length: 15 }, (_, i) => i * 10);
    const others = (n: number) => Array.from({ length: n }, (_, i) => 500 + i);
    const day = (n: number) => [...own, ...others(n)].sort((a, b) => a - b);
    expect(pacedStart(own, day(10), 40, 0.5, DAY, 600)).toEqual({ from: 0 + DAY, hold: false });
    expect(pacedStart(own, day(14), 40, 0.5, DAY, 600)).toEqual({ from: 20 + DAY, hold: false });
  });

  it('when the others alone fill the share\'s room, then nothing can be promised before the day frees', () => {
    const day = Array.from({ length: 39 }, (_, i) => 50 + i);
    expect(pacedStart([], day, 40, 0.5, DAY, 100)).toEqual({ from: 50 + DAY, hold: true });
    expect(pacedStart([], [], 1, 0.5, DAY, 100)).toEqual({ from: 100 + DAY, hold: true });
  });
});
