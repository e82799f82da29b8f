import { CLASS_RANK, reservedSlots, type CallClass, type Clock, type Grant, type LimiterClasses, type LimiterLimits, type ReservationBackend } from './types';
import { countIn, earliestSlot, insertSorted, pruneUpTo, removeSorted } from './window-math';

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
  /** The latest slot of each class but reads (whose queue is behind everything: lastAny). */
  const last: Record<Exclude<CallClass, 'read'>, number> = { sale: -Infinity, capture: -Infinity, refund: -Infinity };
  /** A class queues behind its own and the higher classes' latest slots. */
  const queueEnd = (cls: CallClass): number => {
    if (cls === 'read') return lastAny;
    let end = Number.NEGATIVE_INFINITY;
    for (const [c, t] of Object.entries(last)) if (CLASS_RANK[c as CallClass] <= CLASS_RANK[cls]) end = Math.max(end, t);
    return end;
  };
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
      const reserved = reservedSlots(classes, cls);
      // First-come within a class and behind the classes above it; a class may use the slots lower ones must leave.
      let start = Math.max(now, blockedUntil, queueEnd(cls));
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
      if (cls !== 'read') last[cls] = Math.max(last[cls], slot);
      return {
        ok: true,
        delayMs,
        confirm: async () => (blockedUntil > clock() ? { blocked: true } : { blocked: false, lateMs: clock() - slot }),
        // Like scheduler.lua's release: the entry goes, the class queues keep their ends.
        release: async () => {
          removeSorted(minute, slot);
          removeSorted(day, slot);
        },
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
