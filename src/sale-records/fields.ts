import { containsPan } from '../card/pan';
import type { AchStatus, BankFields, SaleFields } from './types';

/**
 * SaleFields as hash fields of the sale's record, one short string each. Records are kept 400 days, and a hash
 * whose values all stay within 64 bytes keeps Redis' compact encoding (listpack): a typical record is 570 bytes
 * with its fields (170 without), where one JSON value holding them would make it a hash table of 1,120
 * (MEMORY USAGE, Redis 7.0). `refnum` marks a record that has them. The same names serve the memory store.
 */
export const SALE_FIELD_NAMES = [
  'refnum', 'result_code', 'result', 'authcode', 'amount', 'invoice', 'payment_method', 'card_number', 'card_category',
  'avs_code', 'avs_result', 'cvc_code', 'cvc_result', 'batch_key', 'batch_sequence', 'batch_refnum', 'error', 'error_code',
  // A bank payment's (BankFields): `bank_sec` marks one. The authorization text may pass 64 bytes (one listpack less).
  'bank_authorization', 'bank_sec', 'ach_status', 'return_code', 'returned_at', 'amount_returned',
] as const;

type FieldName = (typeof SALE_FIELD_NAMES)[number];

/**
 * Name, value pairs (flat, for HSET). Guarantee 1 (no card number in any Redis value): a value holding one is
 * left out, whatever let it through (the gateway client already refuses an unmasked number).
 */
export function encodeSaleFields(f: SaleFields): string[] {
  const values: Record<FieldName, string | undefined> = {
    refnum: f.refnum,
    result_code: f.result_code,
    result: f.result,
    authcode: f.authcode,
    amount: f.amount,
    invoice: f.invoice,
    payment_method: f.payment_method,
    card_number: f.creditcard?.number,
    card_category: f.creditcard?.category_code,
    avs_code: f.avs?.result_code,
    avs_result: f.avs?.result,
    cvc_code: f.cvc?.result_code,
    cvc_result: f.cvc?.result,
    batch_key: f.batch?.key,
    batch_sequence: f.batch?.sequence,
    batch_refnum: f.batch?.batchrefnum,
    error: f.error,
    error_code: f.error_code,
    bank_authorization: f.bank?.authorization,
    bank_sec: f.bank?.sec,
    ach_status: f.bank?.ach_status,
    return_code: f.bank?.return_code,
    returned_at: f.bank?.returned_at,
    amount_returned: f.bank?.amount_returned,
  };
  const pairs: string[] = [];
  for (const name of SALE_FIELD_NAMES) {
    const v = values[name];
    if (v !== undefined && !containsPan(v)) pairs.push(name, v);
  }
  return pairs;
}

/** The batch fields alone (a capture heard from a webhook puts the sale in its batch). */
export function encodeBatchFields(batch: NonNullable<SaleFields['batch']>): string[] {
  const pairs: string[] = [];
  for (const [name, v] of [['batch_key', batch.key], ['batch_sequence', batch.sequence], ['batch_refnum', batch.batchrefnum]] as const) {
    if (v !== undefined && !containsPan(v)) pairs.push(name, v);
  }
  return pairs;
}

/** Values in SALE_FIELD_NAMES order (HMGET's reply); undefined when the record has none (no `refnum`). */
export function decodeSaleFields(values: readonly (string | null | undefined)[]): SaleFields | undefined {
  const v = (name: FieldName): string | undefined => values[SALE_FIELD_NAMES.indexOf(name)] ?? undefined;
  const refnum = v('refnum');
  if (refnum === undefined) return undefined;
  const f: SaleFields = { refnum, result_code: v('result_code') ?? '', result: v('result') ?? '', authcode: v('authcode') ?? '', amount: v('amount') ?? '' };
  const invoice = v('invoice');
  if (invoice !== undefined) f.invoice = invoice;
  const pm = v('payment_method');
  if (pm !== undefined) f.payment_method = pm;
  const number = v('card_number');
  if (number !== undefined) f.creditcard = { number, ...(v('card_category') !== undefined ? { category_code: v('card_category') } : {}) };
  if (v('avs_code') !== undefined) f.avs = { result_code: v('avs_code') ?? '', result: v('avs_result') ?? '' };
  if (v('cvc_code') !== undefined) f.cvc = { result_code: v('cvc_code') ?? '', result: v('cvc_result') ?? '' };
  const error = v('error');
  if (error !== undefined) f.error = error;
  const errorCode = v('error_code');
  if (errorCode !== undefined) f.error_code = errorCode;
  const sec = v('bank_sec');
  if (sec !== undefined) {
    const bank: BankFields = { authorization: v('bank_authorization') ?? '', sec };
    const status = v('ach_status');
    if (status !== undefined) bank.ach_status = status as AchStatus;
    for (const name of ['return_code', 'returned_at', 'amount_returned'] as const) {
      const value = v(name);
      if (value !== undefined) bank[name] = value;
    }
    f.bank = bank;
  }
  const batchKey = v('batch_key');
  if (batchKey !== undefined) {
    const batchrefnum = v('batch_refnum');
    f.batch = { type: 'batch', key: batchKey, sequence: v('batch_sequence') ?? '', ...(batchrefnum !== undefined ? { batchrefnum } : {}) };
  }
  return f;
}
