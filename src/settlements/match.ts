import { fromCents, toCents } from '../gateway/money';
import type { Batch, TransactionDetail } from '../gateway/types';
import type { SaleRecords } from '../sale-records';
import { taggedReference } from '../writes/reference';
import { VERDICTS, type CreditReturn, type Settlement, type SettlementLine, type Verdict } from './types';

/** What matching needs of tokengate's records: a sale's record, and the refunds credited to its own writes. */
export type MatchRecords = Pick<SaleRecords, 'view' | 'moves' | 'saleOfRefund'>;

const CREDIT_CODES: ReadonlySet<string> = new Set(['C', 'Z']);

/**
 * One line of a closed batch against tokengate's records:
 *   - a sale (S, or a captured authorization): tokengate's when it keeps a record of it; matched when the
 *     batch's amount (`auth_amount`: what was captured, lowered by an adjust; else `amount`) is what the record
 *     captured less tokengate's own refund:adjusts of it (parts refunded before the close); a void listed in the
 *     batch is matched when the record is voided too;
 *   - a credit (C; Z a voided one): tokengate's when it carries tokengate's tag (custom field 20, src/writes)
 *     or it is credited to one of its sale's own refunds (the sale from the gateway's `original`, or from the
 *     records' refund index: a gateway that drops custom fields still shows tokengate's refunds as its own). The tag
 *     carries no amount: a tagged credit is matched on its tag (the refund's amount is checked by the write).
 * Anything else in the batch is `not_ours`. Declined or errored lines moved nothing and are left out.
 * `creditReturn`: a credit of tokengate's the shopper's bank sent back (or failed) before the batch was read reads
 * as returned (creditLineOf).
 */
export async function matchLine(records: MatchRecords, tx: TransactionDetail, review?: BankReview, creditReturn?: (credit: string) => Promise<CreditReturn | undefined>): Promise<SettlementLine | undefined> {
  if (tx.result_code === 'D' || tx.result_code === 'E') return undefined;
  const voided = tx.status_code === 'V' || tx.trantype_code === 'Z';
  const gatewayCents = voided ? 0 : toCents(tx.auth_amount ?? tx.amount);
  const base = { transaction: tx.key, gateway_amount: fromCents(gatewayCents) };
  if (CREDIT_CODES.has(tx.trantype_code)) {
    const line = { ...base, gateway_amount: fromCents(voided ? 0 : toCents(tx.amount)), kind: voided ? ('void' as const) : ('refund' as const) };
    const sale = tx.original?.key ?? (await records.saleOfRefund(tx.key));
    const credited = sale !== undefined && (await records.moves(sale)).creditedRefunds.has(tx.key);
    const own = credited || taggedReference(tx.custom_fields) !== undefined;
    // A console refund of tokengate's sale is still not tokengate's: the line names the sale, for finance.
    const matched: SettlementLine = { ...line, ...(sale !== undefined ? { sale } : {}), verdict: own ? 'matched' : 'not_ours' };
    const back = own && sale !== undefined && !voided && creditReturn ? await creditReturn(tx.key) : undefined;
    return back ? creditLineOf(matched, back) : matched;
  }
  const view = await records.view(tx.key);
  const kind = voided ? ('void' as const) : ('sale' as const);
  if (!view) return { ...base, kind, verdict: 'not_ours' };
  return saleLineOf({ ...base, kind }, view, review);
}

/** When a bank line's review is decided: tokengate's clock now, and how long the bank may still return a payment. */
export interface BankReview {
  nowMs: number;
  windowMs: number;
}

type SaleView = NonNullable<Awaited<ReturnType<MatchRecords['view']>>>;

/**
 * A line of tokengate's sale (its record's `view`) against what the batch holds (`line`: transaction,
 * gateway_amount, kind), also when a kept line is looked at again (a bank payment's return, its review's end):
 * the line's own `open_until` is kept, so a second look answers the same line until something changed.
 */
export function saleLineOf(line: Pick<SettlementLine, 'transaction' | 'gateway_amount' | 'kind' | 'open_until' | 'bank'>, view: SaleView, review?: BankReview): SettlementLine {
  const record = view.record;
  const gatewayCents = toCents(line.gateway_amount);
  // A part refunded before the close was a refund:adjust: it lowered the sale's own amount (its answer names the
  // sale, no transaction of its own: gateway-facts.md, the payment lifecycle), so the batch holds what is left.
  const adjustedCents = view.refunds.filter((r) => r.own && r.key === line.transaction && r.method === 'refund' && !r.voided).reduce((n, r) => n + r.cents, 0);
  let ourCents = record.state === 'voided' ? 0 : record.capturedCents - adjustedCents;
  const bank = line.kind === 'sale' ? record.fields?.bank : undefined;
  let review_: Partial<SettlementLine> = {};
  if (bank && (bank.ach_status === 'R' || bank.ach_status === 'E')) {
    // Returned (ach.lua): the bank took the debit back from the merchant after the batch paid it. Failed
    // (`ach.failed`, some processors only; it may come after the batch closed): no money came, so the line reads as
    // a whole return with no return code (the gateway gives none).
    const returnedCents = bank.ach_status === 'R' && bank.amount_returned !== undefined ? toCents(bank.amount_returned) : ourCents;
    ourCents = Math.max(0, ourCents - returnedCents);
    review_ = { bank: 'returned', amount_returned: fromCents(returnedCents), ...(bank.return_code ? { return_code: bank.return_code } : {}), ...(bank.returned_at ? { returned_at: bank.returned_at } : {}) };
  } else if (bank && line.bank === 'final') {
    review_ = { bank: 'final' };
  } else if (bank && review) {
    const openUntil = line.open_until ?? new Date(review.nowMs + review.windowMs).toISOString();
    review_ = Date.parse(openUntil) <= review.nowMs ? { bank: 'final' } : { bank: 'open', open_until: openUntil };
  }
  const verdict: Verdict = ourCents === gatewayCents ? 'matched' : 'amount_differs';
  return { transaction: line.transaction, gateway_amount: line.gateway_amount, kind: line.kind, sale: line.transaction, amount: fromCents(ourCents), verdict, ...review_ };
}

/**
 * A credit of tokengate's (a bank payment's refund) that came back: the shopper's bank returned it (`ach.returned`)
 * or it failed (`ach.failed`) after the batch sent it. The refund's money is the merchant's again: `amount` (what
 * the credit moved in the end) `0.00` against the batch's `gateway_amount`, so `amount_differs`, with
 * `bank: returned` and `amount_returned` as for a returned debit. Idempotent: a line already returned is kept.
 */
export function creditLineOf(line: SettlementLine, back: CreditReturn): SettlementLine {
  if (line.bank === 'returned') return line;
  return {
    transaction: line.transaction, ...(line.sale !== undefined ? { sale: line.sale } : {}), amount: '0.00', gateway_amount: line.gateway_amount, kind: line.kind,
    verdict: toCents(line.gateway_amount) === 0 ? 'matched' : 'amount_differs', bank: 'returned', amount_returned: line.gateway_amount,
    ...(back.code ? { return_code: back.code } : {}), ...(back.date ? { returned_at: back.date } : {}),
  };
}

/** A credit line of tokengate's not returned yet: one a credit's return could still change. */
export const isOwnCredit = (l: SettlementLine): boolean => l.kind === 'refund' && l.sale !== undefined && l.verdict === 'matched' && l.bank !== 'returned';

export function countByVerdict(lines: readonly SettlementLine[]): Record<Verdict, number> {
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const line of lines) counts[line.verdict] += 1;
  return counts;
}

/** The settlement of a closed batch: its totals as the gateway reports them, and its lines. */
export function settlementOf(batch: Batch, lines: SettlementLine[]): Settlement {
  return {
    type: 'settlement',
    batch: batch.key,
    closed_at: batch.closed ?? '',
    totals: { sales: batch.sales_amount, credits: batch.refunds_amount, count: batch.sales_count + batch.refunds_count },
    counts: countByVerdict(lines),
    lines,
  };
}

/** The gateway's "YYYY-MM-DD hh:mm:ss" (no zone given: read as UTC, only to order batches), else undefined. */
export function closedMsOf(closed: string | undefined): number | undefined {
  if (!closed) return undefined;
  const ms = Date.parse(`${closed.replace(' ', 'T')}Z`);
  return Number.isFinite(ms) ? ms : undefined;
}
