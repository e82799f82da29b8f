import { containsPan } from '../card/pan';
import type {
  Batch, BatchStatus, CardRefToken, ListEnvelope, RefundSummary, ResultCode, StatusCode, Transaction, TransactionDetail,
} from './types';
import { canonicalAmount } from './money';
import { ShapeError, int, obj, str, type Obj } from './parse-fields';

export { ShapeError } from './parse-fields';
export { parseCustomer, parseDeleted, parsePaymentMethod, parsePaymentMethods, REDACTED, type OnRedacted } from './parse-wallet';

function pair(value: unknown): { result_code: string; result: string } | undefined {
  if (value === undefined || value === null) return undefined;
  const o = obj(value, 'verification');
  return { result_code: str(o, 'result_code', false) ?? '', result: str(o, 'result', false) ?? '' };
}

const MONEY = /^\d{1,12}(\.\d{1,2})?$/;

const RESULT_CODES: readonly string[] = ['A', 'P', 'D', 'E', 'V'];

/** `GET /publickey`: a bare JSON string (gateway-facts.md, Pay.js). */
export function parsePublicKey(body: unknown): string {
  if (typeof body !== 'string' || !/^[A-Za-z0-9_]{8,128}$/.test(body)) throw new ShapeError('the public key is not a short key string');
  return body;
}

export function parseTransaction(body: unknown): Transaction {
  const o = obj(body, 'transaction');
  const resultCode = str(o, 'result_code');
  if (!RESULT_CODES.includes(resultCode as string)) throw new ShapeError('result_code is unknown');
  const errorOnly = resultCode === 'E';
  const tx: Transaction = {
    type: 'transaction',
    key: str(o, 'key', !errorOnly) ?? '',
    refnum: str(o, 'refnum', !errorOnly) ?? '',
    is_duplicate: str(o, 'is_duplicate', false) ?? 'N',
    result_code: resultCode as ResultCode,
    result: str(o, 'result', false) ?? '',
    authcode: str(o, 'authcode', false) ?? '',
  };
  const optional = ['auth_amount', 'invoice', 'error', 'error_code', 'trantype'] as const;
  for (const f of optional) {
    const v = str(o, f, false);
    if (v !== undefined) tx[f] = v;
  }
  // Written with two decimals like all money, but not refused when odd: a decline's auth_amount is undocumented.
  if (tx.auth_amount !== undefined && MONEY.test(tx.auth_amount)) tx.auth_amount = canonicalAmount(tx.auth_amount);
  const card = creditcard(o.creditcard);
  if (card) tx.creditcard = card;
  const avs = pair(o.avs);
  if (avs) tx.avs = avs;
  const cvc = pair(o.cvc);
  if (cvc) tx.cvc = cvc;
  const batch = batchRef(o.batch);
  if (batch) tx.batch = batch;
  const saved = savedcard(o.savedcard);
  if (saved) tx.savedcard = saved;
  return tx;
}

function savedcard(value: unknown): Transaction['savedcard'] {
  if (value === undefined || value === null) return undefined;
  const sc = obj(value, 'savedcard');
  const cardnumber = str(sc, 'cardnumber', false) ?? '';
  if (containsPan(cardnumber) || (cardnumber.match(/\p{Nd}/gu) ?? []).length > 8) throw new ShapeError('savedcard.cardnumber is not masked');
  return { type: str(sc, 'type', false) ?? '', key: str(sc, 'key', false) ?? '', cardnumber, expiration: str(sc, 'expiration', false) ?? '' };
}

function creditcard(value: unknown): Transaction['creditcard'] {
  if (value === undefined || value === null) return undefined;
  const cc = obj(value, 'creditcard');
  const number = str(cc, 'number', false) ?? '';
  // A masked number keeps only 8 digits; anything with more digits, of any script (a card number or not), is
  // not trusted to leave this process.
  if (containsPan(number) || (number.match(/\p{Nd}/gu) ?? []).length > 8) throw new ShapeError('creditcard.number is not masked');
  return { number, category_code: str(cc, 'category_code', false) ?? '' };
}

function batchRef(value: unknown): Transaction['batch'] {
  if (value === undefined || value === null) return undefined;
  const b = obj(value, 'batch');
  // A number in sale answers, a string in lookups on the wire (UsaEPay.NET captures); kept as a string.
  const batchrefnum = str(b, 'batchrefnum', false);
  return { type: 'batch', key: str(b, 'key', false) ?? '', sequence: str(b, 'sequence', false) ?? '', ...(batchrefnum !== undefined ? { batchrefnum } : {}) };
}

const STATUS_CODES: readonly string[] = ['N', 'P', 'B', 'F', 'S', 'E', 'V', 'R', 'T'];

function statusCode(o: Obj): StatusCode {
  const v = str(o, 'status_code') as string;
  if (!STATUS_CODES.includes(v)) throw new ShapeError('status_code is unknown');
  return v as StatusCode;
}

/** Money as the gateway writes it: "12.34" (numbers and fewer decimals are accepted and written back with two). */
function money(o: Obj, field: string, required = true): string | undefined {
  const v = o[field];
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v.toFixed(2);
  const s = str(o, field, required);
  if (s === undefined) return undefined;
  if (!MONEY.test(s)) throw new ShapeError(`field ${field} is not an amount`);
  return canonicalAmount(s);
}

function refundSummary(value: unknown): RefundSummary {
  const o = obj(value, 'refund');
  const r: RefundSummary = { key: str(o, 'key') as string, refnum: str(o, 'refnum') as string, amount: money(o, 'amount') as string, created: str(o, 'created', false) ?? '', status_code: statusCode(o) };
  // Neither the captured lookup nor the emulator lists a refund's result; kept when a gateway does.
  const resultCode = str(o, 'result_code', false);
  if (resultCode !== undefined) {
    if (!RESULT_CODES.includes(resultCode)) throw new ShapeError('result_code is unknown');
    r.result_code = resultCode as ResultCode;
    r.result = str(o, 'result', false) ?? '';
  }
  return r;
}

/** `GET /transactions/{key}` and the items of the transaction lists. */
export function parseTransactionDetail(body: unknown): TransactionDetail {
  const o = obj(body, 'transaction');
  const tx: TransactionDetail = {
    type: 'transaction',
    key: str(o, 'key') as string,
    refnum: str(o, 'refnum') as string,
    created: str(o, 'created') as string,
    trantype_code: str(o, 'trantype_code') as string,
    trantype: str(o, 'trantype', false) ?? '',
    status_code: statusCode(o),
    status: str(o, 'status', false) ?? '',
    amount: money(o, 'amount') as string,
    refunds: o.refunds === undefined || o.refunds === null ? [] : Array.isArray(o.refunds) ? o.refunds.map(refundSummary) : [],
  };
  if (o.refunds !== undefined && o.refunds !== null && !Array.isArray(o.refunds)) throw new ShapeError('refunds is not an array');
  if (Array.isArray(o.refunds)) tx.refundsListed = true;
  const resultCode = str(o, 'result_code', false);
  if (resultCode !== undefined) {
    if (!RESULT_CODES.includes(resultCode)) throw new ShapeError('result_code is unknown');
    tx.result_code = resultCode as ResultCode;
  }
  for (const f of ['result', 'authcode', 'invoice', 'custkey', 'error', 'error_code'] as const) {
    const v = str(o, f, false);
    if (v !== undefined) tx[f] = v;
  }
  const authAmount = money(o, 'auth_amount', false);
  if (authAmount !== undefined) tx.auth_amount = authAmount;
  // The reference's "object" of up to 20 fields keyed "1".."20": text values kept, anything else left out (a
  // shape it does not document must not make the whole transaction unreadable). Issue 42 tags refunds in one.
  if (typeof o.custom_fields === 'object' && o.custom_fields !== null && !Array.isArray(o.custom_fields)) {
    const fields = Object.entries(o.custom_fields as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string');
    if (fields.length > 0) tx.custom_fields = Object.fromEntries(fields);
  }
  if (o.amount_detail !== undefined && o.amount_detail !== null) {
    const d = obj(o.amount_detail, 'amount_detail');
    tx.amount_detail = {};
    for (const k of Object.keys(d)) {
      const v = str(d, k, false);
      if (v !== undefined) tx.amount_detail[k] = v;
    }
  }
  const card = creditcard(o.creditcard);
  if (card) tx.creditcard = card;
  const avs = pair(o.avs);
  if (avs) tx.avs = avs;
  const cvc = pair(o.cvc);
  if (cvc) tx.cvc = cvc;
  const batch = batchRef(o.batch);
  if (batch) tx.batch = batch;
  if (o.original !== undefined && o.original !== null) {
    const orig = obj(o.original, 'original');
    tx.original = { key: str(orig, 'key') as string, refnum: str(orig, 'refnum', false) ?? '' };
  }
  return tx;
}

const BATCH_STATUSES: readonly string[] = ['open', 'closing', 'closed'];

/**
 * A batch as the reference shows it: one batch (`GET batches/{key}`) carries `status` and a count and amount pair
 * per kind "only … when batch contains this transaction type" (absent: none of it); a list's items carry only
 * `type, key, batchrefnum, sequence, opened` and `closed` once closed, so their status is read from `closed`.
 */
export function parseBatch(body: unknown): Batch {
  const o = obj(body, 'batch');
  if (o.type !== 'batch') throw new ShapeError('type is not batch');
  const closed = str(o, 'closed', false);
  const status = str(o, 'status', false) ?? (closed ? 'closed' : 'open');
  if (!BATCH_STATUSES.includes(status)) throw new ShapeError('batch status is unknown');
  const count = (field: string): number => (o[field] === undefined || o[field] === null ? 0 : int(o, field));
  const amount = (field: string): string => money(o, field, false) ?? '0.00';
  const batch: Batch = {
    type: 'batch',
    key: str(o, 'key') as string,
    batchrefnum: str(o, 'batchrefnum', false) ?? '',
    sequence: str(o, 'sequence', false) ?? '',
    status: status as BatchStatus,
    opened: str(o, 'opened', false) ?? '',
    sales_count: count('sales_count'),
    sales_amount: amount('sales_amount'),
    voids_count: count('voids_count'),
    voids_amount: amount('voids_amount'),
    refunds_count: count('refunds_count'),
    refunds_amount: amount('refunds_amount'),
  };
  if (closed) batch.closed = closed;
  return batch;
}

export function parseCardRefToken(body: unknown): CardRefToken {
  const o = obj(body, 'token');
  if (o.type !== 'token') throw new ShapeError('type is not token');
  const cardref = str(o, 'cardref') as string;
  if (!/^[A-Za-z0-9]{4}(-[A-Za-z0-9]{4}){3}$/.test(cardref)) throw new ShapeError('cardref has an unknown shape');
  return {
    type: 'token',
    cardref,
    expires: str(o, 'expires') as string,
    ccnumlast4: (str(o, 'ccnumlast4') as string).padStart(4, '0'),
    cardtype: (str(o, 'cardtype') as string).padStart(2, '0'),
    custkey: str(o, 'custkey') as string,
    pmkey: str(o, 'pmkey') as string,
  };
}

export function parseList<T>(body: unknown, item: (value: unknown) => T): ListEnvelope<T> {
  const o = obj(body, 'list');
  if (o.type !== 'list') throw new ShapeError('type is not list');
  if (!Array.isArray(o.data)) throw new ShapeError('data is not an array');
  return { type: 'list', limit: int(o, 'limit'), offset: int(o, 'offset'), total: int(o, 'total'), data: o.data.map((v: unknown) => item(v)) };
}

/** The gateway's error body `{error, errorcode}` (or `error_code` on transactions), when there is one. */
export function parseErrorBody(body: unknown): { message?: string; errorcode?: number } {
  if (body === null || typeof body !== 'object') return {};
  const o = body as Obj;
  const raw = o.errorcode ?? o.error_code;
  const errorcode = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
  return { message: typeof o.error === 'string' ? o.error : undefined, errorcode };
}
