import { parseRateLimitHeader, formatRateLimitHeader } from '../../src/gateway/rate-limit-header';
import { parseCardRefToken, parseList, parseCustomer, parseTransaction, parsePaymentMethod, REDACTED, ShapeError } from '../../src/gateway/parse';
import { endpointKeyOf, hostBases } from '../../src/gateway/client';
import ccSale from '../fixtures/wire/cc-sale.json';
import transactionGet from '../fixtures/wire/transaction-get.json';
import customerList from '../fixtures/wire/customer-list.json';
import paymentMethodList from '../fixtures/wire/payment-method-list.json';

describe('X-Rate-Limit header', () => {
  it('when given the documented example, then all four numbers come out', () => {
    expect(parseRateLimitHeader('8 of 45/min; 8 of 5000/day')).toEqual({ minuteUsed: 8, minuteLimit: 45, dayUsed: 8, dayLimit: 5000 });
  });
  it('when the value is quoted or spaced differently, then it still parses', () => {
    expect(parseRateLimitHeader('"12 of 45/min;  300 of 5000/day"')).toEqual({ minuteUsed: 12, minuteLimit: 45, dayUsed: 300, dayLimit: 5000 });
    expect(parseRateLimitHeader(['1 of 2 / min ; 3 of 4 / day'])).toEqual({ minuteUsed: 1, minuteLimit: 2, dayUsed: 3, dayLimit: 4 });
  });
  it('when the header is absent or garbled, then nothing is guessed', () => {
    for (const v of [undefined, '', '8 of 45/min', 'eight of 45/min; 8 of 5000/day', '8 of 45/hour; 8 of 5000/day', '1'.repeat(300)]) {
      expect(parseRateLimitHeader(v)).toBeUndefined();
    }
  });
  it('when formatted and parsed back, then the values survive', () => {
    const info = { minuteUsed: 3, minuteLimit: 45, dayUsed: 99, dayLimit: 5000 };
    expect(parseRateLimitHeader(formatRateLimitHeader(info))).toEqual(info);
  });
});

describe('gateway answer parsing', () => {
  const approved = {
    type: 'transaction', key: 'dnfwxwhz5kvnbgb', refnum: '3107222270', is_duplicate: 'N', result_code: 'A', result: 'Approved', authcode: '314407',
    creditcard: { number: '4000xxxxxxxx2224', category_code: 'A' }, invoice: 'inv-1', avs: { result_code: 'YYY', result: 'Address: Match & 5 Digit Zip: Match' },
    cvc: { result_code: 'M', result: 'Match' }, batch: { type: 'batch', key: 'ft1m9m5p9wgd9mb', sequence: '1' }, auth_amount: '10.00',
  };
  it('when a sale answer has the documented fields, then they are kept', () => {
    expect(parseTransaction(approved)).toMatchObject({ key: 'dnfwxwhz5kvnbgb', result_code: 'A', creditcard: { number: '4000xxxxxxxx2224' }, batch: { sequence: '1' } });
  });
  it('when a decline carries error and error_code, then they are kept as strings', () => {
    expect(parseTransaction({ ...approved, result_code: 'D', result: 'Declined', authcode: '', error: 'Card Declined', error_code: 10127 })).toMatchObject({ result_code: 'D', error_code: '10127' });
  });
  it('when a sale answer carries an unmasked card number, then it is refused', () => {
    expect(() => parseTransaction({ ...approved, creditcard: { number: '4000100011112224' } })).toThrow(ShapeError);
    expect(() => parseTransaction({ ...approved, creditcard: { number: '4000.1000.1111.2224' } })).toThrow(ShapeError);
    expect(parseTransaction({ ...approved, creditcard: { number: '4000xxxxxxxx2224' } }).creditcard?.number).toBe('4000xxxxxxxx2224');
  });
  it('when result_code is unknown or missing, then it is refused', () => {
    expect(() => parseTransaction({ ...approved, result_code: 'Z' })).toThrow(ShapeError);
    expect(() => parseTransaction({ key: 'x' })).toThrow(ShapeError);
    expect(() => parseTransaction('Approved')).toThrow(ShapeError);
  });
  it('when a token documents numbers but sends strings (or the reverse), then it is normalised', () => {
    const t = parseCardRefToken({ type: 'token', cardref: 'jayu-e1rc-32in-m84z', expires: '2019-09-30', ccnumlast4: 225, cardtype: 3, custkey: 'c', pmkey: 'p' });
    expect(t).toEqual({ type: 'token', cardref: 'jayu-e1rc-32in-m84z', expires: '2019-09-30', ccnumlast4: '0225', cardtype: '03', custkey: 'c', pmkey: 'p' });
  });
  it('when a token has another shape, then it is refused', () => {
    expect(() => parseCardRefToken({ type: 'token', cardref: '4000100011112224', expires: 'x', ccnumlast4: '1', cardtype: '1', custkey: 'c', pmkey: 'p' })).toThrow(ShapeError);
  });
  it('when a list sends total as a string, then it becomes an integer', () => {
    expect(parseList({ type: 'list', limit: 10, offset: 20, total: '21', data: [{ key: 'c1', type: 'customer' }] }, parseCustomer)).toMatchObject({ total: 21, data: [{ key: 'c1' }] });
  });
  it('when a payment method carries a full card number, then it is not carried on: redacted in a kept field, an unused one dropped', () => {
    const full = parsePaymentMethod({ key: 'p', card_number: '4000100011112224' });
    expect(JSON.stringify(full)).not.toContain('4000100011112224');
    expect(parsePaymentMethod({ key: 'p', method_name: 'my card 5555_4444_3333_2226' }).method_name).toBe(`my card ${REDACTED}`);
    expect(parsePaymentMethod({ key: 'p', ccnum4last: '2224', expires: '1230' })).toMatchObject({ key: 'p', ccnum4last: '2224' });
  });
});

// The wire's forms beside the spec's: captures of the real sandbox (test/fixtures/wire, from
// Spire-Recovery-Solutions/UsaEPay.NET UsaEPay.NET.Tests/UnitTests/WireFormatDeserializationTests.cs).
describe('gateway answer parsing: the wire forms', () => {
  it('when a captured sale answer is read, then batchrefnum (a number there) becomes a string and the rest is kept', () => {
    expect(parseTransaction(ccSale.capture)).toMatchObject({ key: 'enfy1zj9dh3cdjc', result_code: 'A', auth_amount: '29.99', batch: { key: 'ct189xsq1m3kdbp', batchrefnum: '542814', sequence: '279' } });
  });
  it('when a captured transaction lookup sends batchrefnum as a string, then it is kept as that string', () => {
    expect(parseTransaction(transactionGet.capture).batch).toEqual({ type: 'batch', key: 'ct189xsq1m3kdbp', batchrefnum: '542814', sequence: '279' });
  });
  it('when batchrefnum is neither a number nor a string, then the answer is refused', () => {
    expect(() => parseTransaction({ ...ccSale.capture, batch: { type: 'batch', key: 'k', batchrefnum: { n: 1 }, sequence: '1' } })).toThrow(ShapeError);
  });
  it('when an answer has no batchrefnum (the spec form), then the batch has none', () => {
    expect(parseTransaction({ ...ccSale.capture, batch: { type: 'batch', key: 'k', sequence: '1' } }).batch).toEqual({ type: 'batch', key: 'k', sequence: '1' });
  });
  it('when error_code comes as the decline string or the gateway-error number (20019), then both read as strings', () => {
    const base = { type: 'transaction', result_code: 'E', result: 'Error', error: 'Unknown command' };
    expect(parseTransaction({ ...base, error_code: 20019 })).toMatchObject({ result_code: 'E', error_code: '20019', key: '', refnum: '' });
    expect(parseTransaction({ ...ccSale.capture, result_code: 'D', error: 'Card Declined (00)', error_code: '10127' })).toMatchObject({ error_code: '10127', error: 'Card Declined (00)' });
  });
  it('when a captured list sends total as a string, or the spec form sends an integer, then both are integers', () => {
    expect(parseList(customerList.capture, parseCustomer)).toMatchObject({ total: 3, limit: 2, data: [{ key: 'dsddpf0skjps3rvh' }, { key: 'asddx7vwk4x0sw6s' }] });
    expect(parseList({ ...customerList.capture, total: 3 }, parseCustomer).total).toBe(3);
    expect(() => parseList({ ...customerList.capture, total: '3.5' }, parseCustomer)).toThrow(ShapeError);
  });
  it('when a captured payment-method list is read, then its masked methods pass', () => {
    expect(parseList(paymentMethodList.capture, parsePaymentMethod)).toMatchObject({ total: 2, data: [{ key: 'an02pc6wdjfsr7mv8', expires: '0929' }, { key: 'dn02pfzv609hyy0n8' }] });
  });
});

describe('gateway URLs', () => {
  it('when the base URL carries v2 or an endpoint key, then that is the endpoint key', () => {
    expect(endpointKeyOf('https://secure.example/api/v2/')).toBe('v2');
    expect(endpointKeyOf('http://127.0.0.1:1234/api/ek_live_1')).toBe('ek_live_1');
    expect(() => endpointKeyOf('https://secure.example/other/')).toThrow();
  });
  it('when failover hosts are given, then only the host changes', () => {
    expect(hostBases('https://secure.example/api/v2/', ['www-01.example', 'www-02.example:8443', 'secure.example'])).toEqual([
      'https://secure.example/api/v2/', 'https://www-01.example/api/v2/', 'https://www-02.example:8443/api/v2/',
    ]);
  });
});
