import type { Transaction } from '../gateway/types';

/**
 * What tokengate knows about each sale it made, to decide ownership and money bounds without a gateway call
 * (contract: "A sale belongs to the customer it charged"; guarantee 7). One record per gateway transaction key,
 * no card data: the customer, amounts in integer cents, a state, the reservations in flight, and the sale's
 * own gateway fields (SaleFields: what a capture or a void answers without reading the sale again).
 *
 *   state   authorized (authonly, not captured) | capturing (a capture in flight or of unknown outcome)
 *           | captured (a sale, or a captured authorization) | voiding (a void in flight or of unknown outcome)
 *           | voided | declined
 *
 * Money moves only through reserve → settle, each one atomic step (a Lua script in Redis):
 *   reserve  capture: the state must be 'authorized' and the amount ≤ authorized (→ 'capturing');
 *            refund: refunded + pending + amount ≤ captured (the amount joins `pendingRefund`);
 *            void: authorized or captured with nothing else in flight (→ 'voiding'), so concurrent voids of one
 *            sale send one void (issue 25, item 5): the others wait for it and answer from it.
 *   settle   applied (the gateway did it), released (proven not sent or refused: the reservation is given
 *            back), unknown (maybe sent: the reservation is KEPT until the reconciler settles it, issue 12).
 * So two replicas refunding one sale at once can never together exceed what was captured. One more step,
 * observe, folds in money the gateway shows moved outside tokengate, only toward less money left.
 */
export type SaleState = 'authorized' | 'capturing' | 'captured' | 'voiding' | 'voided' | 'declined';

/**
 * The sale's own fields as the gateway gave them (its answer to the sale, or its lookup), and the payment
 * method tokengate charged. Kept so that a capture or a void answers the whole sale object (contract: "200 the
 * sale") although the gateway's follow-up answers are minimal (gateway-facts.md, The payment lifecycle), with
 * no gateway read. No card data: `creditcard.number` is the gateway's masked number (the gateway client refuses
 * an answer with more than 8 digits there), and the stores drop any value that holds a card number.
 */
export interface SaleFields {
  refnum: string;
  result_code: string;
  result: string;
  authcode: string;
  /** What was asked for ("12.34"). */
  amount: string;
  invoice?: string;
  creditcard?: { number: string; category_code?: string };
  avs?: { result_code: string; result: string };
  cvc?: { result_code: string; result: string };
  /** The batch the sale is in; an authorization joins one when captured. */
  batch?: Transaction['batch'];
  /** The payment method charged: known only for sales tokengate made. */
  payment_method?: string;
  /** A decline's (or an error's) text and code, as the sale's answer gave them (a lookup does not). */
  error?: string;
  error_code?: string;
  /** A bank payment (ACH; contract, "Bank payments"): what the shopper agreed to and how its debit stands. */
  bank?: BankFields;
}

/** A check's status code (gateway-facts.md, ACH): P pending, B submitted, S settled, R returned, E error, V voided. */
export type AchStatus = 'P' | 'B' | 'S' | 'R' | 'E' | 'V' | 'M';
/** How far each status is along (lua/ach.lua holds the same order): a status only moves to a higher rank. */
export const ACH_RANK: Readonly<Record<AchStatus, number>> = { P: 0, M: 0, B: 1, S: 2, R: 3, E: 3, V: 3 };

export interface BankFields {
  /** The shopper's authorization as the request gave it (the "I agree" text, or its version). */
  authorization: string;
  /** The SEC code sent: `WEB` (a shopper on the web), `PPD` (a recurring debit). */
  sec: string;
  ach_status?: AchStatus;
  /** Set once returned: the bank's reason code (R01…), the date and the amount taken back. */
  return_code?: string;
  returned_at?: string;
  amount_returned?: string;
}

export interface SaleRecord {
  customer: string;
  state: SaleState;
  /** What the authorization holds (auth_amount), cents. */
  authorizedCents: number;
  /** What was captured (a sale's auth_amount, or the capture's amount), cents. */
  capturedCents: number;
  /** Refunds the gateway confirmed, cents. */
  refundedCents: number;
  /** Refunds reserved and not settled yet (in flight, or of unknown outcome), cents. */
  pendingRefundCents: number;
  /** Absent on records kept before the fields were (they are read from the gateway once, then kept). */
  fields?: SaleFields;
  /**
   * The write that made the sale (its write reference, src/writes/reference.ts), when tokengate's write or its
   * reconciler made the record. The reconciler looking for a write whose answer was lost claims a transaction with a
   * record only when the record names this write: its replica may have kept the record and died before the answer
   * (src/reconcile/find.ts). Absent on records seeded from a look-up, and on those kept before it was.
   */
  writer?: string;
  /**
   * Made by no write: seeded from the gateway's view of a sale tokengate had no record of (an internal read or action
   * on it, src/sales/sale-lookup.ts). Such a sale may still be the one an unknown write made (its answer lost): the
   * reconciler looking for that write takes it as its own by claiming it (create with a writer: the writer set only
   * while none is, in one step), so two writes never both claim it. A record with neither (kept before `writer` was)
   * stays another's. Never set together with `writer`.
   */
  seeded?: boolean;
}

export type ReserveResult =
  /** `whole`: a refund of all that is left (nothing captured remains unrefunded or reserved after it). */
  | { ok: true; amountCents: number; whole: boolean }
  /**
   * absent: no record; exceeds/not_capturable/not_voidable: refused, nothing reserved. `availableCents` for
   * refunds. busy (voids only): another capture, void or refund of the sale is in flight; wait for it. returned
   * (refunds only): a bank payment returned or failed: nothing came to the merchant to give back.
   */
  | { ok: false; reason: 'absent' | 'exceeds' | 'not_capturable' | 'not_voidable' | 'busy' | 'returned' | 'pending'; availableCents: number };

/** A follow-up that moves money under a reservation. */
export type ReservedOp = 'capture' | 'refund' | 'void';

export type Settlement = 'applied' | 'released' | 'unknown';

/** A reservation not settled yet: in flight, or (`unknown`) waiting for the reconciler (issue 12). */
export interface Reservation {
  id: string;
  op: ReservedOp;
  cents: number;
  unknown: boolean;
  /** When it was marked unknown (Redis TIME, ms): past it plus the longest processing time, it cannot land. */
  unknownSinceMs?: number;
}

/** What moves on a sale beside its totals: reservations not settled yet, and the gateway refunds credited to a write. */
export interface SaleMoves {
  reservations: Reservation[];
  /** The gateway keys of refunds settled applied with their key (settle's `refundKey`). */
  creditedRefunds: ReadonlySet<string>;
  /**
   * tokengate's own refunds settled applied, by reservation id (the write's reference; settle's `listed`): a refund
   * whose reservation is gone was settled, and this says how. The reconciler reads it when the settlement was kept
   * and the key's answer was not (a replica that died between the two): the refund happened (src/reconcile/find.ts).
   */
  applied: ReadonlyMap<string, OwnRefund>;
}

export interface SaleRecords {
  get(saleKey: string): Promise<SaleRecord | undefined>;
  /**
   * Writes the record unless one exists (a seed from a gateway lookup must never clobber reservations). `stale`:
   * made from less than the gateway's full record (a webhook's subset): its view answers at once and is refreshed
   * in spare budget at the first read. A record with a `writer` over an existing `seeded` one that names no writer
   * claims it in the same step: the writer is set, the seeded mark goes, and what the seed lacks is added (the
   * customer when it had none, fields it has not: the payment method charged, a bank payment's authorization);
   * nothing it holds is changed. True when the record is now this one's: written, claimed, or already naming the
   * same writer; false when another record stands (another write's, a seed when no writer is given, or one kept
   * before `writer` was).
   */
  create(saleKey: string, record: SaleRecord, options?: { stale?: boolean }): Promise<boolean>;
  /** `amountCents` undefined: all that is left (refund) or all that is authorized (capture). */
  reserve(saleKey: string, op: ReservedOp, reservation: string, amountCents: number | undefined): Promise<ReserveResult>;
  /**
   * Ends a reservation. `appliedCents`: what the gateway actually moved (a capture's amount), when known.
   * `refundKey`: an applied refund's own gateway transaction, now credited to this reservation's write, so the
   * reconciler never names it as another write's refund (two refunds of one amount).
   * `listed`: an applied refund as its answer described it, kept so the sale's view lists every refund
   * tokengate made, whatever command carried it (issue 25, item 6). A void applied makes the sale voided.
   */
  settle(saleKey: string, op: ReservedOp, reservation: string, how: Settlement, appliedCents?: number, refundKey?: string, listed?: OwnRefund): Promise<void>;
  /** The sale was voided (its captured money never moves). */
  markVoided(saleKey: string): Promise<void>;
  /**
   * A bank payment's ACH status moved forward in one atomic step (lua/ach.lua): P/M < B < S < R, E, V (the first
   * of the last three ends it; a return after settlement still moves it). A return also sets its code and date
   * (when given) and `amount_returned`; a void makes the sale voided. `before` and `after` tell what moved
   * (equal: nothing, older news or the same again); undefined when there is no bank payment's record.
   */
  advanceAch(saleKey: string, status: AchStatus, returned?: { code?: string; date?: string }): Promise<{ before: AchStatus; after: AchStatus } | undefined>;
  /**
   * Keeps the sale's gateway fields on an existing record (never creates one): 'fill' only when it has none
   * yet (a record kept before fields were), 'update' sets each field given (a capture puts the sale in a batch),
   * 'complete' sets only those it lacks (a record made from a webhook's subset, filled by a later read).
   */
  describe(saleKey: string, fields: SaleFields, how: 'fill' | 'update' | 'complete'): Promise<void>;
  /** The reservations not settled yet and the refunds credited (the reconciler reads them to settle unknown ones). */
  moves(saleKey: string): Promise<SaleMoves>;
  /**
   * Folds in what the gateway's record shows was done outside tokengate (a refund or a void made in the merchant
   * console), only while no capture or refund is in flight or unknown, and only if the record still says
   * `wasRefundedCents` (compare-and-set): refunded rises to `seen.refundedCents` (never falls), and the sale
   * becomes voided when `seen.voided`. Never creates a record. True when the record changed.
   */
  observe(saleKey: string, wasRefundedCents: number, seen: { refundedCents: number; voided: boolean }): Promise<boolean>;
  /**
   * The sale as tokengate knows it, in one read: the record, the refunds it lists, whether the gateway showed it
   * settled, and how fresh that knowledge is (guarantee 9: `GET /v1/sales/{key}` answers from it).
   */
  view(saleKey: string): Promise<SaleView | undefined>;
  /**
   * Folds the gateway's view of the sale (a refresh) into the record, only if nothing was written since `version`
   * was read and nothing is in flight, so a refresh never overwrites a newer write: money refunded or the sale
   * voided elsewhere (only toward less money, as observe()), settled, the refunds made outside tokengate, and
   * `seenMs` = now. True when applied.
   */
  refresh(saleKey: string, version: number, seen: GatewaySaleState): Promise<boolean>;
  /**
   * Claims the sale's background refresh for `ttlMs` (one replica refreshes a stale view at a time): true when
   * this caller holds it.
   */
  claimRefresh(saleKey: string, ttlMs: number): Promise<boolean>;
  /** Gives the claim up (its gateway read failed): the next read past the bound may refresh at once. */
  releaseRefresh(saleKey: string): Promise<void>;
  /**
   * Remembers for `ttlMs` that the gateway does not know `saleKey` as a sale (guarantee 11: a key the gateway has
   * said it does not know is not asked about again for a while). A sale tokengate makes has a record, which is
   * always read first, so a memory never hides a real sale.
   */
  rememberUnknown(saleKey: string, ttlMs: number): Promise<void>;
  /** Whether the gateway said lately that it does not know `saleKey`. */
  knownUnknown(saleKey: string): Promise<boolean>;
  /**
   * What a gateway webhook says happened to the sale, applied by what it means (lua/hear.lua): never undoing what
   * the record knows, never counting a refund twice, leaving tokengate's own writes in flight to their answers.
   * Reports (`onChange`) what now holds and is an event. False when tokengate keeps no record of the sale.
   */
  hear(saleKey: string, heard: Heard): Promise<HearResult>;
  /**
   * The sale a refund transaction belongs to, from tokengate's own records (a refund it made, or one it saw listed
   * on a sale): a refund's webhook names no sale (gateway-facts.md, Money webhooks in detail). Undefined: not
   * known here, and never guessed.
   */
  saleOfRefund(refundKey: string): Promise<string | undefined>;
  /** The batch closed: its captured sales are settled (each reported). How many sales the batch held. */
  settleBatch(batchKey: string): Promise<number>;
  /**
   * The due index the settlements' sweep reads for `missing` (issue 39): the batches whose first sale tokengate
   * indexed at or before `seenBeforeMs` and not swept yet, oldest first, with that time (ms).
   */
  dueBatches(seenBeforeMs: number, limit: number): Promise<Array<{ batch: string; seenMs: number }>>;
  /** The sales tokengate indexed in a batch (its answer's, a capture's, a look-up's), as settleBatch reads them. */
  batchSales(batchKey: string): Promise<string[]>;
  /** The batch was swept: it leaves the due index (its sales stay indexed for settleBatch until their ttl). */
  swept(batchKey: string): Promise<void>;
  /**
   * Once per deployment (one replica, a mark in Redis): batches indexed before the due index existed (their
   * first sale came before it, so no sale put them in it) join it. Answers how many joined (0 when done before).
   */
  backfillDue(): Promise<number>;
}

/**
 * What a webhook did to a record: `absent` no record; `applied` it changed the money or state; `known` it only
 * confirmed what the record held (tokengate's own write, or a redelivery); `busy` a write of tokengate's in flight
 * decides; `unknown_refund` a refund the record does not list.
 */
export type HearResult = 'absent' | 'applied' | 'known' | 'busy' | 'unknown_refund';

/** What a gateway webhook reports about a sale (src/webhooks reads it from the event's subset object). */
export type Heard =
  | { kind: 'sale'; type: 'sale.succeeded' | 'sale.authorized' | 'sale.declined' }
  | { kind: 'voided' }
  | { kind: 'captured'; capturedCents: number; batch?: Transaction['batch'] }
  | { kind: 'refunded'; refund: HeardRefund }
  /** The gateway's new amount: an authorization's hold, or what a captured sale has left (issue 36). */
  | { kind: 'adjusted'; leftCents: number }
  /** A refund the record lists was voided at the gateway: its amount is no longer refunded. */
  | { kind: 'refund_voided'; refundKey: string }
  /** A refund marked voided that the gateway shows standing (the webhook that said so was contradicted). */
  | { kind: 'refund_restored'; refundKey: string }
  /** A voided sale was restored at the gateway. */
  | { kind: 'unvoided' };

/** A refund with a transaction of its own, as the gateway shows it. */
export interface HeardRefund {
  key: string;
  refnum: string;
  cents: number;
  /** The gateway's "YYYY-MM-DD hh:mm:ss". */
  created: string;
  statusCode: string;
}

/**
 * A change to a sale's record that tokengate heard of (a webhook, a refresh), reported so it becomes a payment
 * event (src/sales/sale-events.ts). `change` is the money movement's identity, the same as a write's own event
 * about it (src/events/write-events.ts), so the two are one event.
 */
export type RecordChange =
  | { saleKey: string; kind: 'sale'; type: 'sale.succeeded' | 'sale.authorized' | 'sale.declined' }
  | { saleKey: string; kind: 'captured' | 'voided' | 'settled' | 'unvoided' }
  | { saleKey: string; kind: 'adjusted'; change: string }
  | { saleKey: string; kind: 'refund_voided'; refund: { key: string; cents: number } }
  | { saleKey: string; kind: 'refunded'; change: string; refund: { key: string; refnum?: string; cents: number } };

/** Where a store reports record changes (the event log's renderer); a failure fails the call that changed it. */
export type RecordChangeSink = (changes: readonly RecordChange[]) => Promise<void>;

/** A refund tokengate made on a sale, as its answer described it (the contract's refund object, less `sale`). */
export interface OwnRefund {
  key: string;
  refnum: string;
  cents: number;
  method: 'refund' | 'void';
}

/** A refund listed on a sale's view: tokengate's own, or one the gateway showed (made in the console). */
export interface ListedSaleRefund {
  key: string;
  refnum: string;
  cents: number;
  method: 'refund' | 'void';
  /** Unix seconds (tokengate's own: when it was answered) or the gateway's "YYYY-MM-DD hh:mm:ss". */
  created: string;
  /** The gateway's status code of a refund it listed; tokengate's own have none. */
  statusCode?: string;
  own: boolean;
  /** Voided at the gateway (its `transaction.refund.voided`): listed, no longer counted in what was refunded. */
  voided?: boolean;
}

export interface SaleView {
  record: SaleRecord;
  /** Bumped by every write to the record: a refresh applies only over the version it read. */
  version: number;
  /** The gateway showed the sale settled (its batch closed). */
  settled: boolean;
  refunds: ListedSaleRefund[];
  /** When the record last matched the gateway's (its answer to a write, or a refresh), ms; 0 if never known. */
  seenMs: number;
  /** The gateway refunds credited to tokengate's own writes (they are listed as tokengate's, not as external). */
  credited: ReadonlySet<string>;
}

/** What a gateway read of the sale shows, as a refresh folds it in. */
export interface GatewaySaleState {
  /** Refunded as the gateway confirms it (set as is: guarantee 12, both directions). */
  refundedCents: number;
  /** Captured as the gateway confirms it (an adjustment up raises it). */
  capturedCents: number;
  voided: boolean;
  /** The gateway shows a sale the record holds voided as standing (unvoided): the state it is restored to. */
  restoreTo?: 'captured' | 'authorized';
  settled: boolean;
  /**
   * The refunds the gateway lists on the sale. Those made outside tokengate are listed as the gateway's; those of
   * tokengate's own writes lend their status to the entry kept from their answer.
   */
  gatewayRefunds: Array<{ key: string; refnum: string; cents: number; created: string; statusCode: string }>;
}

/** Kept long after the sale: refunds come months later. Past it, the record is seeded again from the gateway. */
export const SALE_RECORD_TTL_MS = 400 * 24 * 3600 * 1000;

/** A batch's sales are kept this long after the last one joined (batches close daily; their event may come 3 days late). */
export const BATCH_INDEX_TTL_MS = 14 * 24 * 3600 * 1000;
