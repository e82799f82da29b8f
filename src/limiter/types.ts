import type { Registry } from 'prom-client';
import type { GatewayResult, RateLimitInfo } from '../gateway/types';
import type { Logger } from '../observability/logger';

/**
 * Budget classes, highest priority first (src/limiter/README.md, "Classes"): checkout sales (and
 * authorizations), then captures and voids, then refunds, then reads, then background work (view refreshes,
 * fill-ins after webhooks: usually asked with no wait, a stale view is served meanwhile). A class queues behind
 * its own and the higher classes only, and may never take the last `reservedSlots(cls)` slots of a window.
 */
export type CallClass = 'sale' | 'capture' | 'refund' | 'renewal' | 'read' | 'background';

/**
 * Priority rank: 0 is served first. `renewal` (issue 37: subscriptions' renewals, `"recurring": true` sales) sits
 * between refunds and reads, a half step so the other classes' reserved slots (reservedSlots) stay as they were:
 * sales never queue behind renewals, renewals leave round(5R/6) slots of a window to the classes above, and reads
 * queue behind renewals.
 */
export const CLASS_RANK: Readonly<Record<CallClass, number>> = { sale: 0, capture: 1, refund: 2, renewal: 2.5, read: 3, background: 4 };

/** The classes the day pacing and the per-caller share apply to (issues 25 and 30): they give way to money. */
export type PacedClass = 'read' | 'background';
export const isPaced = (cls: CallClass): cls is PacedClass => cls === 'read' || cls === 'background';

/** The one entry point the use cases see (issue 4). */
export interface UpstreamScheduler {
  /** Waits for a slot, then runs `call`; reconciles with the answer's rate-limit info; re-queues once on 429/155. */
  run<T>(cls: CallClass, call: () => Promise<GatewayResult<T>>, opts?: RunOptions): Promise<GatewayResult<T>>;
  /**
   * Takes a slot for a call made outside run() (a read the gateway client re-sends on its own) and resolves
   * when that call may start; refuses like run() (RateLimitExceededError past the maximum wait).
   */
  acquire(cls: CallClass, opts?: RunOptions): Promise<void>;
  /**
   * Reserves a slot now for a call the caller expects to make soon, so the reservation travels in the same
   * Redis write as the caller's other first commands (a sale's idempotency claim: no round trip of its own).
   * Only a slot free at once is taken (no wait); when none is, run() queues as it would have. Hand it to run()
   * through `RunOptions.ahead`; release() it if the call will not be made. A Redis failure surfaces when run()
   * takes it, exactly as run() would have met it.
   */
  reserveAhead(cls: CallClass, opts?: RunOptions): AheadSlot;
  /** Stops new work; waiting callers fail with LimiterUnavailableError. Does not close a Redis connection it was given. */
  close(): Promise<void>;
}

export interface RunOptions {
  /** Overrides the class's maximum wait (ms) for this call. */
  maxWaitMs?: number;
  /** Aborting while waiting gives up the call; its slot stays used (never refunded, issue 4). */
  signal?: AbortSignal;
  /**
   * A slot reserveAhead() took for this call (same class): run() uses it instead of reserving, and its wait and
   * deadline count from when it was reserved. Ignored when it was released or already used.
   */
  ahead?: AheadSlot;
  /**
   * Who asks (the JWT `sub`): a read or background call with a caller may take at most that caller's fair share
   * of the read budget (guarantee 11); over it, it is refused at once. Hashed before use, never stored raw.
   */
  caller?: string;
}

/** A slot reserved before the caller knew it would call (UpstreamScheduler.reserveAhead). */
export interface AheadSlot {
  readonly cls: CallClass;
  /**
   * Gives the slot back when no call will start on it (a replayed write, a sale that must first load its
   * token): its entry leaves the log, as if never reserved. A no-op once run() took it, and the second time.
   * Callers need not wait for it; the promise (which never rejects) settles once the slot is given back.
   */
  release(): Promise<void>;
}

/** The budget to mirror: at most `perWindow` starts in ANY span of `windowMs + marginMs`, same for the day. */
export interface LimiterLimits {
  perWindow: number;
  windowMs: number;
  perDay: number;
  dayWindowMs: number;
  marginMs: number;
}

export interface LimiterClasses {
  saleMaxWaitMs: number;
  readMaxWaitMs: number;
  /** Captures and voids; default: the sales' wait. */
  captureMaxWaitMs?: number;
  /** Refunds; default: the sales' wait. */
  refundMaxWaitMs?: number;
  /**
   * Slots of every window reads may never take (default 5 of 45), so a read flood cannot starve sales.
   * Captures and voids leave round(R/3) of them, refunds round(2R/3): see reservedSlots().
   */
  saleReservedSlots: number;
  /** Background work's maximum wait (default 0: refused rather than queued). */
  backgroundMaxWaitMs?: number;
  /**
   * Day pacing (issue 25): reads may hold at most this share of what the other classes leave of the day
   * (reads ≤ share × (perDay − everything else in the day window)); default 1/2.
   */
  readDayShare?: number;
  /** The same for background work, counted against everything but background; default 1/4. */
  backgroundDayShare?: number;
  /**
   * Per-caller fair share (issue 30, guarantee 11): one caller's reads and background calls may take at most
   * this share of the reads' slots per window (perWindow − reservedSlots(read), at least 1); default 1/4.
   */
  callerShare?: number;
  /** And at most this share of the reads' day (readDayShare × perDay, at least 1); default 1/10. */
  callerDayShare?: number;
}

/** The settings a caller may leave out, with their defaults (README, "Day pacing", "Per-caller share"). */
export const CLASS_DEFAULTS = { backgroundMaxWaitMs: 0, readDayShare: 0.5, backgroundDayShare: 0.25, callerShare: 0.25, callerDayShare: 0.1 } as const;

/**
 * The slots of every window `cls` may never take: kept for the classes above it. Background leaves more than
 * reads (round(4R/3)), yet always at least one slot of the window for itself.
 */
export function reservedSlots(classes: LimiterClasses, cls: CallClass, perWindow = Number.POSITIVE_INFINITY): number {
  const reserved = Math.round((classes.saleReservedSlots * CLASS_RANK[cls]) / CLASS_RANK.read);
  return cls === 'background' ? Math.min(reserved, perWindow - 1) : reserved;
}

/** Of the day, the share `cls` may hold against everything else in the day window (1 for money classes). */
export function dayShareOf(classes: LimiterClasses, cls: CallClass): number {
  if (cls === 'read') return classes.readDayShare ?? CLASS_DEFAULTS.readDayShare;
  if (cls === 'background') return classes.backgroundDayShare ?? CLASS_DEFAULTS.backgroundDayShare;
  return 1;
}

/** The most one caller may start per window and per day window (reads and background together). */
export function callerCaps(limits: LimiterLimits, classes: LimiterClasses): { perWindow: number; perDay: number } {
  const readSlots = limits.perWindow - reservedSlots(classes, 'read');
  const readDay = dayShareOf(classes, 'read') * limits.perDay;
  return {
    perWindow: Math.max(1, Math.floor((classes.callerShare ?? CLASS_DEFAULTS.callerShare) * readSlots)),
    perDay: Math.max(1, Math.floor((classes.callerDayShare ?? CLASS_DEFAULTS.callerDayShare) * readDay)),
  };
}

/** The longest `cls` waits for a slot by default. */
export function maxWaitOf(classes: LimiterClasses, cls: CallClass): number {
  switch (cls) {
    case 'sale':
      return classes.saleMaxWaitMs;
    case 'capture':
      return classes.captureMaxWaitMs ?? classes.saleMaxWaitMs;
    case 'refund':
      return classes.refundMaxWaitMs ?? classes.saleMaxWaitMs;
    case 'renewal':
      // A renewal has no caller waiting: it waits as long as a sale would, and one refused is tried on the next pass.
      return classes.saleMaxWaitMs;
    case 'read':
      return classes.readMaxWaitMs;
    case 'background':
      return classes.backgroundMaxWaitMs ?? CLASS_DEFAULTS.backgroundMaxWaitMs;
  }
}

/** Monotonic milliseconds (performance.now by default); tests may inject their own. */
export type Clock = () => number;

export interface SchedulerOptions {
  endpointKey: string;
  limits: LimiterLimits;
  classes: LimiterClasses;
  logger: Logger;
  registry?: Registry;
  clock?: Clock;
}

/** How a reservation is asked for, beyond its class and wait. */
export interface ReserveRequest {
  /** The caller's hashed id (callerId()), for the per-caller share of reads and background work. */
  caller?: string;
  /**
   * A refusal is told to the caller as its Retry-After, spread after the class's last promised start (true),
   * or the ask was only a probe (a reservation ahead, asked with no wait) that promises no one anything.
   */
  promise: boolean;
}

/** Why a reservation was refused: no slot within the maximum wait, or the caller's own share is spent. */
export type RefusalReason = 'max_wait' | 'caller_share';

/**
 * What became of a call made on a slot: the gateway `answered` (anything but a 429: it takes calls), refused it
 * as over its limits (`rate_limited`: a 429 the budget did not predict; its entry stays, as whether the gateway
 * counts refused calls is not documented), or no answer came (`lost`: a timeout, a reset; proves nothing).
 */
export type CallOutcome = 'answered' | 'rate_limited' | 'lost';

/**
 * After a 429 the budget did not predict, the key is unsure (issue 40): one call at a time probes it, first
 * after `baseMs`, each refused probe doubling the wait up to `maxMs`; while a probe is out, other callers ask
 * again every `pollMs` (at least 20 ms). In production (a 61 s span): about 0.95 s, 3.8 s and 0.24 s.
 */
export function probeTimes(limits: LimiterLimits): { baseMs: number; maxMs: number; pollMs: number } {
  const span = limits.windowMs + limits.marginMs;
  return { baseMs: Math.ceil(span / 64), maxMs: Math.ceil(span / 16), pollMs: Math.max(20, Math.ceil(span / 256)) };
}

/**
 * A 429 whose `X-Rate-Limit` says the gateway's minute is spent (`<used> of <limit>/min`, used at the limit):
 * another client filled the window (issue 40, item 2). The next probe then goes where the window can have room
 * (scheduler.lua, 'block'), not after a doubling wait: at most one refused probe per incident, not one every few
 * seconds until it reopens. A 429 without the header, or with room in it (the soak's injected one), probes as before.
 */
export function windowFull(rateLimit: RateLimitInfo | undefined): boolean {
  return rateLimit !== undefined && rateLimit.minuteLimit > 0 && rateLimit.minuteUsed >= rateLimit.minuteLimit;
}

/** What a backend answers to "reserve me the earliest slot": a delay to sleep, or a refusal. */
export type Grant =
  | {
      ok: true;
      /** How long from the backend's "now" until the reserved start. */
      delayMs: number;
      /** This slot is the unsure key's probe: the one call out until its outcome is known. */
      probe: boolean;
      /**
       * After the call (or its failure): a 429 makes the key unsure (or doubles the probe's wait when this was
       * the probe; with `rateLimit` saying the gateway's minute is full, places the next probe where the window
       * can have room: windowFull); the probe's answer brings the key back to full pace. A no-op for other
       * slots' answers.
       */
      outcome(o: CallOutcome, rateLimit?: RateLimitInfo): Promise<void>;
      /**
       * After sleeping: `blocked` when a block (429/155, emptied Redis) arrived meanwhile, so reserve again;
       * otherwise how late the caller is, measured on the backend's clock when it answered (undefined: unknown).
       */
      confirm(): Promise<Confirmation>;
      /**
       * Removes the slot's entry: only for a call that never started (an entry without a call can only make
       * the log stricter than the gateway, and one fewer entry keeps every span's count at or under the cap).
       */
      release(): Promise<void>;
    }
  | {
      ok: false;
      /**
       * From the backend's "now" until the start this caller is told to come back at (its Retry-After); for
       * `probing`, until it should ask again (the unsure key's probe is out; not a refusal).
       */
      delayMs: number;
      reason: RefusalReason | 'probing';
    };

/** Entries in the day window (future reservations included): all of them, and the reads' and background's. */
export interface DayUsage {
  total: number;
  read: number;
  background: number;
}

export type Confirmation = { blocked: true } | { blocked: false; lateMs: number | undefined };

/** The state behind the run loop: Redis (shared by replicas), memory (one process) or both (fallback). */
export interface ReservationBackend {
  reserve(cls: CallClass, maxWaitMs: number, request: ReserveRequest): Promise<Grant>;
  /** Adds phantom reservations when the gateway reports more use than counted; returns how many. */
  reconcile(minuteUsed: number, dayUsed: number): Promise<number>;
  /** The day window's use, for the gauges read at scrape time (one cheap command; rejects when unreachable). */
  dayUsage(): Promise<DayUsage>;
  /** 1 while serving from a degraded fallback, else 0 (metric). */
  fallbackMode(): number;
  close(): Promise<void>;
}
