import { Batches, refOf, timeOfDayAfter, type BatchRecord, type BatchRef } from './batches';
import type { Delivery, RecordedTransaction, TransactionResponse } from './ledger';
import { formatCents, toCents } from './sale-request';

/**
 * The life of every processed transaction after its answer: authorized, captured into a batch, settled,
 * voided, refunded (README, "Payment lifecycle"). Sales and authorizations enter through adopt(); refunds
 * are created by the follow-up commands (follow-ups.ts). This is what tests read as the judge of what moved.
 */

export type TxKind = 'sale' | 'authonly' | 'refund';
/**
 * authorized: an authonly not captured (no batch); unsettled: in the open batch; settled: its batch closed;
 * voided; declined (result D: nothing ever moved).
 */
export type TxState = 'authorized' | 'unsettled' | 'settled' | 'voided' | 'declined';

/**
 * A check's status code (gateway-facts.md, ACH): P pending (not yet sent to the bank), B submitted, S settled,
 * R returned, E error, V voided, M manager approval required. Moved by the ACH clock (ach/ach-clock.ts).
 */
export type CheckStatus = 'P' | 'B' | 'S' | 'R' | 'E' | 'V' | 'M';

/** What a check transaction keeps of its bank account (last four only) and of its ACH life. */
export interface CheckState {
  accountholder: string;
  accountLast4: string;
  routingLast4: string;
  accountType: 'checking' | 'savings';
  /** The SEC code sent (`check.format`), '' when none. */
  format: string;
  trackingcode: string;
  status: CheckStatus;
  submittedAt?: number;
  settledAt?: number;
  returnedAt?: number;
  /** A return test account's code: returned on the third day after submission. */
  returnsWith?: { code: string; text: string };
  /** A credit under SANDBOX_CREDIT_RETURNS `failed`: it comes back as `ach.failed` (E), not `ach.returned`. */
  failsInstead?: boolean;
  /** The saved bank method it charged (customer:sale), if any. */
  pmkey?: string;
}

export interface LifecycleTx {
  key: string;
  refnum: string;
  kind: TxKind;
  resultCode: 'A' | 'P' | 'D';
  state: TxState;
  created: number;
  /** What the request asked for. */
  amountCents: number;
  /** Held now: the approved amount, lowered by a partial capture or refund:adjust; 0 once voided. */
  authCents: number;
  /** Moved into a batch (sale: the approved amount; authonly: what was captured; refund: its amount). */
  capturedCents: number;
  /** Sum of the refunds against it that are not voided. */
  refundedCents: number;
  /** Taken off the captured amount by refund:adjust before settlement (money given back without a refund). */
  adjustedCents: number;
  refunds: string[];
  /** On a refund: the transaction it returns money for. */
  original?: string;
  /** On a refund: the `custom_fields` its request sent (answered per the customFields setting). */
  customFields?: Record<string, string>;
  batchKey?: string;
  custkey?: string;
  invoice: string;
  amountDetail?: Record<string, string>;
  creditcard?: Record<string, unknown>;
  avs?: unknown;
  cvc?: unknown;
  authcode: string;
  /** When it was captured, settled or voided (epoch ms). */
  capturedAt?: number;
  settledAt?: number;
  voidedAt?: number;
  /** What was held when it was voided (an unvoid gives it back). */
  voidedAuthCents?: number;
  /** A check (`check:sale`, `check:credit`, a check's refund): its ACH status (ach/). */
  check?: CheckState;
}

/** A follow-up the sandbox PROCESSED (approved or refused): the judge of "sent once". */
export interface FollowUpRecord {
  command: string;
  /** The original as named by the request (trankey, or the key its refnum resolved to). */
  trankey: string;
  result_code: 'A' | 'E';
  error_code?: string;
  /** The requested amount, when one was sent. */
  amount?: string;
  /** The key of the refund it created, if any. */
  createdKey?: string;
  time: number;
  folded: boolean;
  delivery: Delivery;
  delivered: boolean;
}

/** A check's ACH state as the ledger shows it: the status, and a return's time and code once returned. */
function achOf(c: CheckState): NonNullable<LedgerEntry['ach']> {
  return { status: c.status, format: c.format, ...(c.returnedAt !== undefined ? { returned_at: c.returnedAt } : {}), ...(c.status === 'R' && c.returnsWith ? { return_code: c.returnsWith.code } : {}) };
}

/** What tests read per transaction (`sb.ledger.get(key)`): amounts as "12.34". */
export interface LedgerEntry {
  key: string;
  refnum: string;
  kind: TxKind;
  state: TxState;
  result_code: 'A' | 'P' | 'D';
  amount: string;
  authorized: string;
  captured: string;
  refunded: string;
  /** Taken off `captured` by refund:adjust while unsettled (so captured + adjusted = what was first captured). */
  adjusted: string;
  voided: boolean;
  settled: boolean;
  refunds: { key: string; amount: string; voided: boolean; settled: boolean }[];
  original?: string;
  batch?: string;
  custkey?: string;
  invoice: string;
  /** A check: its ACH status, the SEC code it was sent with, and when (sandbox clock, epoch ms) and why it was returned (the soak's judge). */
  ach?: { status: CheckStatus; format: string; returned_at?: number; return_code?: string };
}

/**
 * Told of every change, after it is made, whoever asked for it (the sandbox's webhooks: webhooks/). Follow-ups
 * arrive as their record, refusals and folded duplicates included: the observer picks what moved money.
 */
export interface LifecycleObserver {
  adopted(tx: LifecycleTx, now: number): void;
  followedUp(op: FollowUpRecord): void;
  batchClosed(batch: BatchRecord, now: number): void;
  /** A close that failed (`settlement.batch.failure`): the batch stays open. */
  batchFailed(batch: BatchRecord, reason: string, now: number): void;
}

/** When the open batch closes by itself: after an interval, and at a time of day (README.md, Batches). */
export interface ClosePolicy {
  batchCloseIntervalMs: number;
  /** "HH:MM" in the sandbox's gateway time (UTC), '' = no daily close. */
  batchCloseAt: string;
}

export interface AdoptOptions {
  authOnly: boolean;
  custkey?: string;
  now: number;
}

export class Lifecycle {
  readonly batches = new Batches();
  private txs = new Map<string, LifecycleTx>();
  private byRefnum = new Map<string, string>();
  private ops: FollowUpRecord[] = [];
  observer: LifecycleObserver | undefined;

  /** Registers a processed sale or authonly and fixes up its answer (batch, trantype). Folded duplicates are not new. */
  adopt(record: RecordedTransaction, response: TransactionResponse, opts: AdoptOptions): void {
    const approved = record.result_code !== 'D';
    const authCents = approved ? toCents(record.auth_amount) : 0;
    const tx: LifecycleTx = {
      key: record.key,
      refnum: record.refnum,
      kind: opts.authOnly ? 'authonly' : 'sale',
      resultCode: record.result_code,
      state: !approved ? 'declined' : opts.authOnly ? 'authorized' : 'unsettled',
      created: opts.now,
      amountCents: toCents(record.amount),
      authCents,
      capturedCents: approved && !opts.authOnly ? authCents : 0,
      refundedCents: 0,
      adjustedCents: 0,
      refunds: [],
      invoice: record.invoice,
      authcode: typeof response.authcode === 'string' ? response.authcode : '',
      ...(opts.custkey ? { custkey: opts.custkey } : {}),
      ...(isRecord(response.amount_detail) ? { amountDetail: stringValues(response.amount_detail) } : {}),
      // Shared with the answer (never changed after it is built): one copy per sale in a long benchmark.
      ...(isRecord(response.creditcard) ? { creditcard: response.creditcard } : {}),
      ...(isRecord(response.avs) ? { avs: response.avs } : {}),
      ...(isRecord(response.cvc) ? { cvc: response.cvc } : {}),
    };
    if (tx.state === 'unsettled') {
      const ref = this.batches.join(tx.key, opts.now);
      tx.batchKey = ref.key;
      tx.capturedAt = opts.now;
      response.batch = ref;
    } else {
      // An authorization joins a batch when captured; a decline never does.
      delete response.batch;
    }
    if (opts.authOnly) {
      response.trantype = 'Credit Card Auth Only';
      record.authOnly = true;
    }
    this.add(tx);
    this.observer?.adopted(tx, opts.now);
  }

  add(tx: LifecycleTx): void {
    this.txs.set(tx.key, tx);
    this.byRefnum.set(tx.refnum, tx.key);
  }

  get(key: string): LifecycleTx | undefined {
    return this.txs.get(key);
  }

  byRef(refnum: string): LifecycleTx | undefined {
    const key = this.byRefnum.get(refnum);
    return key === undefined ? undefined : this.txs.get(key);
  }

  /** Newest first. */
  all(): LifecycleTx[] {
    return [...this.txs.values()].reverse();
  }

  /** Moves a transaction into the open batch (capture, new refund) and returns the reference for its answer. */
  joinBatch(tx: LifecycleTx, now: number): BatchRef {
    const ref = this.batches.join(tx.key, now);
    tx.batchKey = ref.key;
    tx.state = 'unsettled';
    tx.capturedAt = now;
    return ref;
  }

  /** Takes a transaction out of the open batch (a fault: console.ts, `drop`); no batch holds it after. */
  dropFromBatch(tx: LifecycleTx, now: number): boolean {
    const open = this.batches.current(now);
    const i = open.members.indexOf(tx.key);
    if (i < 0) return false;
    open.members.splice(i, 1);
    return true;
  }

  batchRefOf(tx: LifecycleTx): BatchRef | undefined {
    const b = tx.batchKey === undefined ? undefined : this.batches.get(tx.batchKey, 0);
    return b ? refOf(b) : undefined;
  }

  /** Closes the open batch: what it holds and is not voided is settled. */
  closeBatch(now: number) {
    const b = this.batches.close(now);
    for (const key of b.members) {
      const tx = this.txs.get(key);
      if (tx?.state === 'unsettled') {
        tx.state = 'settled';
        tx.settledAt = now;
      }
    }
    this.observer?.batchClosed(b, now);
    return b;
  }

  /** A close that fails (on request): nothing settles, the batch stays open, its failure is told. */
  failClose(now: number, reason: string): BatchRecord {
    const b = this.batches.current(now);
    this.observer?.batchFailed(b, reason, now);
    return b;
  }

  /**
   * The timer knobs, applied lazily at each call (so no timer outlives the sandbox), at a jump of the clock and,
   * with webhook receivers set, by a timer: `batchCloseIntervalMs`, and the daily close at `batchCloseAt`, which
   * closes the batch at that time of day (its `closed` is that time, however late the tick).
   */
  tick(now: number, policy: ClosePolicy): void {
    const at = this.batches.dailyCloseDue(now, policy.batchCloseAt);
    if (at !== undefined) this.closeBatch(at);
    else if (this.batches.due(now, policy.batchCloseIntervalMs)) this.closeBatch(now);
  }

  /** The next daily close after `now` (epoch ms; a batch opened by then closes), or undefined (none set). */
  nextDailyClose(now: number, policy: ClosePolicy): number | undefined {
    return timeOfDayAfter(policy.batchCloseAt, now);
  }

  record(op: FollowUpRecord): FollowUpRecord {
    this.ops.push(op);
    this.observer?.followedUp(op);
    return op;
  }

  operations(): FollowUpRecord[] {
    return this.ops.map((o) => ({ ...o }));
  }

  entry(key: string): LedgerEntry | undefined {
    const tx = this.txs.get(key);
    if (!tx) return undefined;
    return {
      key: tx.key,
      refnum: tx.refnum,
      kind: tx.kind,
      state: tx.state,
      result_code: tx.resultCode,
      amount: formatCents(tx.amountCents),
      authorized: formatCents(tx.authCents),
      captured: formatCents(tx.capturedCents),
      refunded: formatCents(tx.refundedCents),
      adjusted: formatCents(tx.adjustedCents),
      voided: tx.state === 'voided',
      settled: tx.state === 'settled',
      refunds: tx.refunds.map((k) => this.txs.get(k) as LifecycleTx).map((r) => ({ key: r.key, amount: formatCents(r.amountCents), voided: r.state === 'voided', settled: r.state === 'settled' })),
      ...(tx.original ? { original: tx.original } : {}),
      ...(tx.batchKey ? { batch: tx.batchKey } : {}),
      ...(tx.custkey ? { custkey: tx.custkey } : {}),
      invoice: tx.invoice,
      ...(tx.check ? { ach: achOf(tx.check) } : {}),
    };
  }

  reset(): void {
    this.txs.clear();
    this.byRefnum.clear();
    this.ops = [];
    this.batches.reset();
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringValues(o: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) if (typeof v === 'string') out[k] = v;
  return out;
}
