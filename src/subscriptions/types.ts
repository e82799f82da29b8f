/**
 * Subscriptions (issue 37; contract, "Subscriptions"): a customer's stored card charged a fixed amount every
 * interval, by tokengate itself. The record is the API object plus what the renewals need to be exact:
 *   version      bumped by every change; every change is a compare-and-set on it (two replicas, one winner)
 *   next_period  the index of the next period to charge (period n falls due at anchor + n intervals)
 *   attempts     attempts already made on next_period (each attempt is its own write key: see renewals.ts)
 *   sending      a renewal attempt between its status check and its answer: a cancel waits for it, so no
 *                charge is sent after a cancel has answered (guarantee 13)
 *   blocked_method  the card a hard decline was given on: never charged again for this subscription
 */
export type Interval = 'day' | 'week' | 'month' | 'year';

export type SubscriptionStatus = 'active' | 'past_due' | 'unpaid' | 'paused' | 'canceled' | 'completed';

export type DeclineClass = 'soft' | 'hard';

/** One charge attempt, as the subscription's `history` shows it. */
export interface Attempt {
  period: number;
  /** The sale's key at the gateway, when the gateway answered one. */
  sale: string | null;
  /** `returned`: an approved bank payment the bank took back later (its `decline_code` is the return code), or that failed after it was accepted (`ach_failed`). */
  result: 'approved' | 'declined' | 'error' | 'not_sent' | 'returned';
  decline_class: DeclineClass | null;
  /** The gateway's decline code, when it gave one (never its text: it may echo input). */
  decline_code: string | null;
  at: string;
  next_retry_at: string | null;
}

export interface Consent {
  text: string;
  accepted_at: string;
  /** The `sub` of the token that created the subscription. */
  by: string;
}

export interface SubscriptionRecord {
  key: string;
  customer: string;
  payment_method: string | null;
  amount: string;
  amount_detail: { tax?: string; tip?: string } | null;
  interval: Interval;
  interval_count: number;
  /** ms since the epoch: periods count from it. */
  anchor_ms: number;
  count: number | null;
  periods_charged: number;
  status: SubscriptionStatus;
  cancel_at_period_end: boolean;
  description: string | null;
  invoice_prefix: string | null;
  consent: Consent;
  history: Attempt[];
  created_ms: number;
  /** The first charge's sale, when one was made at creation. */
  first_sale: string | null;
  /** When the next attempt is due (ms), or null (none planned: paused, ended, or a new card awaited). */
  due_ms: number | null;
  version: number;
  next_period: number;
  attempts: number;
  sending: { period: number; until_ms: number } | null;
  blocked_method: string | null;
  /** The fingerprint of the create request (its Idempotency-Key replays only the same request). */
  fingerprint: string;
}

export interface SubscriptionStore {
  /** Stores `record` unless its key exists; answers the stored record either way (`created` says which). */
  create(record: SubscriptionRecord): Promise<{ record: SubscriptionRecord; created: boolean }>;
  get(key: string): Promise<SubscriptionRecord | undefined>;
  /** The customer's subscriptions, oldest first. */
  listByCustomer(custkey: string): Promise<SubscriptionRecord[]>;
  /**
   * Replaces the record only if its stored version is `next.version - 1` (compare-and-set), keeping the due set
   * in step with `next.due_ms` in the same atomic step. False: someone changed it first (read again).
   */
  swap(next: SubscriptionRecord): Promise<boolean>;
  /** Keys whose due time is at or before `nowMs`, earliest first. */
  due(nowMs: number, limit: number): Promise<string[]>;
  /** One replica works on a subscription's renewal at a time: true when `owner` holds it for `ttlMs`. */
  claim(key: string, owner: string, ttlMs: number): Promise<boolean>;
  release(key: string, owner: string): Promise<void>;
  /** How many subscriptions are due at or before `nowMs` (a gauge: renewals behind). */
  dueCount(nowMs: number): Promise<number>;
  /** How many are due in [fromMs, toMs] (a day's renewals still undone: spilled). */
  dueBetween(fromMs: number, toMs: number): Promise<number>;
  /**
   * A bank payment charged for a period (renewal or first charge) is linked to it, so that the bank's return of it
   * days later (ach.returned) reaches the subscription; kept BANK_SALE_LINK_TTL_MS.
   */
  linkSale(sale: string, link: SaleLink): Promise<void>;
  saleLink(sale: string): Promise<SaleLink | undefined>;
  /**
   * A first charge's terms (the subscription it creates when approved), kept by the attempt that owns the charge's
   * key before it is sent, so a resolution of its lost answer (the reconciler's, a replay's) creates the same
   * subscription: `replace` false keeps one already there (a duplicate-folding retry of the same charge). Answers
   * what is kept. Lives FirstChargeTtl.
   */
  keepFirstCharge(first: FirstCharge, replace: boolean): Promise<FirstCharge>;
  firstCharge(key: string): Promise<FirstCharge | undefined>;
  /**
   * Records a day's spill (`day` YYYY-MM-DD, by tokengate's clock) once across replicas: true for the one call
   * that recorded it (that replica counts it in the metric), false when it was judged already.
   */
  recordSpill(day: string, count: number): Promise<boolean>;
}

/** 400 days: a yearly subscription's record outlives the gap between its charges. Refreshed by every change. */
export const SUBSCRIPTION_TTL_MS = 400 * 24 * 3600 * 1000;

/**
 * A subscription whose first period is charged at its creation, before the charge is sent: `record` as it is
 * created when the charge is approved (src/subscriptions/first-charge.ts), `card` the method charged and `bank`
 * whether it is a bank account (its sale is then linked to period 0).
 */
export interface FirstCharge {
  record: SubscriptionRecord;
  card: string;
  bank: boolean;
}

/** Which attempt of which subscription a bank payment was (its key at the gateway links it). */
export interface SaleLink {
  key: string;
  period: number;
  attempt: number;
  /** The bank method charged: a hard return blocks it. */
  payment_method: string;
}

/** 90 days: past the 60 days a consumer has to return an unauthorized debit (R10; NACHA). */
export const BANK_SALE_LINK_TTL_MS = 90 * 24 * 3600 * 1000;
