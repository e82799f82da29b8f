import { RECONCILE_PASS_JITTER } from '../config/reconcile-deadline';
import type { ReconcileConfig } from '../config/types';
import type { IdempotencyStore, StoredResponse, UnknownRecord, WriteContext } from '../idempotency';
import type { Logger } from '../observability/logger';
import type { EventDraft, EventSink } from '../events/types';
import { eventsOfWrite } from '../events/write-events';
import { writeReference } from '../writes/reference';
import type { ReconcileMetrics } from './metrics';
import { encodePendingWrite, type PendingWrite } from './pending-write';
import type { DueEntry, PendingWrites } from './pending-writes';

/**
 * The reconciler (issue 12, contract guarantee 6): every write whose outcome is unknown (timeout, reset after
 * sending, 5xx, a replica killed mid-call) is resolved from the gateway's own records.
 *
 * It runs on every replica. Work comes from the due set (pending-writes.ts): an entry falls due when its
 * attempt's lease ends (so a dead replica's write is noticed) or when its next look is planned. Claiming an
 * entry pushes its due time forward, which is the per-key lease: one replica at a time, and another one
 * takes over if it dies. The idempotency record stays the truth; the reconciler's transitions are refused
 * when a duplicate-folding retry took the key over meanwhile.
 *
 *   found in the gateway's records   → the key completes with the real answer (replayed as reconciled)
 *   absent at a look made at least `maxProcessingMs` after the outcome became unknown → the key is released
 *   absent earlier                    → looked for again at since + maxProcessingMs
 *   the look failed (budget, gateway) → tried again after `retryMs`; never released without proof
 */
export type FindResult =
  /** `response` is what the write would have answered; `transaction` the gateway key it was found under. */
  | { kind: 'found'; response: StoredResponse; transaction: string; charged: boolean }
  /** `onProven`: what to undo once absence is proven (e.g. release a refund reservation). */
  | { kind: 'absent'; onProven?: () => Promise<unknown> };

/**
 * Looks a write up in the gateway's records from what its record says it was. Throws when it could not look
 * (then it is tried again later).
 */
export type Finder = (write: PendingWrite, record: UnknownRecord) => Promise<FindResult>;

/** The header a reconciled replay carries (documented in docs/checkout.md and openapi.json). */
export const RECONCILED_HEADER = 'Tokengate-Reconciled';

export interface Reconciler {
  start(): void;
  /** Stops the loop and waits for the look in progress. */
  stop(): Promise<void>;
  /** One pass over due work (tests drive it directly); resolves with how many entries it handled. */
  runOnce(): Promise<number>;
  /**
   * An operator's decision on a write the gateway's records cannot decide (issue 42; settle-by-hand.ts): applied
   * exactly as a look's result would be (the key replays what was found, or is released), recorded with who
   * decided what. `decide` reads the record and returns the result; it runs only while the key is unknown.
   */
  settleByHand(write: PendingWrite, decide: (record: UnknownRecord) => Promise<FindResult>, decision: HandDecision): Promise<HandOutcome>;
}

/** Who settled an unknown outcome by hand, and what they decided (kept with the record: PendingWrites.keepDecision). */
export interface HandDecision {
  by: string;
  outcome: 'found' | 'absent';
  transaction?: string;
  reason: string;
}

/** `not_unknown`: the key is not unknown (already settled, never used, or in flight); `too_early`: it may still land. */
export type HandOutcome = { result: 'settled'; operation: string; response?: StoredResponse } | { result: 'not_unknown' | 'too_early' | 'taken_over' };

export interface ReconcilerDeps {
  pending: PendingWrites;
  store: IdempotencyStore;
  find: Finder;
  settings: Pick<ReconcileConfig, 'maxProcessingMs' | 'intervalMs' | 'retryMs'>;
  logger: Logger;
  metrics: ReconcileMetrics;
  /** Entries claimed per pass, and how long a claim keeps other replicas off an entry. */
  batch?: number;
  claimMs?: number;
  now?: () => number;
  /**
   * The payment event log: a write found in the gateway's records emits the event its answer makes, as its
   * completion would have (src/events/write-events.ts), once: only the resolution that ended the record emits.
   */
  events?: EventSink;
  /** Called after events were appended (the delivery looks at once). */
  appended?: () => void;
  /**
   * A write found in the gateway's records (by a look or by hand): what its use case records beside the answer
   * (the write's `alsoRecord`), applied now as its completion would have, whichever path resolved it. A renewal's
   * subscription learns its period's answer and a bank debit's link to it here (src/subscriptions/renewals.ts):
   * before, only a replay of the renewal did, and a return that came first found no subscription. Only the
   * resolution that ended the record calls it (and the follow-through passes after it, until it succeeds: each call
   * safe to repeat); a failure keeps the key's follow-through mark, tried again after `retryMs`.
   */
  resolved?: (write: PendingWrite, context: WriteContext | undefined, response: StoredResponse) => Promise<unknown>;
  /**
   * A completed key whose follow-through is marked pending (IdempotencyStore.markFollowing: its answer was kept and
   * what its write records beside it was refused, and its replica may have died before keeping that): the use
   * case's records, re-derived for each write operation from its answer, its context or the gateway
   * (src/reconcile/find.ts, createFollowThrough; each safe to repeat), answering the events the write handed over
   * itself that it re-derived. The reconciler then appends the write's payment events with them (once per change)
   * and calls `resolved`, as for a write it found, and clears the mark. Throws when it could not yet (tried again
   * after `retryMs`). Also run for a write found by a look or by hand, whose look re-made only some of it (a card
   * verification's card is not in its customer's view): its key is resolved marked, so a failure is retried the same way.
   */
  followThrough?: (write: PendingWrite, context: WriteContext | undefined, response: StoredResponse) => Promise<readonly EventDraft[] | void>;
}

/** Which key a log line is about: the caller (`sub`) and its Idempotency-Key (the card guard refused card data in both). */
const which = (w: PendingWrite) => ({ caller: w.scope, idempotency_key: w.key });

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { pending, store, find, settings, logger, metrics } = deps;
  const now = deps.now ?? Date.now;
  const batch = deps.batch ?? 10;
  const claimMs = deps.claimMs ?? Math.max(30_000, 4 * settings.retryMs);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  /**
   * A completed key whose follow-through is marked pending: what its write records beside the answer, re-applied
   * (ReconcilerDeps.followThrough), its events and `resolved`, then the mark cleared. Each part is safe to repeat:
   * the replica that answered may have kept some of it, or keep it still. A write found in the gateway's records (by
   * a look or by hand) is resolved marked (IdempotencyStore.resolve) and goes through here at once: a failure keeps
   * the mark and its due entry, tried again after `retryMs` (before: logged, and its records never re-applied).
   */
  async function followThrough({ member, write }: DueEntry, context: WriteContext | undefined, response: StoredResponse): Promise<void> {
    const op = context?.op ?? 'unknown';
    try {
      const given = (await deps.followThrough?.(write, context, response)) ?? [];
      // A failure here keeps the mark until the events are in the log: those the answer makes, and those the write
      // handed over itself that the follow-through re-derived (Written.events).
      const events = deps.events && context ? eventsOfWrite({ context, response, reference: writeReference(write.scope, write.key) }, given) : [];
      if (events.length > 0) {
        await deps.events?.append(events);
        deps.appended?.();
      }
      // A first charge's subscription or a renewal's period (the checkout's `alsoRecord`) is the use case's record
      // beside the answer too: the mark stays until it is kept.
      await deps.resolved?.(write, context, response);
    } catch (err) {
      logger.warn('reconcile: could not re-apply a completed write\'s records or events yet; trying again later', { operation: op, err });
      await pending.reschedule(member, now() + settings.retryMs);
      return;
    }
    await store.followed(write.scope, write.key);
    logger.info('reconcile: a completed write\'s records and events re-applied', { ...which(write), operation: op });
    await pending.untrack(member);
  }

  async function handle(entry: DueEntry): Promise<void> {
    const { member, write } = entry;
    const seen = await store.inspect(write.scope, write.key);
    if (seen.state === 'completed' && seen.follow) {
      await followThrough(entry, seen.follow.context, seen.follow.response);
      return;
    }
    if (seen.state === 'absent' || seen.state === 'completed') {
      await pending.untrack(member);
      return;
    }
    if (seen.state === 'in_progress') {
      await pending.reschedule(member, now() + seen.leaseRemainingMs);
      return;
    }
    const { record } = seen;
    const op = record.context?.op ?? 'unknown';
    if (await pending.markUnknown(member, record.sinceMs, now() + claimMs)) metrics.opened.inc({ operation: op });
    let found: FindResult;
    try {
      found = await find(write, record);
    } catch (err) {
      metrics.looks.inc({ operation: op, result: 'failed' });
      logger.warn('reconcile: could not look the write up yet; trying again later', { operation: op, err });
      await pending.reschedule(member, now() + settings.retryMs);
      return;
    }
    if (found.kind === 'found') {
      metrics.looks.inc({ operation: op, result: 'found' });
      const response = { ...found.response, headers: { ...found.response.headers, [RECONCILED_HEADER]: 'true' } };
      if ((await store.resolve(write.scope, write.key, record.attempts, response)) === 'done') {
        metrics.resolved.inc({ operation: op, result: found.charged ? 'charged' : 'not_charged' });
        logger.info('reconcile: unknown outcome resolved from the gateway records', { ...which(write), operation: op, resolution: 'found', status: response.status, transaction: found.transaction, unknown_for_ms: now() - record.sinceMs });
        await followThrough(entry, record.context, response);
      } else {
        await pending.reschedule(member, now()); // a retry took the key over: look at the record again
      }
      return;
    }
    metrics.looks.inc({ operation: op, result: 'absent' });
    const provenAt = record.sinceMs + settings.maxProcessingMs;
    if (now() >= provenAt) {
      await found.onProven?.();
      if ((await store.release(write.scope, write.key, record.attempts)) === 'done') {
        metrics.resolved.inc({ operation: op, result: 'not_sent' });
        logger.info('reconcile: unknown outcome resolved: not in the gateway records, key released', { ...which(write), operation: op, resolution: 'absent', unknown_for_ms: now() - record.sinceMs });
        await pending.untrack(member);
      } else {
        await pending.reschedule(member, now());
      }
      return;
    }
    // Not there yet, but a slow processor may still record it: look again once it certainly would have.
    await store.setNextLook(write.scope, write.key, provenAt);
    await pending.reschedule(member, provenAt);
  }

  async function runOnce(): Promise<number> {
    const entries = await pending.claimDue(batch, claimMs);
    for (const entry of entries) {
      try {
        await handle(entry);
      } catch (err) {
        // Redis trouble: the claim runs out and the entry falls due again by itself.
        logger.warn('reconcile: handling a due write failed', { err });
      }
    }
    return entries.length;
  }

  // A pass fails on every replica every interval while Redis is down: one line when passes start failing and
  // one when they succeed again (the outage itself is tokengate_redis_up and its alert), not one a second.
  let failing = false;
  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runOnce()
        .then((n) => {
          if (failing) logger.info('reconcile: passes succeed again');
          failing = false;
          return n;
        }, (err: unknown) => {
          if (failing) logger.debug('reconcile: pass failed', { err });
          else logger.warn('reconcile: pass failed; quiet until a pass succeeds', { err });
          failing = true;
          return 0;
        })
        // A full batch means more may be due: go again soon, else wait an interval (jittered across replicas;
        // the config's deadline rule counts the longest gap, src/config/reconcile-deadline.ts).
        .then((n) => schedule(n >= batch ? 10 : settings.intervalMs * (1 - RECONCILE_PASS_JITTER + 2 * RECONCILE_PASS_JITTER * Math.random())));
    }, delayMs);
    timer.unref();
  }

  async function settleByHand(write: PendingWrite, decide: (record: UnknownRecord) => Promise<FindResult>, decision: HandDecision): Promise<HandOutcome> {
    const member = encodePendingWrite(write);
    const seen = await store.inspect(write.scope, write.key);
    if (seen.state !== 'unknown') return { result: 'not_unknown' };
    const { record } = seen;
    const op = record.context?.op ?? 'unknown';
    // "Absent" while the write may still be processed would free the key for a second one: never before then.
    if (decision.outcome === 'absent' && now() < record.sinceMs + settings.maxProcessingMs) return { result: 'too_early' };
    const found = await decide(record);
    const kept = { ...decision, operation: op, at: new Date(now()).toISOString(), unknown_for_ms: now() - record.sinceMs };
    if (found.kind === 'found') {
      const response = { ...found.response, headers: { ...found.response.headers, [RECONCILED_HEADER]: 'true' } };
      if ((await store.resolve(write.scope, write.key, record.attempts, response)) !== 'done') return { result: 'taken_over' };
      metrics.resolved.inc({ operation: op, result: found.charged ? 'charged' : 'not_charged' });
      await pending.keepDecision(member, kept);
      logger.warn('reconcile: unknown outcome settled by hand: found', { ...which(write), operation: op, resolution: 'by_hand', decided_by: decision.by, transaction: found.transaction, reason: decision.reason, unknown_for_ms: kept.unknown_for_ms });
      await followThrough({ member, write }, record.context, response);
      return { result: 'settled', operation: op, response };
    }
    await found.onProven?.();
    if ((await store.release(write.scope, write.key, record.attempts)) !== 'done') return { result: 'taken_over' };
    metrics.resolved.inc({ operation: op, result: 'not_sent' });
    await pending.keepDecision(member, kept);
    logger.warn('reconcile: unknown outcome settled by hand: absent, key released', { ...which(write), operation: op, resolution: 'by_hand', decided_by: decision.by, reason: decision.reason, unknown_for_ms: kept.unknown_for_ms });
    await pending.untrack(member);
    return { result: 'settled', operation: op };
  }

  return {
    runOnce,
    settleByHand,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(settings.intervalMs * Math.random());
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
