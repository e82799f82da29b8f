import { callerCaps, CLASS_RANK, dayShareOf, isPaced, probeTimes, reservedSlots, type CallClass, type CallOutcome, type Clock, type DayUsage, type Grant, type LimiterClasses, type LimiterLimits, type PacedClass, type ReservationBackend, type ReserveRequest, windowFull } from './types';
import type { RateLimitInfo } from '../gateway/types';
import { countIn, earliestSlot, insertSorted, pacedStart, pruneUpTo, removeSorted } from './window-math';

export interface MemoryBackend extends ReservationBackend {
  /** Counts starts this process already made or reserved elsewhere (entering the Redis fallback). */
  seed(times: readonly number[]): void;
  /** A 429 no grant of this backend answers for (the shared budget's own could not be told): the key is unsure. */
  block(): Promise<void>;
}

/** Idle callers' logs are swept every this many reservations (a caller's log lives a day span at most). */
const SWEEP_EVERY = 1000;

/**
 * One process's budget, with exactly the rule scheduler.lua applies in Redis (same order of steps), on the
 * process's monotonic clock: development mode, and the per-replica fallback while Redis is unreachable.
 */
export function createMemoryBackend(limits: LimiterLimits, classes: LimiterClasses, clock: Clock): MemoryBackend {
  const span = limits.windowMs + limits.marginMs;
  const daySpan = limits.dayWindowMs + limits.marginMs;
  const minute: number[] = [];
  const day: number[] = [];
  /** The day span's read and background entries (day pacing). */
  const dayOwn: Record<PacedClass, number[]> = { read: [], background: [] };
  /** Each caller's read and background entries over the day span (per-caller share), by hashed id. */
  const callers = new Map<string, number[]>();
  const caps = callerCaps(limits, classes);
  let reservations = 0;
  let lastAny = Number.NEGATIVE_INFINITY;
  /** The latest slot of each class but background (whose queue is behind everything: lastAny). */
  const last: Record<Exclude<CallClass, 'background'>, number> = { sale: -Infinity, capture: -Infinity, refund: -Infinity, renewal: -Infinity, read: -Infinity };
  /** The latest start told to a refused caller, per class (its Retry-After). */
  const promised: Partial<Record<CallClass, number>> = {};
  /** A class queues behind its own and the higher classes' latest slots. */
  const queueEnd = (cls: CallClass): number => {
    if (cls === 'background') return lastAny;
    let end = Number.NEGATIVE_INFINITY;
    for (const [c, t] of Object.entries(last)) if (CLASS_RANK[c as CallClass] <= CLASS_RANK[cls]) end = Math.max(end, t);
    return end;
  };
  let blockedUntil = Number.NEGATIVE_INFINITY;
  /** The unsure key (scheduler.lua, issue 40): the probe's wait (0: sure), the probe out and its lease. */
  const probeAt = probeTimes(limits);
  let probeWait = 0;
  let probe: object | undefined;
  let probeUntil = Number.NEGATIVE_INFINITY;

  /** The last time our count agreed with the gateway's (reconcile), a full window's first 429 and its stage. */
  let syncAt: number | undefined;
  let fullAt = Number.NEGATIVE_INFINITY;
  let fullStage = 0;

  /**
   * A 429 we did not predict (scheduler.lua, 'block'): `of` is the refused call's slot. A full window's calls
   * beyond ours become phantoms at syncAt, then at its first 429, then at now (scheduler.lua says why).
   */
  function rateLimited(of: object | undefined, rateLimit?: RateLimitInfo): void {
    const now = clock();
    const first = probeWait === 0;
    const isProbe = of !== undefined && of === probe;
    if (rateLimit && windowFull(rateLimit) && (first || isProbe)) {
      let at: number | undefined;
      if (first || fullStage === 0) {
        at = syncAt;
        fullStage = 1;
        fullAt = now;
      } else if (fullStage === 1) {
        at = fullAt;
        fullStage = 2;
      } else {
        at = now;
        fullAt = now;
      }
      if (at !== undefined && at > now - limits.windowMs) {
        const extra = Math.min(limits.perWindow, rateLimit.minuteUsed) - countIn(minute, now - limits.windowMs, now);
        for (let i = 0; i < extra; i++) add(at);
      }
      probeWait = probeAt.baseMs;
      if (isProbe) probe = undefined;
    } else if (first) {
      probeWait = probeAt.baseMs;
    } else if (isProbe) {
      probeWait = Math.min(probeWait * 2, probeAt.maxMs);
      probe = undefined;
    }
    blockedUntil = Math.max(blockedUntil, now + probeWait);
  }

  function prune(now: number): void {
    pruneUpTo(minute, now - span);
    for (const log of [day, dayOwn.read, dayOwn.background]) pruneUpTo(log, now - daySpan);
    if (++reservations % SWEEP_EVERY === 0) {
      for (const [id, log] of callers) if ((log[log.length - 1] ?? -Infinity) <= now - daySpan) callers.delete(id);
    }
  }

  function add(t: number): void {
    insertSorted(minute, t);
    insertSorted(day, t);
  }

  /** The caller's log, pruned: undefined when the call has no caller or its class has no per-caller share. */
  function callerLog(cls: CallClass, request: ReserveRequest, now: number): number[] | undefined {
    if (request.caller === undefined || !isPaced(cls)) return undefined;
    let log = callers.get(request.caller);
    if (!log) callers.set(request.caller, (log = []));
    pruneUpTo(log, now - daySpan);
    return log;
  }

  return {
    async reserve(cls: CallClass, maxWaitMs: number, request: ReserveRequest): Promise<Grant> {
      const now = clock();
      // Unsure and its probe out: ask again soon (scheduler.lua).
      if (probeWait > 0 && probe !== undefined && probeUntil > now) return { ok: false, delayMs: probeAt.pollMs, reason: 'probing' };
      prune(now);
      const reserved = reservedSlots(classes, cls, limits.perWindow);
      // First-come within a class and behind the classes above it; a class may use the slots lower ones must leave.
      let start = Math.max(now, blockedUntil, queueEnd(cls));
      const dayCap = limits.perDay - reserved;
      if (day.length >= dayCap) {
        // Near the day limit: place at the tail, where only the span ending here matters (cheap at 5000/day).
        start = Math.max(start, day[day.length - 1] as number, (day[day.length - dayCap] as number) + daySpan);
      }
      let hold = false;
      const own = isPaced(cls) ? dayOwn[cls] : undefined;
      if (own) {
        const paced = pacedStart(own, day, limits.perDay, dayShareOf(classes, cls), daySpan, now);
        start = Math.max(start, paced.from);
        hold = paced.hold;
      }
      let slot = earliestSlot(minute, start, limits.perWindow - reserved, span);
      const log = callerLog(cls, request, now);
      if (log) {
        // Per-caller share: over it, refused at once for this caller alone; nothing reserved, no promise moved.
        let free = earliestSlot(log, slot, caps.perWindow, span);
        if (log.length >= caps.perDay) free = Math.max(free, (log[log.length - caps.perDay] as number) + daySpan);
        if (free > slot) return { ok: false, delayMs: free - now, reason: 'caller_share' };
      }
      const delayMs = slot - now;
      if (hold || delayMs > maxWaitMs) {
        // Told when it could start, one slot after the class's last promise (scheduler.lua, "promised").
        if (request.promise) {
          slot = Math.max(slot, (promised[cls] ?? -Infinity) + span / (limits.perWindow - reserved));
          promised[cls] = slot;
        }
        return { ok: false, delayMs: slot - now, reason: 'max_wait' };
      }
      add(slot);
      if (own) insertSorted(own, slot);
      if (log) insertSorted(log, slot);
      lastAny = Math.max(lastAny, slot);
      if (cls !== 'background') last[cls] = Math.max(last[cls], slot);
      const self = {};
      const isProbe = probeWait > 0;
      if (isProbe) {
        probe = self;
        probeUntil = slot + span;
      }
      return {
        ok: true,
        delayMs,
        probe: isProbe,
        confirm: async () => (blockedUntil > clock() || (probeWait > 0 && probe !== self) ? { blocked: true } : { blocked: false, lateMs: clock() - slot }),
        async outcome(o: CallOutcome, rateLimit?: RateLimitInfo) {
          if (o === 'rate_limited') return rateLimited(self, rateLimit);
          if (probe !== self) return;
          probe = undefined;
          if (o === 'answered') {
            probeWait = 0;
            fullStage = 0;
          }
        },
        // Like scheduler.lua's release: the entry goes, the class queues keep their ends.
        release: async () => {
          for (const l of [minute, day, own, log]) if (l) removeSorted(l, slot);
          if (probe === self) probe = undefined;
        },
      };
    },

    async reconcile(minuteUsed: number, dayUsed: number): Promise<number> {
      const now = clock();
      prune(now);
      // Phantoms go at "now": later than their true time, which keeps every span holding a future slot honest.
      const minuteExtra = Math.min(limits.perWindow, minuteUsed - countIn(minute, now - limits.windowMs, now));
      for (let i = 0; i < minuteExtra; i++) add(now);
      syncAt = now;
      const dayExtra = Math.min(limits.perDay, dayUsed - countIn(day, now - limits.dayWindowMs, now));
      for (let i = 0; i < dayExtra; i++) insertSorted(day, now);
      return Math.max(0, minuteExtra) + Math.max(0, dayExtra);
    },

    async block(): Promise<void> {
      rateLimited(undefined);
    },

    seed(times: readonly number[]): void {
      const now = clock();
      for (const t of times) {
        if (t <= now - daySpan) continue;
        add(t);
        lastAny = Math.max(lastAny, t);
        last.read = Math.max(last.read, t);
      }
    },

    async dayUsage(): Promise<DayUsage> {
      const now = clock();
      const inDay = (log: readonly number[]) => countIn(log, now - daySpan, Infinity);
      return { total: inDay(day), read: inDay(dayOwn.read), background: inDay(dayOwn.background) };
    },

    fallbackMode: () => 0,
    async close(): Promise<void> {},
  };
}
