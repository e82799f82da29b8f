import type { CallClass, Clock, Grant, LimiterClasses, LimiterLimits, ReservationBackend } from './types';
import { countIn, earliestSlot, insertSorted, pruneUpTo } from './window-math';

export interface MemoryBackend extends ReservationBackend {
  /** Counts starts this process already made or reserved elsewhere (entering the Redis fallback). */
  seed(times: readonly number[]): void;
}

/**
 * One process's budget, with exactly the rule scheduler.lua applies in Redis (same order of steps), on the
 * process's monotonic clock: development mode, and the per-replica fallback while Redis is unreachable.
 */
export function createMemoryBackend(limits: LimiterLimits, classes: LimiterClasses, clock: Clock): MemoryBackend {
  const span = limits.windowMs + limits.marginMs;
  const daySpan = limits.dayWindowMs + limits.marginMs;
  const minute: number[] = [];
  const day: number[] = [];
  let lastAny = Number.NEGATIVE_INFINITY;
  let lastSale = Number.NEGATIVE_INFINITY;
  let blockedUntil = Number.NEGATIVE_INFINITY;

  function prune(now: number): void {
    pruneUpTo(minute, now - span);
    pruneUpTo(day, now - daySpan);
  }

  function add(t: number): void {
    insertSorted(minute, t);
    insertSorted(day, t);
  }

  return {
    async reserve(cls: CallClass, maxWaitMs: number): Promise<Grant> {
      const now = clock();
      prune(now);
      const reserved = cls === 'read' ? classes.saleReservedSlots : 0;
      // First-come within a class; reads also queue behind sales, sales may use the slots reads must leave.
      let start = Math.max(now, blockedUntil, cls === 'read' ? lastAny : lastSale);
      const dayCap = limits.perDay - reserved;
      if (day.length >= dayCap) {
        // Near the day limit: place at the tail, where only the span ending here matters (cheap at 5000/day).
        start = Math.max(start, day[day.length - 1] as number, (day[day.length - dayCap] as number) + daySpan);
      }
      const slot = earliestSlot(minute, start, limits.perWindow - reserved, span);
      const delayMs = slot - now;
      if (delayMs > maxWaitMs) return { ok: false, delayMs };
      add(slot);
      lastAny = Math.max(lastAny, slot);
      if (cls === 'sale') lastSale = Math.max(lastSale, slot);
      return {
        ok: true,
        delayMs,
        confirm: async () => (blockedUntil > clock() ? { blocked: true } : { blocked: false, lateMs: clock() - slot }),
      };
    },

    async reconcile(minuteUsed: number, dayUsed: number): Promise<number> {
      const now = clock();
      prune(now);
      // Phantoms go at "now": later than their true time, which keeps every span holding a future slot honest.
      const minuteExtra = Math.min(limits.perWindow, minuteUsed - countIn(minute, now - limits.windowMs, now));
      for (let i = 0; i < minuteExtra; i++) add(now);
      const dayExtra = Math.min(limits.perDay, dayUsed - countIn(day, now - limits.dayWindowMs, now));
      for (let i = 0; i < dayExtra; i++) insertSorted(day, now);
      return Math.max(0, minuteExtra) + Math.max(0, dayExtra);
    },

    async block(): Promise<void> {
      blockedUntil = Math.max(blockedUntil, clock() + span);
    },

    seed(times: readonly number[]): void {
      const now = clock();
      for (const t of times) {
        if (t <= now - daySpan) continue;
        add(t);
        lastAny = Math.max(lastAny, t);
      }
    },

    fallbackMode: () => 0,
    async close(): Promise<void> {},
  };
}
