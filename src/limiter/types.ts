import type { Registry } from 'prom-client';
import type { GatewayResult } from '../gateway/types';
import type { Logger } from '../observability/logger';

/**
 * Budget classes, highest priority first (src/limiter/README.md, "Classes"): checkout sales (and
 * authorizations), then captures and voids, then refunds, then reads. A class queues behind its own and the
 * higher classes only, and may never take the last `reservedSlots(cls)` slots of a window.
 */
export type CallClass = 'sale' | 'capture' | 'refund' | 'read';

/** Priority rank: 0 is served first. */
export const CLASS_RANK: Readonly<Record<CallClass, number>> = { sale: 0, capture: 1, refund: 2, read: 3 };

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
  /** The caller (JWT `sub`) a read is made for: its fair share of the read budget (guarantee 11). */
  caller?: string;
  /** Overrides the class's maximum wait (ms) for this call. */
  maxWaitMs?: number;
  /** Aborting while waiting gives up the call; its slot stays used (never refunded, issue 4). */
  signal?: AbortSignal;
  /**
   * A slot reserveAhead() took for this call (same class): run() uses it instead of reserving, and its wait and
   * deadline count from when it was reserved. Ignored when it was released or already used.
   */
  ahead?: AheadSlot;
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
}

/** The slots of every window `cls` may never take: kept for the classes above it. */
export function reservedSlots(classes: LimiterClasses, cls: CallClass): number {
  return Math.round((classes.saleReservedSlots * CLASS_RANK[cls]) / CLASS_RANK.read);
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
    case 'read':
      return classes.readMaxWaitMs;
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

/** What a backend answers to "reserve me the earliest slot": a delay to sleep, or a refusal. */
export type Grant =
  | {
      ok: true;
      /** How long from the backend's "now" until the reserved start. */
      delayMs: number;
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
  | { ok: false; delayMs: number };

export type Confirmation = { blocked: true } | { blocked: false; lateMs: number | undefined };

/** The state behind the run loop: Redis (shared by replicas), memory (one process) or both (fallback). */
export interface ReservationBackend {
  reserve(cls: CallClass, maxWaitMs: number): Promise<Grant>;
  /** Adds phantom reservations when the gateway reports more use than counted; returns how many. */
  reconcile(minuteUsed: number, dayUsed: number): Promise<number>;
  /** No call may start before a full window from now has passed (429 with errorcode 155). */
  block(): Promise<void>;
  /** 1 while serving from a degraded fallback, else 0 (metric). */
  fallbackMode(): number;
  close(): Promise<void>;
}
