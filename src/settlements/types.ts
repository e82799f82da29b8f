/**
 * Settlements (issue 39; contract, "Settlements"): a batch the gateway closed, read once after it closed, each
 * line matched with tokengate's own sale records. No card data: lines carry transaction keys and amounts only.
 *
 *   matched         the batch's line and tokengate's record agree (a sale: its captured amount; a refund: one
 *                   of tokengate's own, by its tag or its sale's credited refunds)
 *   amount_differs  tokengate made it, the batch holds another amount (or a void tokengate does not know of)
 *   not_ours        in the batch, never made through tokengate (the console, another integration)
 *   missing         a sale tokengate saw approved and not voided that no batch closed since holds, a day after it
 *                   was due (sweep-missing.ts): added to a kept settlement after it was kept (amend)
 *
 * A line is final once kept, except through amend(): the seam for bank payments (issue 38), which stay under
 * review until settled for good or returned; a later return replaces the line and is reported again.
 */
export type Verdict = 'matched' | 'amount_differs' | 'not_ours' | 'missing';
export const VERDICTS: readonly Verdict[] = ['matched', 'amount_differs', 'not_ours', 'missing'];

export interface SettlementLine {
  /** The gateway's transaction key. */
  transaction: string;
  /** tokengate's sale the line is about, when it knows it. */
  sale?: string;
  /** What tokengate's records say moved ("12.34"), when it made it: a sale's capture less parts refunded before the close. */
  amount?: string;
  /** What the batch says moved ("12.34"). */
  gateway_amount: string;
  /** sale (a sale or a captured authorization), refund (a credit), void (listed in the batch, voided). */
  kind: 'sale' | 'refund' | 'void';
  verdict: Verdict;
  /**
   * A bank payment's line (ACH; contract: "Bank payments stay under review until settled for good or returned"):
   * `open` while the bank may still return it (until `open_until`), `final` once settled for good (settled, and
   * the return window, SETTLEMENTS_BANK_RETURN_WINDOW_MS, passed with no return), `returned` when the bank took it
   * back (`return_code`, `returned_at`, `amount_returned`; `amount` is then what tokengate keeps: the line reads
   * `amount_differs`, the batch having paid what the bank took back). Absent on card lines.
   */
  bank?: 'open' | 'final' | 'returned';
  /** An open bank line's end of review (ISO 8601, tokengate's clock): settled for good then, barring a return. */
  open_until?: string;
  return_code?: string;
  returned_at?: string;
  amount_returned?: string;
}

/**
 * A credit of tokengate's that came back (its `ach.returned` or `ach.failed`, issue 39's follow-up): kept by the
 * store from when it is heard, so a batch read later matches the credit's line as returned. `code` and `date` as the
 * return gave them (a failure gives neither).
 */
export interface CreditReturn {
  how: 'returned' | 'failed';
  code?: string;
  date?: string;
}

/** The batch's totals as the gateway reports them (`GET /batches/{key}`), amounts as "12.34". */
export interface SettlementTotals {
  sales: string;
  credits: string;
  count: number;
}

export interface SettlementSummary {
  type: 'settlement';
  batch: string;
  /** The gateway's `closed` ("YYYY-MM-DD hh:mm:ss", no zone given). */
  closed_at: string;
  totals: SettlementTotals;
  counts: Record<Verdict, number>;
}

export interface Settlement extends SettlementSummary {
  lines: SettlementLine[];
}

export interface SettlementStore {
  get(batch: string): Promise<Settlement | undefined>;
  /** Newest first (by the batch's close), after the batch `after` (none: from the newest), at most `limit`. */
  list(after: string | undefined, limit: number): Promise<SettlementSummary[]>;
  /**
   * Claims the batch's one read for `ttlMs` (single-flight across replicas). 'kept': the settlement is already
   * kept (nothing to read); 'busy': another replica holds the claim.
   */
  claim(batch: string, owner: string, ttlMs: number): Promise<'claimed' | 'kept' | 'busy'>;
  /** Keeps the settlement unless one is kept already, and gives the claim back. True when this call kept it. */
  save(settlement: Settlement, owner: string, closedMs: number): Promise<boolean>;
  /** Gives the claim back (a read that failed: the next look tries again). */
  release(batch: string, owner: string): Promise<void>;
  /**
   * Changes lines of a kept settlement: a line with the same transaction is replaced (a later change to it, as a
   * bank payment returned after its batch), any other appended (a `missing` line); counts recounted. Answers the
   * lines that changed, to be reported again ([] when the settlement is not kept or nothing changed).
   */
  amend(batch: string, lines: readonly SettlementLine[]): Promise<SettlementLine[]>;
  /**
   * The kept settlements holding each sale (a line of its batch, not a `missing` one), or each credit of
   * tokengate's (a refund line naming its sale): key → batch. One read for all (the index save() writes), so a sale
   * held by any batch closed since is found, however old.
   */
  heldIn(sales: readonly string[]): Promise<Map<string, string>>;
  /**
   * Once (a mark in Redis): settlements kept before the held index existed, or before credits joined it (c1c84fd),
   * join it, sales and credits alike. `indexed` is given each settlement as soon as its lines are in the index (a
   * credit's return heard before then found no line to change). Answers how many settlements were indexed (0 when
   * done before, or under way on another replica).
   */
  backfillHeld(indexed?: (settlement: Settlement) => Promise<void>): Promise<number>;
  /**
   * A credit of tokengate's came back: kept (the first heard wins: a redelivery or the other webhook changes
   * nothing) as long as settlements are, so its line reads returned whenever its batch is read.
   */
  keepCreditReturn(credit: string, back: CreditReturn): Promise<void>;
  /** What came back of each credit (credit → return), one read for all. */
  creditReturns(credits: readonly string[]): Promise<Map<string, CreditReturn>>;
  /** Open bank lines whose review ended at or before `dueMs` (oldest first, at most `limit`). */
  openBankLines(dueMs: number, limit: number): Promise<Array<{ batch: string; closed_at: string; line: SettlementLine }>>;
  /**
   * Claims the sweep for `missing` (one replica at a time, across restarts) when no sweep ended at or after
   * `dueSinceMs`. True when this owner sweeps now.
   */
  claimSweep(owner: string, dueSinceMs: number, ttlMs: number): Promise<boolean>;
  /** The sweep ended at `endedMs` (tokengate's clock): the claim is given back. */
  sweepDone(owner: string, endedMs: number): Promise<void>;
  /**
   * Batches due to be read (look.ts), shared by every replica: a closed batch's webhook records it before it is
   * answered (`heardMs`: when its close was heard), so a replica that dies reading it leaves it to the others.
   * `atMs`: when to take it. A batch already due keeps its entry.
   */
  markDue(batch: string, heardMs: number, atMs: number): Promise<void>;
  /**
   * The batches due at `nowMs` (at most `limit`), each pushed `leaseMs` later (taken again then unless done or
   * rescheduled: a replica that dies reading it leaves it to the next taker). One Redis call when none is due.
   */
  takeDue(nowMs: number, leaseMs: number, limit: number): Promise<DueBatch[]>;
  /** The batch is to be taken again at `atMs` (its entry as `due` says: `tries` failed reads so far). */
  dueAgain(due: DueBatch, atMs: number): Promise<void>;
  /** The batch is read (kept) or given up: no longer due. */
  dueDone(batch: string): Promise<void>;
}

/** A batch due to be read: when its close was heard, how many reads of it failed. */
export interface DueBatch {
  batch: string;
  heardMs: number;
  tries: number;
}

/** The key a kept line is found by in the held index (heldIn): a sale's, or a credit's naming its sale; else none. */
export function heldBy(line: SettlementLine): string | undefined {
  if (line.kind === 'sale' && line.sale && line.verdict !== 'missing') return line.sale;
  if (line.kind === 'refund' && line.sale) return line.transaction;
  return undefined;
}

/** Kept as long as sale records: finance looks back over a year. */
export const SETTLEMENT_TTL_MS = 400 * 24 * 3600 * 1000;
