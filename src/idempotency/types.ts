/**
 * Idempotency keys for sales (contract guarantee 2, issue 3 item 5). A key is scoped by the caller (JWT
 * `sub`) and bound to the request's fingerprint. Lifecycle of one record:
 *
 *   (absent) --begin--> in_progress --complete--> completed            (replayed for `retentionMs`)
 *                         |   \--abandon--> (absent)                   (nothing was sent)
 *                         |--markOutcomeUnknown / lease expiry--> unknown   (409 outcome_unknown)
 *   unknown --retryUnknown (duplicate folding)--> in_progress with the SAME invoice
 *
 * A key whose owner vanished (SIGKILL mid-sale) is never handed out as 'started' again: once its lease
 * is over, begin reports 'outcome_unknown'.
 *
 * Every write uses it (sales, captures, voids, refunds, adding a card) through src/writes. The record keeps
 * the write's context (op, customer, sale, amount, invoice, attempt start) so the reconciler (issue 12) can
 * end an unknown outcome with two more transitions: unknown --resolve--> completed (the real answer), and
 * unknown --release--> (absent) (proven not sent). Both act on the hash fields documented in lua/begin.lua.
 */

/** What a replay sends back: the tokengate answer as first sent (masked card numbers only, never card data). */
export interface StoredResponse {
  status: number;
  body: unknown;
  /** The subset of headers worth replaying (e.g. Location); `Idempotent-Replayed` is added by the caller. */
  headers: Record<string, string>;
}

/**
 * What the write under a key is, kept from begin on so that an unknown outcome can be resolved later from the
 * gateway's own records (contract guarantee 6, issue 12), even when the replica that sent it died mid-call.
 * Never card data: keys, amounts and an invoice only.
 */
export interface WriteContext {
  /**
   * The operation: 'sale', 'authorize', 'capture', 'void', 'refund', 'payment_method', and the wallet's
   * 'customer_create', 'customer_delete', 'payment_method_remove'.
   */
  op: string;
  /**
   * The customer charged or acted for (a sale is found in its transaction list); for 'customer_create', which
   * has no custkey yet, the merchant's `customerid` it is found by.
   */
  customer: string;
  /** Follow-ups: the original sale's gateway key (captures, voids and refunds are checked on it). */
  sale?: string;
  /** The amount sent (absent for a full refund or a full capture). */
  amount?: string;
  /** Sales: the payment method charged (a reconciled answer carries it, as the sale's answer would have). */
  payment_method?: string;
  /**
   * A bank payment: the shopper's authorization and the SEC code sent (the gateway's records do not hold them), so a
   * sale the reconciler finds is recorded and answered with them as an answered one is (issue 38).
   */
  bank?: { authorization: string; sec: string };
  /**
   * A sale with a payment key kept on the customer (`save_payment_method`): a check form's key the gateway debited as
   * a check saved a bank method, which the reconciler removes with the void (src/payment-methods/check-key.ts).
   */
  save?: true;
}

export interface UnknownRecord {
  /** The invoice the sale was (or may have been) sent with; needed for a duplicate-folding retry. */
  invoice: string | undefined;
  /** What was (maybe) sent; undefined for records written before contexts existed. */
  context: WriteContext | undefined;
  /** When the latest attempt under this key started (ms since the epoch, Redis clock): search back to here. */
  startedMs: number;
  /** Why the outcome is unknown: the caller's reason (e.g. 'gateway_timeout') or 'lease_expired'. */
  reason: string;
  /** When the key became unknown (ms since the epoch, Redis clock). */
  sinceMs: number;
  /** How many attempts were started under this key (1 + folding retries). */
  attempts: number;
  /** When the reconciler looks next (ms since the epoch), if it said so; with `nowMs`, the Retry-After. */
  nextLookMs?: number;
  /** The store's clock when this was read (ms since the epoch, Redis TIME on Redis). */
  nowMs?: number;
}

/** What the reconciler sees of a record (issue 12); `attempts` guards its resolve/release against races. */
export type InspectResult =
  | { state: 'absent' }
  /**
   * `follow`: its answer is kept and what the write records beside it may not be (markFollowing): the reconciler
   * re-applies it from what the write was and what it answered, then clears the mark (followed).
   */
  | { state: 'completed'; follow?: { context: WriteContext | undefined; response: StoredResponse } }
  | { state: 'in_progress'; leaseRemainingMs: number }
  | { state: 'unknown'; record: UnknownRecord };

export type BeginResult =
  /** The caller owns the key and may send the sale; it must end with complete, markOutcomeUnknown or abandon. */
  | { kind: 'started'; attempt: string; invoice: string | undefined; resumed: boolean }
  /** Another request with this key is running → 409 idempotency_in_progress with Retry-After. */
  | { kind: 'in_progress'; retryAfterSec: number; leaseRemainingMs: number }
  /**
   * Replay `response` with `Idempotent-Replayed: true`. `following`: its follow-through is marked pending
   * (markFollowing): the reconciler's due entry is its, and the replay leaves it in place.
   */
  | { kind: 'completed'; response: StoredResponse; following?: boolean }
  /** Same key, different request → 422 idempotency_key_reused. */
  | { kind: 'mismatch' }
  /** An earlier attempt may have charged → 409 outcome_unknown (or retryUnknown with folding on). */
  | { kind: 'outcome_unknown'; record: UnknownRecord };

export interface BeginOptions {
  /** How long the attempt may run before it counts as dead: the gateway timeout plus a margin. */
  leaseMs: number;
  /** The invoice the sale will carry (the caller's, or one derived from the key); kept for folding retries. */
  invoice?: string;
  /** What the write is: kept with the record so an unknown outcome can be reconciled. */
  context?: WriteContext;
}

/** Result of the owner's closing transition: 'not_owner' when the key was taken over or already closed. */
export type TransitionResult = 'done' | 'not_owner';
/** complete's answer: 'done_after_unknown' when the lease had run out and the key was seen as unknown meanwhile. */
export type CompleteResult = TransitionResult | 'done_after_unknown';

export interface IdempotencyStore {
  /** Claims the key, or says why not. One atomic step (one Redis round trip). */
  begin(scope: string, key: string, fingerprint: string, options: BeginOptions): Promise<BeginResult>;
  /**
   * Duplicate-folding mode (GATEWAY_DUPLICATE_FOLDING=true): like begin, but an 'outcome_unknown' key with
   * a stored invoice is taken over and returned as 'started' with `resumed: true` and that invoice.
   */
  retryUnknown(scope: string, key: string, fingerprint: string, options: BeginOptions): Promise<BeginResult>;
  /** Stores the answer for replay if `attempt` still owns the key (even after its lease, unless taken over). */
  complete(scope: string, key: string, attempt: string, response: StoredResponse): Promise<CompleteResult>;
  /** The sale may have been sent (timeout, reset after sending): later begins get 'outcome_unknown'. */
  markOutcomeUnknown(scope: string, key: string, attempt: string, record: { invoice?: string; reason: string }): Promise<TransitionResult>;
  /**
   * Nothing was sent (rate limited before sending, gateway unreachable before connecting): the key is freed
   * so a retry runs fresh; for a folding retry it goes back to 'outcome_unknown' instead.
   */
  abandon(scope: string, key: string, attempt: string): Promise<TransitionResult>;

  // The reconciler's transitions (issue 12, contract guarantee 6). `attempts` is what inspect() returned:
  // if a duplicate-folding retry took the key over since, the transition is refused ('not_owner').
  /** Reads a record; an in_progress one whose lease is over turns 'unknown' (as begin does). */
  inspect(scope: string, key: string): Promise<InspectResult>;
  /**
   * Found in the gateway's records: 'unknown' → 'completed' with the real answer, replayed from now on, and its
   * follow-through marked pending in the same step (as markFollowing): the reconciler re-applies what the write
   * records beside its answer until done, then calls `followed`. A crash in between leaves the mark.
   */
  resolve(scope: string, key: string, attempts: number, response: StoredResponse): Promise<TransitionResult>;
  /** Proven absent after the gateway's longest processing time: the key is freed, a retry runs once. */
  release(scope: string, key: string, attempts: number): Promise<TransitionResult>;
  /** Records when the reconciler looks next, for the Retry-After of a 409 outcome_unknown. */
  setNextLook(scope: string, key: string, atMs: number): Promise<void>;
  /**
   * The key's answer is kept and what its write records beside it (the use case's records, its payment events) was
   * refused (a Cluster node down while the answer's is up): marked so that the reconciler, finding the completed
   * key due, re-applies them (inspect's `follow`) although the replica that answered may die first. A record not
   * completed is left alone. Called only when a part failed: the common completion never pays for it.
   */
  markFollowing(scope: string, key: string): Promise<void>;
  /** The reconciler re-applied what markFollowing marked: the mark goes. */
  followed(scope: string, key: string): Promise<void>;
}

export interface IdempotencyStoreSettings {
  /** `idempotency.retentionMs`: how long answers and unknown outcomes are kept (24 h by default). */
  retentionMs: number;
  /** `idempotency.inProgressRetryAfterSec`: the Retry-After for 'in_progress' (capped by the lease left). */
  inProgressRetryAfterSec: number;
}
