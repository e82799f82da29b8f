import type { Transaction } from '../gateway/types';
import { declineClassOf, returnClassOf } from './declines';
import { dueAt } from './periods';
import type { Attempt, DeclineClass, SaleLink, SubscriptionRecord, SubscriptionStatus } from './types';

/**
 * The subscription's state machine as pure functions of the record (each returns the next record, version
 * bumped, or undefined when there is nothing to change), so the store's compare-and-set can re-apply one to a
 * record someone else changed meanwhile, and the tests read it without Redis.
 */
export interface RetryPolicy {
  /** SUBSCRIPTION_RETRY_SCHEDULE_MS: a soft decline's retries, each counted from the period's due date. */
  scheduleMs: readonly number[];
  /** SUBSCRIPTION_EXHAUSTED_ACTION: what the retries' end makes of the subscription. */
  exhausted: 'unpaid' | 'cancel';
}

const HISTORY_KEPT = 50;

const iso = (ms: number) => new Date(ms).toISOString();
const bump = (r: SubscriptionRecord, change: Partial<SubscriptionRecord>): SubscriptionRecord => ({ ...r, ...change, version: r.version + 1 });
const withAttempt = (r: SubscriptionRecord, a: Attempt) => [...r.history, a].slice(-HISTORY_KEPT);

export const periodDue = (r: SubscriptionRecord, n: number) => dueAt(r.anchor_ms, r.interval, r.interval_count, n);

/** Where a subscription whose periods are paid up to `next` stands: the next due date, or completed. */
function planNext(r: SubscriptionRecord, next: number): Partial<SubscriptionRecord> {
  if (r.count !== null && next >= r.count) return { status: 'completed', due_ms: null, next_period: next };
  return { status: 'active', due_ms: periodDue(r, next), next_period: next, attempts: 0 };
}

export type Outcome =
  | { kind: 'approved'; transaction: Transaction }
  | { kind: 'declined' | 'error'; transaction: Transaction }
  /** Never sent because the card or the customer was removed (guarantee 10): a hard decline on that card. */
  | { kind: 'removed' }
  /** Never sent because the card updater said the card's account is closed: a hard decline on that card. */
  | { kind: 'closed' };

const notSent = (o: Outcome): o is { kind: 'removed' } | { kind: 'closed' } => o.kind === 'removed' || o.kind === 'closed';

/** The events a transition makes, named by the contract. */
export type SubscriptionEventType =
  | 'subscription.created' | 'subscription.renewed' | 'subscription.payment_failed' | 'subscription.past_due' | 'subscription.unpaid'
  | 'subscription.canceled' | 'subscription.completed' | 'subscription.updated';

export interface Transition {
  next: SubscriptionRecord;
  events: SubscriptionEventType[];
}

/** A subscription canceled now, nothing more due: a cancel that does not wait for the period's end, a customer's deletion. */
export const canceledNow = (r: SubscriptionRecord): Transition =>
  ({ next: { ...r, status: 'canceled', due_ms: null, cancel_at_period_end: false, version: r.version + 1 }, events: ['subscription.canceled'] });

/**
 * The answer to attempt `attempt` on period `period`, applied once: a record whose period or attempt count has
 * moved on already holds it (a replay, another replica) and is left alone.
 */
export function applyOutcome(r: SubscriptionRecord, period: number, attempt: number, outcome: Outcome, nowMs: number, policy: RetryPolicy, pm: string): Transition | undefined {
  if (r.next_period !== period || r.attempts !== attempt) return undefined;
  const t = transition(r, period, attempt, outcome, nowMs, policy, pm);
  // Canceled or paused while the attempt was out (a cancel that waited out its lease): the attempt is recorded,
  // the status stays, and nothing more is planned.
  if (r.status === 'canceled' || r.status === 'paused') return { next: { ...t.next, status: r.status, due_ms: null }, events: t.events.filter((e) => e === 'subscription.renewed' || e === 'subscription.payment_failed') };
  return t;
}

function transition(r: SubscriptionRecord, period: number, attempt: number, outcome: Outcome, nowMs: number, policy: RetryPolicy, pm: string): Transition {
  const sale = notSent(outcome) ? null : outcome.transaction.key || null;
  if (outcome.kind === 'approved') {
    const plan = planNext(r, period + 1);
    const record: Attempt = { period, sale, result: 'approved', decline_class: null, decline_code: null, at: iso(nowMs), next_retry_at: null };
    const next = bump(r, { ...plan, periods_charged: r.periods_charged + 1, history: withAttempt(r, record), sending: null });
    const events: SubscriptionEventType[] = ['subscription.renewed'];
    if (next.status === 'completed') events.push('subscription.completed');
    return { next, events };
  }
  const cls: DeclineClass = notSent(outcome) ? 'hard' : declineClassOf(outcome.transaction);
  const code = notSent(outcome) ? (outcome.kind === 'closed' ? 'account_closed' : 'removed') : outcome.transaction.error_code ?? null;
  const retryAt = cls === 'soft' ? policy.scheduleMs[attempt] : undefined;
  // A retry falls after the due date by the schedule; one already behind the clock runs at once.
  const due = retryAt === undefined ? null : Math.max(nowMs, periodDue(r, period) + retryAt);
  const record: Attempt = { period, sale, result: notSent(outcome) ? 'not_sent' : outcome.kind, decline_class: cls, decline_code: code, at: iso(nowMs), next_retry_at: due === null ? null : iso(due) };
  const exhausted = cls === 'soft' && due === null;
  let status: SubscriptionStatus = 'past_due';
  if (exhausted) status = policy.exhausted === 'cancel' ? 'canceled' : 'unpaid';
  const next = bump(r, {
    status, due_ms: due, attempts: attempt + 1, history: withAttempt(r, record), sending: null,
    // A hard decline is never retried on the same card (guarantee 13): only a new card or a new default lifts it.
    blocked_method: cls === 'hard' ? pm : r.blocked_method,
  });
  const events: SubscriptionEventType[] = ['subscription.payment_failed'];
  if (r.status !== 'past_due' && status === 'past_due') events.push('subscription.past_due');
  if (status === 'unpaid') events.push('subscription.unpaid');
  if (status === 'canceled') events.push('subscription.canceled');
  return { next, events };
}

/**
 * A bank payment of period `link.period` came back (ach.returned, days after it was approved): the period is unpaid
 * again, once (a return already in the history is left alone). What it does (docs/subscriptions.md, "Bank accounts"):
 *   - the latest period charged, with no later attempt under way: reopened (`next_period` back to it, a fresh
 *     attempt number, so its retry is a new write key) and `past_due`; a soft return (R01, R09) is retried on
 *     the retry schedule counted from the return (exhausted: `unpaid` or canceled, as for declines), a hard one
 *     blocks the account and waits for another method (as a hard decline does);
 *   - an older period (a later one is already charged or under way), or a canceled or paused subscription: the
 *     return is recorded (history, `periods_charged`) and a hard code blocks the account, but that period is not
 *     collected again by tokengate: the merchant learns it from `sale.returned` and `subscription.payment_failed`.
 */
export function applyReturn(r: SubscriptionRecord, link: SaleLink & { sale: string; code: string | undefined }, nowMs: number, policy: RetryPolicy): Transition | undefined {
  if (r.history.some((a) => a.sale === link.sale && a.result === 'returned')) return undefined;
  const cls = returnClassOf(link.code);
  const reopen = link.period === r.next_period - 1 && r.attempts === 0 && r.sending === null
    && (r.status === 'active' || r.status === 'completed' || r.status === 'past_due');
  const retryAt = reopen && cls === 'soft' ? policy.scheduleMs[link.attempt] : undefined;
  const due = retryAt === undefined ? null : nowMs + retryAt;
  const record: Attempt = { period: link.period, sale: link.sale, result: 'returned', decline_class: cls, decline_code: link.code ?? null, at: iso(nowMs), next_retry_at: due === null ? null : iso(due) };
  const common = { history: withAttempt(r, record), periods_charged: Math.max(0, r.periods_charged - 1), blocked_method: cls === 'hard' ? link.payment_method : r.blocked_method };
  if (!reopen) {
    const status: SubscriptionStatus = cls === 'hard' && r.status === 'active' ? 'past_due' : r.status;
    const events: SubscriptionEventType[] = ['subscription.payment_failed'];
    if (status === 'past_due' && r.status !== 'past_due') events.push('subscription.past_due');
    return { next: bump(r, { ...common, status }), events };
  }
  let status: SubscriptionStatus = 'past_due';
  if (cls === 'soft' && due === null) status = policy.exhausted === 'cancel' ? 'canceled' : 'unpaid';
  const next = bump(r, { ...common, status, next_period: link.period, attempts: link.attempt + 1, due_ms: due });
  const events: SubscriptionEventType[] = ['subscription.payment_failed'];
  if (status === 'past_due' && r.status !== 'past_due') events.push('subscription.past_due');
  if (status === 'unpaid') events.push('subscription.unpaid');
  if (status === 'canceled') events.push('subscription.canceled');
  return { next, events };
}

/**
 * A return through its link, whether or not the linked attempt's approval is recorded yet: a link is written just
 * before its period is marked paid (renewals.ts settle, the reconciler's resolution included), so a return heard in
 * between would otherwise meet an unpaid period (nothing reopened, `periods_charged` not lowered) and the approval
 * landing after it would mark the returned period paid. The link exists only for an approved debit: its approval
 * is recorded first, then the return, in one change (one version step, both transitions' events).
 */
export function applyLinkedReturn(r: SubscriptionRecord, link: SaleLink & { sale: string; code: string | undefined }, nowMs: number, policy: RetryPolicy): Transition | undefined {
  const approved: Outcome = { kind: 'approved', transaction: { type: 'transaction', key: link.sale, refnum: '', is_duplicate: 'N', result_code: 'A', result: '', authcode: '' } };
  const paid = applyOutcome(r, link.period, link.attempt, approved, nowMs, policy, link.payment_method);
  const back = applyReturn(paid?.next ?? r, link, nowMs, policy);
  if (!back) return undefined; // returned already: the return path never records an approval alone
  if (!paid) return back;
  return { next: { ...back.next, version: r.version + 1 }, events: [...paid.events, ...back.events] };
}

/** A subscription canceled at its period's end reaches that end: canceled, nothing charged. */
export function endAtPeriodEnd(r: SubscriptionRecord): Transition | undefined {
  if (!r.cancel_at_period_end || (r.status !== 'active' && r.status !== 'past_due')) return undefined;
  return { next: bump(r, { status: 'canceled', due_ms: null, sending: null }), events: ['subscription.canceled'] };
}

/** Statuses a change (PATCH, cancel) may act on (contract: `subscription_not_active` otherwise). */
export const isChangeable = (s: SubscriptionStatus) => s === 'active' || s === 'past_due' || s === 'paused' || s === 'unpaid';
