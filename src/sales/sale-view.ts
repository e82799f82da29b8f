import type { TransactionDetail } from '../gateway/types';
import type { AchStatus, SaleFields, SaleRecord, SaleState } from '../sale-records';
import { toCents } from '../gateway/money';

/** The public lifecycle status of a sale (contract, `GET /v1/sales/{key}`). */
export type SaleStatus = 'authorized' | 'pending_settlement' | 'settled' | 'voided' | 'declined' | 'error' | BankStatus;

/**
 * A bank payment's own statuses (contract, "Bank payments"): `pending` (voidable), `submitted` (a refund credits
 * it back), `settled`, `returned`, `failed`. From its check's status code (gateway-facts.md, ACH).
 */
export type BankStatus = 'pending' | 'submitted' | 'returned' | 'failed';

/** The status of an approved, not voided bank payment from its ACH status code (unknown yet: pending). */
export function bankStatusOf(ach: AchStatus | undefined): SaleStatus {
  if (ach === 'B') return 'submitted';
  if (ach === 'S') return 'settled';
  if (ach === 'R') return 'returned';
  if (ach === 'E') return 'failed';
  if (ach === 'V') return 'voided';
  return 'pending';
}

/** A check status code as a look-up gives it (F funded reads as settled; anything else unknown). */
export function achStatusOfCode(code: string | undefined): AchStatus | undefined {
  if (code === 'F') return 'S';
  return code !== undefined && ['P', 'B', 'S', 'R', 'E', 'V', 'M'].includes(code) ? (code as AchStatus) : undefined;
}

/** Only sales and authorizations are sales; a refund's own key is not (it answers 404 like an unknown key). */
export function isSale(tx: TransactionDetail): boolean {
  return tx.trantype_code === 'S' || tx.trantype_code === 'A';
}

/**
 * The status from the gateway's record (gateway-facts.md, Looking transactions up): an authorization not
 * captured belongs to no batch yet; N Queued and P Pending wait for the batch to close; B Submitted, F Funded,
 * S Settled and R Returned are past settlement; V Voided; E Error and T Timed out are errors.
 */
export function statusOf(tx: TransactionDetail): SaleStatus {
  if (tx.result_code === 'D' || tx.result_code === 'V') return 'declined';
  if (tx.result_code === 'E' || tx.status_code === 'E' || tx.status_code === 'T') return 'error';
  if (tx.status_code === 'V') return 'voided';
  if (tx.trantype_code === 'A' && tx.batch === undefined) return 'authorized';
  if (tx.status_code === 'B' || tx.status_code === 'F' || tx.status_code === 'S' || tx.status_code === 'R') return 'settled';
  return 'pending_settlement';
}

/** Refunds that returned money (a voided or failed refund returned none). */
export function refundedCents(tx: TransactionDetail): number {
  return tx.refunds.filter((r) => r.status_code !== 'V' && r.status_code !== 'E').reduce((sum, r) => sum + toCents(r.amount), 0);
}

export function capturedCents(tx: TransactionDetail): number {
  const status = statusOf(tx);
  if (status === 'authorized' || status === 'voided' || status === 'declined' || status === 'error') return 0;
  return toCents(tx.auth_amount ?? tx.amount);
}

/**
 * What the look-up SHOWS captured now, or undefined when it cannot say: a standing sale's look-up without
 * `auth_amount` (the reference's look-up example and the real capture have none; SANDBOX_LOOKUP_AUTH_AMOUNT=omitted).
 * Its `amount` is what was asked, which a partial capture, `cc:adjust` or `refund:adjust` leaves as it was: never
 * evidence of what is held now. Money decisions read this; capturedCents' fallback is for display and seeds.
 */
export function shownCapturedCents(tx: TransactionDetail): number | undefined {
  const status = statusOf(tx);
  if (status === 'authorized' || status === 'voided' || status === 'declined' || status === 'error') return 0;
  return tx.auth_amount === undefined ? undefined : toCents(tx.auth_amount);
}

/** The sale's own fields as the gateway's lookup gives them (the payment method is not among them). */
export function fieldsOfDetail(tx: TransactionDetail): SaleFields {
  const f: SaleFields = { refnum: tx.refnum, result_code: tx.result_code ?? '', result: tx.result ?? '', authcode: tx.authcode ?? '', amount: tx.amount };
  if (tx.invoice !== undefined) f.invoice = tx.invoice;
  if (tx.creditcard) f.creditcard = tx.creditcard;
  if (tx.avs) f.avs = tx.avs;
  if (tx.cvc) f.cvc = tx.cvc;
  if (tx.batch) f.batch = tx.batch;
  return f;
}

/**
 * A record seeded from the gateway's view of a sale tokengate has no record of (made before, or expired): marked
 * `seeded`, made by no write, so the reconciler looking for an unknown write may still claim it as that write's (the
 * sale may be one whose answer was lost; src/reconcile/find.ts).
 */
export function recordFromDetail(tx: TransactionDetail): SaleRecord {
  const status = statusOf(tx);
  const state: SaleState = status === 'authorized' ? 'authorized' : status === 'voided' ? 'voided' : status === 'declined' || status === 'error' ? 'declined' : 'captured';
  return {
    customer: tx.custkey ?? '',
    state,
    authorizedCents: toCents(tx.auth_amount ?? tx.amount),
    capturedCents: capturedCents(tx),
    refundedCents: refundedCents(tx),
    pendingRefundCents: 0,
    fields: fieldsOfDetail(tx),
    seeded: true,
  };
}
