import type { RefundSummary, Transaction, TransactionDetail } from '../gateway/types';
import type { ListedSaleRefund, SaleFields, SaleView } from '../sale-records';
import { createdText } from '../sale-records/refunds';
import { fromCents, toCents } from '../gateway/money';
import { achStatusOfCode, bankStatusOf, capturedCents, fieldsOfDetail, refundedCents, statusOf, type SaleStatus } from './sale-view';

/** A refund as a sale lists it (the contract's refund object, plus when and the gateway's status code). */
export interface ListedRefund {
  type: 'refund';
  key: string;
  refnum: string;
  sale: string;
  amount: string;
  result_code: string;
  result: string;
  method: 'refund' | 'void';
  created: string;
  /** The gateway's status of a refund it listed; tokengate's own refunds, known from their answers, have none. */
  status_code?: string;
}

/**
 * A refund of the sale's lookup as the contract's refund object. Listed refunds are refunds (`method` refund): a
 * refund that voided the sale shows as the sale's status instead.
 */
export function listedRefund(saleKey: string, r: RefundSummary): ListedRefund {
  // A listed refund is a transaction the gateway made, and follow-ups answer only A or E (gateway-facts.md, The
  // payment lifecycle). So a refund listed without a result of its own (the emulator's lookup, src/sandbox/
  // README.md) was approved, unless its status is E Error (which amount_refunded leaves out too). A voided (V)
  // refund was approved, then voided.
  const [resultCode, result] = r.result_code !== undefined ? [r.result_code, r.result ?? ''] : r.status_code === 'E' ? ['E', 'Error'] : ['A', 'Approved'];
  return {
    type: 'refund', key: r.key, refnum: r.refnum, sale: saleKey, amount: r.amount, result_code: resultCode, result, method: 'refund', created: r.created, status_code: r.status_code,
  };
}

/**
 * THE public sale object (contract.md: `POST /v1/sales`, `GET /v1/sales/{key}`, capture and void answer "the
 * sale"; openapi.json `Sale`): the gateway's fields of the sale, then its lifecycle status and amounts.
 * Undefined fields are left out of the JSON.
 */
export interface SaleObject {
  type: 'sale';
  key: string;
  refnum: string;
  result_code: string;
  result: string;
  authcode: string;
  amount: string;
  auth_amount: string;
  is_duplicate: string;
  invoice: string | undefined;
  customer: string | undefined;
  payment_method: string | undefined;
  creditcard: SaleFields['creditcard'];
  avs: SaleFields['avs'];
  cvc: SaleFields['cvc'];
  batch: SaleFields['batch'];
  status: SaleStatus;
  amount_captured: string;
  amount_refunded: string;
  refunds: ListedRefund[];
  error?: string;
  error_code?: string;
  /** A bank payment: the shopper's authorization as recorded with it (contract, "Bank payments"). */
  authorization?: { text: string; sec: string };
  /** A returned bank payment: the bank's reason code, when it was returned, and the amount taken back. */
  return_code?: string;
  returned_at?: string;
  amount_returned?: string;
}

/** What a sale answer states, gathered from whichever source knows it (the facts… functions below). */
export interface SaleFacts {
  key: string;
  fields: SaleFields;
  customer: string | undefined;
  /** What is held or captured now ("12.34"): below `amount` after a partial approval or a partial capture. */
  authAmount: string;
  /** 'Y' only on an answer the gateway folded into an earlier identical call; a lookup is never one. */
  isDuplicate: string;
  status: SaleStatus;
  capturedCents: number;
  refundedCents: number;
  refunds: readonly (RefundSummary | ListedRefund)[];
  /** A decline's (or an error's) text and code, when the source gives them. */
  error?: string;
  errorCode?: string;
}

/**
 * The ONE builder of a sale answer: the sale, capture and void answers, GET and every reconciled replay render
 * through it, so they carry the same fields with the same meaning; only where the facts come from differs.
 */
export function saleObject(f: SaleFacts): SaleObject {
  const x = f.fields;
  const sale: SaleObject = {
    type: 'sale',
    key: f.key,
    refnum: x.refnum,
    result_code: x.result_code,
    result: x.result,
    authcode: x.authcode,
    amount: x.amount,
    auth_amount: f.authAmount,
    is_duplicate: f.isDuplicate,
    invoice: x.invoice,
    customer: f.customer || undefined,
    payment_method: x.payment_method,
    creditcard: x.creditcard,
    avs: x.avs,
    cvc: x.cvc,
    batch: x.batch,
    status: f.status,
    amount_captured: fromCents(f.capturedCents),
    amount_refunded: fromCents(f.refundedCents),
    refunds: f.refunds.map((r) => ('type' in r ? r : listedRefund(f.key, r))),
  };
  if (f.error !== undefined) {
    sale.error = f.error;
    sale.error_code = f.errorCode;
  }
  const bank = x.bank;
  if (bank) {
    sale.authorization = { text: bank.authorization, sec: bank.sec };
    // Approved and not voided: the debit's own life (pending, submitted, settled, returned, failed).
    if (f.status === 'pending_settlement' || f.status === 'settled') sale.status = bankStatusOf(bank.ach_status);
    if (bank.return_code !== undefined) sale.return_code = bank.return_code;
    if (bank.returned_at !== undefined) sale.returned_at = bank.returned_at;
    if (bank.amount_returned !== undefined) sale.amount_returned = bank.amount_returned;
  }
  return sale;
}

/** A refund a sale's view lists, as the contract's refund object. */
function refundOfView(saleKey: string, r: ListedSaleRefund): ListedRefund {
  const failed = r.statusCode === 'E';
  return {
    type: 'refund', key: r.key, refnum: r.refnum, sale: saleKey, amount: fromCents(r.cents), result_code: failed ? 'E' : 'A', result: failed ? 'Error' : 'Approved',
    method: r.method, created: createdText(r.created), ...(r.statusCode ? { status_code: r.statusCode } : {}), ...(r.voided ? { status: 'voided' as const } : {}),
  };
}

/**
 * `GET /v1/sales/{key}` from tokengate's view (guarantee 9): the record its own writes, the gateway's webhooks
 * and earlier reads keep. Every refund tokengate made is listed whatever command carried it, so the look-up
 * says the same money the refund answers did (issue 25, item 6): a part of an unsettled sale (refund:adjust) is
 * a refund here, not a lower capture. A sale voided by a refund of all that was left keeps what it captured and
 * refunded; one voided outright holds and captured nothing.
 */
export function factsOfView(saleKey: string, view: SaleView): SaleFacts {
  const { record } = view;
  const fields = record.fields ?? { refnum: '', result_code: '', result: '', authcode: '', amount: '' };
  const state = record.state === 'voiding' ? 'captured' : record.state; // until the void's answer, as it was
  const status: SaleStatus = state === 'declined'
    ? fields.result_code === 'E' ? 'error' : 'declined'
    : state === 'voided' ? 'voided'
      : state === 'authorized' || state === 'capturing' ? 'authorized'
        : view.settled ? 'settled' : 'pending_settlement';
  const refundedByUs = view.refunds.some((r) => r.own);
  const keepsMoney = state === 'captured' || (state === 'voided' && refundedByUs);
  const authCents = state === 'authorized' || state === 'capturing' ? record.authorizedCents : state === 'captured' ? record.capturedCents : 0;
  return {
    key: saleKey,
    fields,
    customer: record.customer,
    authAmount: fromCents(authCents),
    isDuplicate: 'N',
    status,
    capturedCents: keepsMoney ? record.capturedCents : 0,
    refundedCents: keepsMoney ? record.refundedCents : 0,
    refunds: view.refunds.map((r) => refundOfView(saleKey, r)),
    ...(fields.error !== undefined ? { error: fields.error, errorCode: fields.error_code } : {}),
  };
}

/** What `POST /v1/sales` asked for and sent. */
export interface SaleAsked {
  customer: string;
  /** The stored method charged, or the one a payment-key sale stored (when known by the answer). */
  payment_method: string | undefined;
  amount: string;
  /** The invoice sent (the caller's, or the one derived for duplicate folding). */
  invoice: string;
  capture: boolean;
  /** A bank payment: the authorization and SEC code sent with it. */
  bank?: { authorization: string; sec: string };
}

/** The sale's own fields from the gateway's answer to it and what was asked. */
export function fieldsOfSale(tx: Transaction, asked: SaleAsked): SaleFields {
  return {
    refnum: tx.refnum,
    result_code: tx.result_code,
    result: tx.result,
    authcode: tx.authcode,
    amount: asked.amount,
    invoice: tx.invoice ?? asked.invoice,
    payment_method: asked.payment_method,
    creditcard: tx.creditcard,
    avs: tx.avs,
    cvc: tx.cvc,
    batch: tx.batch,
    ...(tx.error !== undefined ? { error: tx.error, error_code: tx.error_code } : {}),
    // An approved check is pending until the ACH clock submits it (gateway-facts.md, ACH).
    ...(asked.bank ? { bank: { ...asked.bank, ...(tx.result_code === 'A' ? { ach_status: 'P' as const } : {}) } } : {}),
  };
}

/** `POST /v1/sales` (and the transaction of its 402): the gateway's answer and what was asked. */
export function factsOfSale(tx: Transaction, asked: SaleAsked): SaleFacts {
  const approved = tx.result_code === 'A' || tx.result_code === 'P';
  const authAmount = tx.auth_amount ?? (tx.result_code === 'A' ? asked.amount : '0.00');
  const status: SaleStatus = approved ? (asked.capture ? 'pending_settlement' : 'authorized') : tx.result_code === 'E' ? 'error' : 'declined';
  return {
    key: tx.key,
    fields: fieldsOfSale(tx, asked),
    customer: asked.customer,
    authAmount,
    isDuplicate: tx.is_duplicate,
    status,
    capturedCents: status === 'pending_settlement' ? toCents(authAmount) : 0,
    refundedCents: 0,
    refunds: [],
    ...(tx.error !== undefined ? { error: tx.error, errorCode: tx.error_code } : {}),
  };
}

/**
 * `GET /v1/sales/{key}` and reconciled answers: the gateway's record now, over what tokengate knows of the sale
 * that a lookup does not say (the payment method it charged; a field a lookup leaves out).
 */
export function factsOfDetail(tx: TransactionDetail, known: { customer?: string; fields?: Partial<SaleFields> } = {}): SaleFacts {
  const status = statusOf(tx);
  const kept = known.fields ?? {};
  return {
    key: tx.key,
    fields: {
      ...kept,
      ...fieldsOfDetail(tx),
      result_code: tx.result_code ?? kept.result_code ?? '',
      result: tx.result ?? kept.result ?? '',
      authcode: tx.authcode ?? kept.authcode ?? '',
      // A bank payment's look-up says where its debit stands (its status code); the rest is what tokengate kept.
      ...(kept.bank ? { bank: { ...kept.bank, ...(achStatusOfCode(tx.status_code) ? { ach_status: achStatusOfCode(tx.status_code) } : {}) } } : {}),
    },
    customer: known.customer || tx.custkey,
    // A lookup without auth_amount (the captured real one has none): nothing is held by a void or a decline.
    authAmount: tx.auth_amount ?? (status === 'voided' || status === 'declined' || status === 'error' ? '0.00' : tx.amount),
    isDuplicate: 'N',
    status,
    capturedCents: capturedCents(tx),
    refundedCents: refundedCents(tx),
    refunds: tx.refunds,
    // A lookup does not carry a decline's text; the sale's own answer did, and its record keeps it.
    ...(tx.error !== undefined ? { error: tx.error, errorCode: tx.error_code } : kept.error !== undefined ? { error: kept.error, errorCode: kept.error_code } : {}),
  };
}

/** The sale's fields once captured: in the batch the capture answer names (an authorization had none). */
export function fieldsAfterCapture(fields: SaleFields, tx: Transaction): SaleFields {
  return tx.batch ? { ...fields, batch: tx.batch } : fields;
}

/** What tokengate keeps of a sale it acts on: its owner and its fields (src/sale-records). */
export interface KeptSale {
  customer: string;
  fields: SaleFields;
}

// Captures and voids list no refunds and nothing refunded: the gateway refunds only settled sales, a capture
// takes an open authorization and a void an unsettled sale, and a part refunded of an unsettled sale lowered
// its authorization instead (refund:adjust). gateway-facts.md, The payment lifecycle.

/** An approved capture: the sale as kept, holding (and having captured) what the gateway says it captured. */
export function factsAfterCapture(saleKey: string, kept: KeptSale, tx: Transaction, cents: number): SaleFacts {
  const authAmount = tx.auth_amount ?? fromCents(cents);
  return {
    key: saleKey,
    fields: fieldsAfterCapture(kept.fields, tx),
    customer: kept.customer,
    authAmount,
    isDuplicate: tx.is_duplicate,
    status: 'pending_settlement',
    capturedCents: toCents(authAmount),
    refundedCents: 0,
    refunds: [],
  };
}

/** An approved void (cc:void:release): nothing held or captured any more; the sale stays in its batch. */
export function factsAfterVoid(saleKey: string, kept: KeptSale, tx: Transaction): SaleFacts {
  return {
    key: saleKey,
    fields: kept.fields,
    customer: kept.customer,
    authAmount: '0.00',
    isDuplicate: tx.is_duplicate,
    status: 'voided',
    capturedCents: 0,
    refundedCents: 0,
    refunds: [],
  };
}
