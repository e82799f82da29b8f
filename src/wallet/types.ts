import type { Customer, PaymentMethod } from '../gateway/types';

/**
 * The wallet's shared state in Redis (issue 26, and issue 25 item 1 for customers and cards), one customer per
 * hash tag (`{<prefix>:cust:<custkey>}`) so a customer's view and its removal guard share a Cluster slot:
 *
 *   view   what GET /v1/customers/{c} and its payment method list answer from (guarantee 9): the customer's
 *          fields, its payment methods (masked, as the gateway lists them), the default tokengate chose, a
 *          version bumped by every write (a refresh applies only over the version it read: it never overwrites
 *          a newer write) and when it last matched the gateway (`seenMs`; absent: nothing loaded yet).
 *   guard  guarantee 10: a tombstone per removed payment method (`rm:<pmkey>`), `deleted` once the customer is
 *          removed, and the sale attempts in flight on the customer (`fly:<attempt>` = `<pmkey>|sending|<lease
 *          end>` or `…|waiting|…`). A DELETE tombstones first and waits for the attempts `sending`; every charge
 *          checks the tombstones atomically before it is sent (src/wallet/README.md, "The removal guard").
 *
 * one key per payment method tokengate learned of (`{<prefix>:pmcust:<pmkey>}` = its custkey: the card updater's
 * index), and one key per merchant `customerid` created through tokengate (`{<prefix>:custid:<hash>}`): the attempt
 * creating it, then its custkey, so a sign-up retried under a fresh Idempotency-Key makes no second customer.
 */

/** A customer's fields as the view keeps them: the gateway's customer without its payment methods. */
export type CustomerRecord = Omit<Customer, 'payment_methods'>;

/** The view of one customer, as one read returns it. */
export interface WalletSnapshot {
  /** Bumped by every write to the view (and by each removal); a refresh applies only over the version it read. */
  version: number;
  /** When the view last matched the gateway (ms); undefined while nothing was loaded (a miss). */
  seenMs: number | undefined;
  customer: CustomerRecord | undefined;
  /** Masked, tombstoned ones never among them. */
  methods: PaymentMethod[];
  /** The method a PATCH `default: true` chose (only while it is still listed). */
  chosenDefault: string | undefined;
  /** The customer was removed through tokengate: every look-up, list, token and sale for it answers 404. */
  deleted: boolean;
}

/** What a refresh found when it tried to apply (CAS by version). */
export type RefreshResult = 'applied' | 'stale' | 'deleted';

/** A customerid claim (POST /v1/customers): this attempt's now, another's in progress, or created already. */
export type CustomerIdClaim =
  | { kind: 'claimed' }
  | { kind: 'pending'; attempt: string }
  | { kind: 'exists'; custkey: string };

export interface WalletStore {
  /** The customer's view and whether it was deleted: one round trip. */
  read(custkey: string): Promise<WalletSnapshot>;
  /**
   * Replaces the view with the gateway's word (a miss, a forced read, a stale view refreshed), only if nothing
   * was written since `version` was read; tombstoned methods are left out; nothing on a deleted customer.
   */
  refresh(custkey: string, version: number, customer: CustomerRecord, methods: readonly PaymentMethod[]): Promise<RefreshResult>;
  /**
   * A write the gateway confirmed, in the same step as its answer (never "invalidate and hope"): the method as
   * the gateway answered it (a loaded view only: an unloaded one reads the gateway's word when next asked), and
   * `makeDefault` (kept either way). False when the method or the customer was removed meanwhile.
   */
  putMethod(custkey: string, pmkey: string, method: PaymentMethod | undefined, makeDefault: boolean): Promise<boolean>;
  /** The customer's fields as the gateway answered a create or an update; `created`: a new customer, loaded with no method. */
  putCustomer(custkey: string, customer: CustomerRecord, created: boolean): Promise<void>;
  /** A write whose outcome is unknown: the view is no longer trusted; the next read asks the gateway. */
  forget(custkey: string): Promise<void>;
  /** One replica refreshes a stale view at a time: true when this caller holds the claim for `ttlMs`. */
  claimRefresh(custkey: string, ttlMs: number): Promise<boolean>;

  /**
   * A sale attempt on `pmkey` ('' for a card not stored yet) enters the guard as `state`, its lease `leaseMs`
   * from now (Redis clock): false, and nothing recorded, when the method or the customer is removed.
   */
  enter(custkey: string, pmkey: string, attempt: string, state: 'sending' | 'waiting', leaseMs: number): Promise<boolean>;
  /** The attempt is over (with its completion, or when it failed): a DELETE stops waiting for it. */
  leave(custkey: string, attempt: string): Promise<void>;
  /** Whether `pmkey` (or the customer) was removed. */
  isRemoved(custkey: string, pmkey: string): Promise<boolean>;
  /**
   * A removal's first step (pmkey '' = the customer): the tombstone (kept at least `tombstoneTtlMs`), the view
   * without it, and the attempts still `sending` on it, in one atomic step.
   */
  tombstone(custkey: string, pmkey: string, tombstoneTtlMs: number): Promise<string[]>;
  /** What a customer's removal tombstoned: its methods' keys and its fields (for its customerid). */
  removedOf(custkey: string): Promise<{ pmkeys: string[]; customer: CustomerRecord | undefined }>;
  /** How many of `attempts` are still `sending` with their lease running (Redis clock). */
  stillSending(custkey: string, attempts: readonly string[]): Promise<number>;

  /**
   * The customer a payment method belongs to (the card updater's events name only the method): indexed by every
   * write that tells tokengate of a card (a refresh's load, a card added or stored by a sale). Undefined: unknown.
   */
  customerOf(pmkey: string): Promise<string | undefined>;
  /** The card updater said the card's account is closed: renewals count it a hard decline without a gateway call. */
  flagClosed(custkey: string, pmkey: string): Promise<void>;
  /** Whether `pmkey` was flagged closed (flagClosed). */
  isClosed(custkey: string, pmkey: string): Promise<boolean>;
  /** A new card behind the method (the card updater's `updated_card`): the closed flag no longer holds. */
  clearClosed(custkey: string, pmkey: string): Promise<void>;

  /** Claims `customerid` for `attempt` (SET NX), or says who holds it. */
  claimCustomerId(customerid: string, attempt: string): Promise<CustomerIdClaim>;
  /** The create under `attempt` made `custkey`: the claim names it from now on. */
  settleCustomerId(customerid: string, attempt: string, custkey: string): Promise<void>;
  /** Frees the claim if it is still `holder`'s (an attempt proven not sent, or the customer it named removed). */
  releaseCustomerId(customerid: string, holder: { attempt: string } | { custkey: string }): Promise<void>;
}

/** How long the wallet's keys live after their last write: the chosen default and tombstones are state, not cache. */
export const WALLET_TTL_MS = 400 * 24 * 3600 * 1000;
