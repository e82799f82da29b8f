import { GatewayError, GatewayRateLimitedError } from '../gateway/errors';
import type { GatewayResult, RateLimitInfo } from '../gateway/types';
import type { Logger } from '../observability/logger';
import { LimiterUnavailableError, RateLimitExceededError } from './errors';
import type { LimiterMetrics } from './metrics';
import { callerId } from './caller';
import { isPaced, maxWaitOf, type AheadSlot, type CallClass, type CallOutcome, type Clock, type Grant, type LimiterClasses, type LimiterLimits, type ReservationBackend, type RunOptions, type UpstreamScheduler } from './types';

export interface RunLoopOptions {
  backend: ReservationBackend;
  limits: LimiterLimits;
  classes: LimiterClasses;
  clock: Clock;
  logger: Logger;
  metrics: LimiterMetrics;
}

/** A reservation made ahead (reserveAhead): when it was asked, its deadline, and the backend's answer. */
interface Ahead {
  cls: CallClass;
  asked: number;
  deadline: number;
  grant: Promise<Grant>;
  /** run() took it, or it was released: either way nobody else may. */
  spent: boolean;
}

/** A granted slot. */
type Slot = Extract<Grant, { ok: true }>;

/** What release() answers once the slot was spent: one settled promise, not one per sale. */
const SETTLED: Promise<void> = Promise.resolve();

/**
 * What every caller does around its gateway call, whatever backend holds the budget:
 * reserve → sleep on the monotonic clock → confirm and check lateness → call → reconcile (in the background after
 * an answer, awaited after an error) → maybe re-queue once.
 */
export function createRunLoop(opts: RunLoopOptions): UpstreamScheduler {
  const { backend, classes, clock, logger, metrics } = opts;
  // Timers fire a few ms late on a busy event loop; a tolerance of 0 would turn every wake into a
  // re-reservation (a cascade that empties the window). The config keeps the margin at 20 ms or more.
  const lateLimitMs = Math.max(opts.limits.marginMs / 2, 10);
  const sleepers = new Set<() => void>();
  const aheads = new WeakMap<AheadSlot, Ahead>();
  let closed = false;

  function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const stop = (err: unknown) => {
        clearTimeout(timer);
        sleepers.delete(onClose);
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      };
      const onAbort = () => stop(signal?.reason);
      const onClose = () => stop(new LimiterUnavailableError('limiter closed'));
      const timer = setTimeout(() => {
        sleepers.delete(onClose);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, Math.ceil(ms)));
      sleepers.add(onClose);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Returns once the caller holds a slot it may use now; throws when it cannot get one before `deadline`.
   * `ahead`: a reservation already under way, used as the first one (its slot, its time of asking).
   * `caller`: the hashed caller id of a read or background call (per-caller share).
   *
   * A refusal comes at once, from the first reservation (guarantee 9). It can only come after some waiting when
   * the slot was lost meanwhile: a wake later than the tolerance (a GC pause, an overloaded event loop) or a
   * block (a gateway 429, an emptied Redis) sends the caller back for a new slot within what is left of its
   * wait; both are counted (late wakes, upstream 429s) and should stay at 0.
   */
  async function acquire(cls: CallClass, deadline: number, signal: AbortSignal | undefined, ahead?: Ahead, caller?: string): Promise<Slot> {
    for (;;) {
      if (closed) throw new LimiterUnavailableError('limiter closed');
      signal?.throwIfAborted();
      const fromAhead = ahead;
      ahead = undefined;
      const asked = fromAhead ? fromAhead.asked : clock();
      let grant;
      try {
        grant = await (fromAhead ? fromAhead.grant : backend.reserve(cls, Math.max(0, deadline - asked), { caller, promise: true }));
      } catch (err) {
        if (err instanceof LimiterUnavailableError) metrics.refusal(cls, 'unavailable');
        throw err;
      } finally {
        metrics.fallback(backend.fallbackMode());
      }
      // An ahead reservation only takes a slot free at once (it asks with no wait), so it never queues in front
      // of anyone nor moves a queue's end: when none was free, this caller queues as usual.
      if (!grant.ok && fromAhead) continue;
      if (!grant.ok && grant.reason === 'probing' && clock() + grant.delayMs <= deadline) {
        // The key is unsure and its probe is out (issue 40): not refused, asked again once its answer may be in.
        await sleep(grant.delayMs, signal);
        continue;
      }
      if (!grant.ok) {
        const reason = grant.reason === 'probing' ? 'max_wait' : grant.reason;
        metrics.refusal(cls, reason);
        // When this caller could start (issue 25, item 4): not "delay minus the wait allowed", which told a whole
        // refused burst the same second; the backend spreads refused callers one slot apart.
        throw new RateLimitExceededError(grant.delayMs, undefined, reason);
      }
      // Redis placed the slot at its "now" + delay, somewhere between asking and the reply on our clock:
      // sleep from the reply, so we never start early; without a better measure, judge lateness from the
      // asking, so we never under-count it.
      const wakeAt = clock() + grant.delayMs;
      let late = () => clock() - (asked + grant.delayMs);
      if (grant.delayMs > 0) {
        // Timers may fire a millisecond early: sleep until our clock has really passed the slot.
        while (clock() < wakeAt) await sleep(wakeAt - clock(), signal);
        const confirmAsked = clock();
        const confirmation = await grant.confirm();
        // A 429/155 or an emptied Redis blocked the key while we slept: this slot no longer holds.
        if (confirmation.blocked) continue;
        // The backend's measure at its answer, plus all our time since asking it: still never under-counted.
        const measured = confirmation.lateMs;
        if (measured !== undefined) late = () => measured + (clock() - confirmAsked);
      }
      if (late() > lateLimitMs) {
        // Woke too late: starting now could crowd the next window (issue 4): the slot stays used, reserve again.
        metrics.lateWake(cls);
        continue;
      }
      return grant;
    }
  }

  async function reconcile(info: RateLimitInfo | undefined): Promise<void> {
    if (!info) return;
    try {
      const added = await backend.reconcile(info.minuteUsed, info.dayUsed);
      if (added > 0) {
        metrics.phantoms(added);
        logger.info('gateway reports more use than counted: phantom reservations added', { added, ...info });
      }
    } catch (err) {
      logger.warn('could not reconcile the upstream budget', { error: err instanceof Error ? err.message : String(err) });
    }
  }

  const running = new Set<Promise<void>>();
  function background(p: Promise<void>): void {
    running.add(p);
    void p.finally(() => running.delete(p));
  }

  /** The probe's outcome, told in the background (a failure leaves the probe to its lease: logged). */
  function settle(slot: Slot, o: CallOutcome): void {
    background(slot.outcome(o).catch((err: unknown) => {
      logger.warn('could not settle the upstream budget probe', { error: err instanceof Error ? err.message : String(err) });
    }));
  }

  // After a call that went well, one reconcile at a time per process: answers arriving while one runs leave only
  // the newest rate-limit info, reconciled next. The gateway's newest count holds any excess the older ones
  // showed (or it has left the window and no longer matters), so nothing is under-counted; under load a sale no
  // longer pays a Redis command of its own for it (bench/trace-sale.js).
  let newest: RateLimitInfo | undefined;
  let reconciling = false;
  const takeNewest = (): RateLimitInfo | undefined => {
    const info = newest;
    newest = undefined;
    return info;
  };
  function reconcileSoon(info: RateLimitInfo | undefined): void {
    if (!info) return;
    newest = info;
    if (reconciling) return;
    reconciling = true;
    background((async () => {
      try {
        for (let next = takeNewest(); next; next = takeNewest()) await reconcile(next);
      } finally {
        reconciling = false;
      }
    })());
  }

  const deadlineOf = (cls: CallClass, started: number, runOpts: RunOptions) =>
    started + (runOpts.maxWaitMs ?? maxWaitOf(classes, cls));

  /** The hashed caller of a read or background call; other classes have no per-caller share. */
  const callerOf = (cls: CallClass, runOpts: RunOptions) =>
    runOpts.caller !== undefined && isPaced(cls) ? callerId(runOpts.caller) : undefined;

  /** The ahead reservation `runOpts` hands over, if it is this class's and still unspent (then it is spent). */
  function take(cls: CallClass, runOpts: RunOptions): Ahead | undefined {
    const ahead = runOpts.ahead && aheads.get(runOpts.ahead);
    if (!ahead || ahead.spent || ahead.cls !== cls) return undefined;
    ahead.spent = true;
    return ahead;
  }

  return {
    reserveAhead(cls: CallClass, runOpts: RunOptions = {}): AheadSlot {
      const asked = clock();
      const deadline = deadlineOf(cls, asked, runOpts);
      // No wait: a queued slot would move the class's queue end, which giving it back cannot undo.
      // Nor is its refusal told to anyone: it moves no promised start (promise: false).
      const grant = closed ? Promise.reject(new LimiterUnavailableError('limiter closed')) : backend.reserve(cls, 0, { promise: false });
      // Its failure belongs to the run() that takes it; a released one's is of no interest.
      grant.catch(() => undefined);
      const ahead: Ahead = { cls, asked, deadline, grant, spent: false };
      const slot: AheadSlot = {
        cls,
        release() {
          if (ahead.spent) return SETTLED;
          ahead.spent = true;
          return grant.then((g) => (g.ok ? g.release() : undefined)).catch(() => undefined);
        },
      };
      aheads.set(slot, ahead);
      return slot;
    },

    async acquire(cls: CallClass, runOpts: RunOptions = {}): Promise<void> {
      const started = clock();
      // A read the gateway client re-sends: its outcome is not seen here, so a probe's slot is handed on.
      const slot = await acquire(cls, deadlineOf(cls, started, runOpts), runOpts.signal, undefined, callerOf(cls, runOpts));
      if (slot.probe) background(slot.outcome('lost').catch(() => undefined));
      metrics.queueWait(cls, (clock() - started) / 1000);
    },

    async run<T>(cls: CallClass, call: () => Promise<GatewayResult<T>>, runOpts: RunOptions = {}): Promise<GatewayResult<T>> {
      let ahead = take(cls, runOpts);
      const started = ahead ? ahead.asked : clock();
      const deadline = ahead ? ahead.deadline : deadlineOf(cls, started, runOpts);
      let requeued = false;
      const caller = callerOf(cls, runOpts);
      for (;;) {
        const slot = await acquire(cls, deadline, runOpts.signal, ahead, caller);
        ahead = undefined;
        metrics.queueWait(cls, (clock() - started) / 1000);
        try {
          const result = await call();
          if (slot.probe) settle(slot, 'answered');
          // Not awaited (issue 15): the caller's next Redis write (the idempotency completion) goes out in the
          // same tick and ioredis pipelines both, so a sale pays no extra round trip for it. reconcile() logs
          // its own failures; close() waits for the ones still running. Coalesced (reconcileSoon).
          reconcileSoon(result.rateLimit);
          return result;
        } catch (err) {
          if (!(err instanceof GatewayError)) {
            if (slot.probe) settle(slot, 'lost');
            throw err;
          }
          if (err.status !== 429) {
            await reconcile(err.rateLimit);
            // Any other answer below 500 says the gateway takes calls; a 5xx or no answer proves nothing.
            if (slot.probe) settle(slot, err.status !== undefined && err.status < 500 ? 'answered' : 'lost');
            throw err;
          }
          // Any 429 means our count was short: the key is unsure until a probe gets an answer (issue 40). Its
          // X-Rate-Limit is not reconciled: a full count there would add phantoms at "now" and close the whole
          // window again, which the probe is there to avoid; the probe's own answer is reconciled instead. A
          // count at the gateway's limit places the next probe where the window can reopen (windowFull).
          metrics.upstream429();
          logger.warn('gateway answered 429: one probe at a time until it takes calls again', { status: err.status, errorcode: err.errorcode, probe: slot.probe });
          await slot.outcome('rate_limited', err.rateLimit);
          // Only 429 with errorcode 155 proves the call was not processed: re-queue it once, within its deadline.
          if (!(err instanceof GatewayRateLimitedError) || requeued) throw err;
          requeued = true;
        }
      }
    },

    async close(): Promise<void> {
      closed = true;
      for (const wake of [...sleepers]) wake();
      await Promise.allSettled([...running]);
      await backend.close();
    },
  };
}
