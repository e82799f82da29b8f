import { containsPan } from '../../src/card/pan';
import { parseTransaction, parseTransactionDetail } from '../../src/gateway/parse';
import type { Transaction, TransactionDetail } from '../../src/gateway/types';
import { decodeSaleFields, encodeSaleFields, SALE_FIELD_NAMES, type SaleFields } from '../../src/sale-records';
import { factsAfterCapture, factsAfterVoid, factsOfDetail, factsOfSale, fieldsOfSale, listedRefund, saleObject, type SaleAsked } from '../../src/sales/sale-object';
import { fieldsOfDetail } from '../../src/sales/sale-view';
import ccSale from '../fixtures/wire/cc-sale.json';
import transactionGet from '../fixtures/wire/transaction-get.json';

/**
 * The one sale object (contract: POST /v1/sales, GET, capture and void answer "the sale"): every source of a
 * sale's facts renders through saleObject(), so every answer has the same fields, and the fields tokengate keeps
 * from a sale's answer are those the gateway's lookup of it gives (checked on the real wire's captures).
 */
const asked: SaleAsked = { customer: 'cust1', payment_method: 'pm1', amount: '10.00', invoice: 'inv-1', capture: false };

const partialAnswer: Transaction = parseTransaction({
  type: 'transaction', key: 'k1', refnum: '3107222270', is_duplicate: 'N', result_code: 'P', result: 'Partially Approved', authcode: '314407',
  creditcard: { number: '4000xxxxxxxx2275', category_code: 'A' }, invoice: 'inv-1', avs: { result_code: 'YYY', result: 'Address: Match & 5 Digit Zip: Match' },
  cvc: { result_code: 'M', result: 'Match' }, auth_amount: '5.00',
});

const lookup = (over: Record<string, unknown>): TransactionDetail => parseTransactionDetail({
  type: 'transaction', key: 'k1', refnum: '3107222270', created: '2026-03-26 13:01:37', trantype_code: 'S', trantype: 'Credit Card Sale',
  result_code: 'P', result: 'Partially Approved', authcode: '314407', status_code: 'P', status: 'Authorized (Pending Settlement)',
  creditcard: { number: '4000xxxxxxxx2275', category_code: 'A' }, avs: { result_code: 'YYY', result: 'Address: Match & 5 Digit Zip: Match' },
  cvc: { result_code: 'M', result: 'Match' }, batch: { type: 'batch', key: 'b1', sequence: '7', batchrefnum: '42' },
  amount: '10.00', auth_amount: '5.00', invoice: 'inv-1', custkey: 'cust1', refunds: [], ...over,
});

const captureAnswer: Transaction = parseTransaction({
  type: 'transaction', key: 'k1', refnum: '3107222270', is_duplicate: 'N', result_code: 'A', result: 'Approved', authcode: '314407', auth_amount: '5.00',
  batch: { type: 'batch', key: 'b1', sequence: '7', batchrefnum: 42 },
});
const voidAnswer: Transaction = parseTransaction({ type: 'transaction', key: 'k1', refnum: '3107222270', is_duplicate: 'N', result_code: 'A', result: 'Approved', authcode: '314407' });

/** JSON as sent: undefined fields left out. */
const wire = (o: unknown) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>;

describe('the one sale object', () => {
  it('when a partial approval is authorized, captured and voided, then each answer equals the sale a lookup right after describes', () => {
    const kept = { customer: 'cust1', fields: fieldsOfSale(partialAnswer, asked) };
    const sold = wire(saleObject(factsOfSale(partialAnswer, asked)));
    expect(sold).toEqual(wire(saleObject(factsOfDetail(lookup({ trantype_code: 'A', batch: undefined }), { customer: 'cust1', fields: kept.fields }))));

    const captured = wire(saleObject(factsAfterCapture('k1', kept, captureAnswer, 500)));
    expect(captured).toEqual(wire(saleObject(factsOfDetail(lookup({}), { customer: 'cust1', fields: kept.fields }))));
    // The capture's own answer says A: the sale stays the partial approval it was.
    expect(captured).toMatchObject({ result_code: 'P', result: 'Partially Approved', auth_amount: '5.00', amount_captured: '5.00', batch: { key: 'b1', batchrefnum: '42' } });

    const voided = wire(saleObject(factsAfterVoid('k1', { ...kept, fields: { ...kept.fields, batch: captureAnswer.batch } }, voidAnswer)));
    expect(voided).toEqual(wire(saleObject(factsOfDetail(lookup({ status_code: 'V', status: 'Voided', auth_amount: '0.00' }), { customer: 'cust1', fields: kept.fields }))));
    expect(voided).toMatchObject({ status: 'voided', auth_amount: '0.00', amount_captured: '0.00' });
  });

  it('when built from any source, then the answer has the same fields in the same order', () => {
    const kept = { customer: 'cust1', fields: fieldsOfSale(partialAnswer, asked) };
    const shapes = [
      saleObject(factsOfSale(partialAnswer, asked)),
      saleObject(factsOfDetail(lookup({}), { customer: 'cust1', fields: { payment_method: 'pm1' } })),
      saleObject(factsAfterCapture('k1', kept, captureAnswer, 500)),
      saleObject(factsAfterVoid('k1', kept, voidAnswer)),
    ].map((s) => Object.keys(s));
    for (const keys of shapes) expect(keys).toEqual(shapes[0]);
    expect(shapes[0]).toEqual([
      'type', 'key', 'refnum', 'result_code', 'result', 'authcode', 'amount', 'auth_amount', 'is_duplicate', 'invoice', 'customer', 'payment_method',
      'creditcard', 'avs', 'cvc', 'batch', 'status', 'amount_captured', 'amount_refunded', 'refunds',
    ]);
  });

  it('when the real sandbox\'s sale answer and its lookup of the same sale are compared, then the fields kept from the answer are the lookup\'s', () => {
    const sale = parseTransaction(ccSale.capture);
    const detail = parseTransactionDetail(transactionGet.capture);
    expect(sale.key).toBe(detail.key);
    const { amount: _askedHere, payment_method: _ours, ...fromAnswer } = fieldsOfSale(sale, { ...asked, invoice: 'unused' });
    const { amount: _askedThere, ...fromLookup } = fieldsOfDetail(detail);
    expect(fromAnswer).toEqual(fromLookup);
    expect(fromLookup).toMatchObject({ avs: { result_code: 'YYY' }, cvc: { result_code: 'M' }, batch: { batchrefnum: '542814' } });
  });

  it('when a lookup has no auth_amount (the real one has none), then it is what the sale holds: the amount, or nothing once voided', () => {
    const real = parseTransactionDetail(transactionGet.capture);
    expect(saleObject(factsOfDetail(real))).toMatchObject({ auth_amount: '35.00', amount_captured: '35.00', is_duplicate: 'N', status: 'pending_settlement' });
    expect(saleObject(factsOfDetail({ ...real, status_code: 'V' }))).toMatchObject({ auth_amount: '0.00', amount_captured: '0.00', status: 'voided' });
  });

  it('when a sale is declined, then its answer carries the gateway\'s error text and code, and nothing held', () => {
    const declined = parseTransaction({ ...partialAnswer, result_code: 'D', result: 'Declined', authcode: '', auth_amount: undefined, error: 'Card Declined (00)', error_code: '10127' });
    expect(wire(saleObject(factsOfSale(declined, asked)))).toMatchObject({ status: 'declined', auth_amount: '0.00', amount_captured: '0.00', error: 'Card Declined (00)', error_code: '10127' });
  });
});

describe('a listed refund', () => {
  const refund = { key: 'd1', refnum: '3107222271', amount: '2.50', created: '2026-11-22 22:41:00', status_code: 'P' } as const;

  it('when the lookup gives it no result, then it is the contract\'s refund object, approved unless its status is Error', () => {
    expect(listedRefund('k1', refund)).toEqual({
      type: 'refund', key: 'd1', refnum: '3107222271', sale: 'k1', amount: '2.50', result_code: 'A', result: 'Approved', method: 'refund', created: '2026-11-22 22:41:00', status_code: 'P',
    });
    expect(listedRefund('k1', { ...refund, status_code: 'V' })).toMatchObject({ result_code: 'A', result: 'Approved' });
    expect(listedRefund('k1', { ...refund, status_code: 'E' })).toMatchObject({ result_code: 'E', result: 'Error' });
  });

  it('when the lookup gives it a result, then that result is the one listed', () => {
    expect(listedRefund('k1', { ...refund, result_code: 'E', result: 'Refund not permitted' })).toMatchObject({ result_code: 'E', result: 'Refund not permitted' });
  });
});

describe('the sale fields a record keeps', () => {
  const full: SaleFields = fieldsOfDetail(lookup({}));

  it('when encoded and decoded, then they come back as they were', () => {
    const pairs = encodeSaleFields({ ...full, payment_method: 'pm1' });
    const byName = new Map<string, string>();
    for (let i = 0; i < pairs.length; i += 2) byName.set(pairs[i] as string, pairs[i + 1] as string);
    expect(decodeSaleFields(SALE_FIELD_NAMES.map((n) => byName.get(n)))).toEqual({ ...full, payment_method: 'pm1' });
    expect(decodeSaleFields(SALE_FIELD_NAMES.map(() => null))).toBeUndefined();
  });

  it('when a value holds a card number, whatever let it through, then it is never encoded', () => {
    const pairs = encodeSaleFields({ ...full, creditcard: { number: '4000 1000 1111 2224', category_code: 'A' }, invoice: 'inv 4000-1000-1111-2224' });
    expect(pairs).not.toContain('card_number');
    expect(pairs).not.toContain('invoice');
    for (const v of pairs) expect(containsPan(v)).toBe(false);
  });

  it('when a sale\'s usual fields are encoded, then every value fits Redis\' compact hash encoding (64 bytes)', () => {
    for (const v of encodeSaleFields({ ...full, invoice: 'x'.repeat(64), payment_method: 'pm1' })) expect(Buffer.byteLength(v)).toBeLessThanOrEqual(64);
  });
});
