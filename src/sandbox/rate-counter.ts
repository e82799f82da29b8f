/**
 * Rate limits per (endpoint key, client IP) (spec §8). The gateway does not document whether its minute is a
 * calendar minute or a sliding span (gateway-facts.md, Rate limits), so both are emulated:
 *   - fixed: windows aligned to multiples of the window length on the sandbox clock (epoch ms);
 *   - sliding: at most `limit` accepted calls in any span of `windowMs` (timestamps in (now - windowMs, now]).
 * Only ACCEPTED calls are kept: a rejected call (429) does not count (an emulator choice; README).
 * Pure: the caller passes `now`, so tests drive the clock.
 */

export type RateMode = 'fixed' | 'sliding';

export interface WindowSpec {
  limit: number;
  /** Window length in ms; Infinity = never rolls over (the RATELIMT test path). */
  windowMs: number;
}

export interface RateVerdict {
  accepted: boolean;
  minuteUsed: number;
  dayUsed: number;
}

/** The first instant (inclusive, integer ms) that still belongs to the current window. */
export function windowLowerBound(mode: RateMode, now: number, windowMs: number): number {
  if (!Number.isFinite(windowMs)) return Number.NEGATIVE_INFINITY;
  return mode === 'fixed' ? Math.floor(now / windowMs) * windowMs : now - windowMs + 1;
}

/** Non-decreasing timestamps with cheap pruning at the front. */
export class CallLog {
  private ts: number[] = [];
  private head = 0;

  get size(): number {
    return this.ts.length - this.head;
  }

  push(t: number): void {
    const last = this.ts[this.ts.length - 1];
    // Keeps the array sorted even if the wall clock steps back.
    this.ts.push(last !== undefined && last > t ? last : t);
  }

  /** Number of timestamps >= lower (binary search). */
  countSince(lower: number): number {
    let lo = this.head;
    let hi = this.ts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.ts[mid] as number) < lower) lo = mid + 1;
      else hi = mid;
    }
    return this.ts.length - lo;
  }

  /** Drops timestamps < lower. */
  prune(lower: number): void {
    while (this.head < this.ts.length && (this.ts[this.head] as number) < lower) this.head++;
    if (this.head > 1024 && this.head * 2 > this.ts.length) {
      this.ts = this.ts.slice(this.head);
      this.head = 0;
    }
  }
}

export class RateCounter {
  private readonly logs = new Map<string, CallLog>();

  /** Counts the call if both windows have room; otherwise leaves the counts unchanged. */
  tryAcquire(id: string, now: number, mode: RateMode, minute: WindowSpec, day: WindowSpec): RateVerdict {
    const log = this.logFor(id, now, mode, minute, day);
    const minuteLower = windowLowerBound(mode, now, minute.windowMs);
    const dayLower = windowLowerBound(mode, now, day.windowMs);
    const minuteUsed = log.countSince(minuteLower);
    const dayUsed = log.countSince(dayLower);
    if (minuteUsed >= minute.limit || dayUsed >= day.limit) return { accepted: false, minuteUsed, dayUsed };
    log.push(now);
    return { accepted: true, minuteUsed: minuteUsed + 1, dayUsed: dayUsed + 1 };
  }

  /** The counts as they stand, without counting a call. */
  peek(id: string, now: number, mode: RateMode, minute: WindowSpec, day: WindowSpec): RateVerdict {
    const log = this.logFor(id, now, mode, minute, day);
    return { accepted: true, minuteUsed: log.countSince(windowLowerBound(mode, now, minute.windowMs)), dayUsed: log.countSince(windowLowerBound(mode, now, day.windowMs)) };
  }

  reset(): void {
    this.logs.clear();
  }

  private logFor(id: string, now: number, mode: RateMode, minute: WindowSpec, day: WindowSpec): CallLog {
    let log = this.logs.get(id);
    if (!log) {
      log = new CallLog();
      this.logs.set(id, log);
    }
    // Keep what either window (in either mode, as the mode may change live) could still count.
    const keep = Math.min(
      ...[minute.windowMs, day.windowMs].flatMap((w) => [windowLowerBound('fixed', now, w), windowLowerBound('sliding', now, w)]),
    );
    log.prune(keep);
    return log;
  }
}

/**
 * The largest number of events seen in any span of `windowMs` (sliding maximum): what the scheduler tests
 * assert on, whatever mode the limiter runs in.
 */
export class WindowMax {
  private readonly log = new CallLog();
  private best = 0;

  record(now: number, windowMs: number): void {
    this.log.push(now);
    this.log.prune(now - windowMs + 1);
    this.best = Math.max(this.best, this.log.size);
  }

  get max(): number {
    return this.best;
  }
}
