import { RateCounter, WindowMax, windowLowerBound } from '../../src/sandbox/rate-counter';

const minute = (limit: number) => ({ limit, windowMs: 1000 });
const day = (limit: number) => ({ limit, windowMs: 10_000 });

describe('sandbox rate counter', () => {
  it('when mode is fixed, then windows align to multiples of the window length', () => {
    expect(windowLowerBound('fixed', 12_345, 1000)).toBe(12_000);
    expect(windowLowerBound('sliding', 12_345, 1000)).toBe(11_346);
    expect(windowLowerBound('fixed', 12_345, Infinity)).toBe(-Infinity);
  });

  it('when fixed and the limit is used up at the end of a window, then the next window starts fresh at its first ms', () => {
    const c = new RateCounter();
    for (let i = 0; i < 3; i++) expect(c.tryAcquire('k', 1990 + i, 'fixed', minute(3), day(100)).accepted).toBe(true);
    expect(c.tryAcquire('k', 1999, 'fixed', minute(3), day(100)).accepted).toBe(false);
    // 2000 is a new aligned window: 3 more within 10 ms of the first 3 (the 2N burst a fixed window allows).
    for (let i = 0; i < 3; i++) expect(c.tryAcquire('k', 2000 + i, 'fixed', minute(3), day(100))).toMatchObject({ accepted: true, minuteUsed: i + 1 });
  });

  it('when sliding, then at most N calls are accepted in any span of the window length', () => {
    const c = new RateCounter();
    for (let i = 0; i < 3; i++) expect(c.tryAcquire('k', 1990 + i, 'sliding', minute(3), day(100)).accepted).toBe(true);
    expect(c.tryAcquire('k', 2000, 'sliding', minute(3), day(100)).accepted).toBe(false);
    expect(c.tryAcquire('k', 2989, 'sliding', minute(3), day(100)).accepted).toBe(false); // 1990 is still within (1989, 2989]
    expect(c.tryAcquire('k', 2990, 'sliding', minute(3), day(100))).toMatchObject({ accepted: true, minuteUsed: 3 });
  });

  it('when a call is rejected, then it does not count', () => {
    const c = new RateCounter();
    c.tryAcquire('k', 0, 'sliding', minute(1), day(100));
    for (let t = 1; t < 1000; t += 100) expect(c.tryAcquire('k', t, 'sliding', minute(1), day(100)).accepted).toBe(false);
    expect(c.tryAcquire('k', 1000, 'sliding', minute(1), day(100))).toMatchObject({ accepted: true, minuteUsed: 1, dayUsed: 2 });
  });

  it('when the day limit is reached, then calls are refused although the minute has room', () => {
    const c = new RateCounter();
    for (let i = 0; i < 4; i++) expect(c.tryAcquire('k', i * 1000, 'fixed', minute(3), day(4)).accepted).toBe(true);
    expect(c.tryAcquire('k', 4000, 'fixed', minute(3), day(4))).toMatchObject({ accepted: false, minuteUsed: 0, dayUsed: 4 });
    expect(c.tryAcquire('k', 10_000, 'fixed', minute(3), day(4))).toMatchObject({ accepted: true, dayUsed: 1 });
  });

  it('when ids differ, then they are counted apart; peek does not count', () => {
    const c = new RateCounter();
    c.tryAcquire('a', 0, 'fixed', minute(1), day(10));
    expect(c.tryAcquire('b', 0, 'fixed', minute(1), day(10)).accepted).toBe(true);
    expect(c.peek('a', 1, 'fixed', minute(1), day(10))).toMatchObject({ minuteUsed: 1, dayUsed: 1 });
    expect(c.peek('a', 1, 'fixed', minute(1), day(10))).toMatchObject({ minuteUsed: 1, dayUsed: 1 });
  });

  it('when the window never rolls (Infinity), then one call is allowed until reset', () => {
    const c = new RateCounter();
    const once = { limit: 1, windowMs: Infinity };
    expect(c.tryAcquire('k', 0, 'fixed', once, once).accepted).toBe(true);
    expect(c.tryAcquire('k', 1e12, 'fixed', once, once).accepted).toBe(false);
    c.reset();
    expect(c.tryAcquire('k', 1e12, 'fixed', once, once).accepted).toBe(true);
  });

  it('when measuring the sliding maximum, then it finds the densest span of the window length', () => {
    const w = new WindowMax();
    // Fixed-window edge burst: 3 at 990..992 and 3 at 1000..1002 lie within one 1000 ms span.
    for (const t of [0, 990, 991, 992, 1000, 1001, 1002, 2500]) w.record(t, 1000);
    expect(w.max).toBe(6);
    const spread = new WindowMax();
    for (const t of [0, 1000, 2000, 3000]) spread.record(t, 1000);
    expect(spread.max).toBe(1);
  });
});
