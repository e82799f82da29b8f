import { refusalReason } from '../../src/gateway/errors';
import { ShapeError, parseBatch, parseTransaction, parseTransactionDetail } from '../../src/gateway/parse';

describe('lifecycle answers parsing', () => {
  const detail = {
    type: 'transaction', key: 'dnfwxwhz5kvnbgb', refnum: '3107222270', created: '2026-11-22 22:40:00', trantype_code: 'S', trantype: 'Credit Card Sale',
    status_code: 'S', status: 'Settled', result_code: 'A', result: 'Approved', authcode: '314407', amount: '10.00', auth_amount: '10.00',
    amount_detail: { tax: '1.00', tip: '0.00' }, invoice: 'inv-1', custkey: 'nsds9yd1h5kb9y5d', creditcard: { type: 'V', number: '4000xxxxxxxx2224', category_code: 'A' },
    batch: { type: 'batch', key: 'ft1m9m5p9wgd9mb', batchrefnum: '400123', sequence: '1' },
    refunds: [{ type: 'transaction', key: 'd0000000000001', refnum: '3107222271', amount: '2.50', created: '2026-11-22 22:41:00', status_code: 'P', status: 'x' }],
  };

  it('when a looked-up transaction has the documented fields, then they are kept, typed', () => {
    expect(parseTransactionDetail(detail)).toMatchObject({
      key: 'dnfwxwhz5kvnbgb', status_code: 'S', trantype_code: 'S', amount: '10.00', custkey: 'nsds9yd1h5kb9y5d', amount_detail: { tax: '1.00' },
      batch: { key: 'ft1m9m5p9wgd9mb' }, refunds: [{ key: 'd0000000000001', amount: '2.50', status_code: 'P' }],
    });
  });

  it('when amounts come as numbers (as some real answers send them), then they are written back with two decimals', () => {
    expect(parseTransactionDetail({ ...detail, amount: 10, auth_amount: 7.5 })).toMatchObject({ amount: '10.00', auth_amount: '7.50' });
  });

  it('when amounts come with fewer than two decimals, then they are written back with two, the refunds\' too', () => {
    const refunds = [{ ...detail.refunds[0], amount: '2.5' }];
    expect(parseTransactionDetail({ ...detail, amount: '10', auth_amount: '7.5', refunds })).toMatchObject({ amount: '10.00', auth_amount: '7.50', refunds: [{ amount: '2.50' }] });
    expect(parseTransaction({ type: 'transaction', key: 'k', refnum: '1', result_code: 'A', auth_amount: '4.5' }).auth_amount).toBe('4.50');
  });

  it('when a listed refund carries its own result, then it is kept; an unknown one is refused', () => {
    const withResult = (r: object) => parseTransactionDetail({ ...detail, refunds: [{ ...detail.refunds[0], ...r }] }).refunds[0];
    expect(withResult({ result_code: 'E', result: 'Error' })).toMatchObject({ result_code: 'E', result: 'Error' });
    expect(withResult({})).not.toHaveProperty('result_code');
    expect(() => withResult({ result_code: 'Z' })).toThrow(ShapeError);
  });

  it('when refunds are absent, then the list is empty; when the status is unknown or the card unmasked, then the answer is refused', () => {
    const { refunds: _r, ...plain } = detail;
    expect(parseTransactionDetail(plain).refunds).toEqual([]);
    expect(() => parseTransactionDetail({ ...detail, status_code: 'Q' })).toThrow(ShapeError);
    expect(() => parseTransactionDetail({ ...detail, creditcard: { number: '4000100011112224' } })).toThrow(ShapeError);
    expect(() => parseTransactionDetail({ ...detail, amount: '10.001' })).toThrow(ShapeError);
    expect(() => parseTransactionDetail({ ...detail, refunds: 'none' })).toThrow(ShapeError);
  });

  it('when a batch has counts as strings and numbers, then both parse; an unknown status is refused', () => {
    const b = { type: 'batch', key: 'ft1', batchrefnum: 400123, sequence: '2', status: 'closed', opened: '2026-11-22 00:00:00', closed: '2026-11-22 23:00:00', sales_count: '3', sales_amount: '30.00', voids_count: 0, voids_amount: '0.00', refunds_count: 1, refunds_amount: '5.00' };
    expect(parseBatch(b)).toMatchObject({ batchrefnum: '400123', status: 'closed', sales_count: 3, refunds_count: 1, closed: '2026-11-22 23:00:00' });
    expect(() => parseBatch({ ...b, status: 'gone' })).toThrow(ShapeError);
  });

  it('when a batch comes as the reference shows it (list items with no status or counts; a pair left out when none of its kind; amounts as numbers), then it is read', () => {
    // docs/api-rest.md (UsaEPay.NET), Retrieve Batches and Current Batch, verbatim.
    expect(parseBatch({ type: 'batch', key: 'et1m9h57b44h16g', batchrefnum: '408318', sequence: '1519', opened: '2019-02-15 12:32:21' }))
      .toMatchObject({ status: 'open', sales_count: 0, voids_count: 0, refunds_count: 0, refunds_amount: '0.00' });
    expect(parseBatch({ type: 'batch', key: 'dt18n0g3b4q4sm8', batchrefnum: '408317', sequence: '1518', opened: '2019-02-15 09:56:35', closed: '2019-02-15 10:00:23' }))
      .toMatchObject({ status: 'closed', closed: '2019-02-15 10:00:23' });
    const current = { type: 'batch', key: 'bt1vswm59pb2488', batchrefnum: '403685', opened: '2018-10-15 05:04:37', status: 'open', scheduled: '2018-10-16 17:04:37', total_amount: 131, total_count: 8, sales_amount: 131, sales_count: 8 };
    expect(parseBatch(current)).toMatchObject({ status: 'open', sales_count: 8, sales_amount: '131.00', voids_count: 0, voids_amount: '0.00', refunds_count: 0 });
    expect(() => parseBatch({ ...current, sales_count: 'many' })).toThrow(ShapeError);
  });
});

describe('refusal reasons', () => {
  it.each([
    ['capture', 10105, 'not_found'],
    ['capture', 10125, 'not_capturable'],
    ['capture', 24, 'not_capturable'],
    ['capture', 10126, 'not_capturable'],
    ['capture', 10133, 'capture_exceeds'],
    ['void', 35, 'not_found'],
    ['void', 24, 'not_voidable'],
    ['void', 83, 'not_voidable'],
    ['void', 26, 'already_settled'],
    ['void', 103, 'already_settled'],
    ['void', 10126, 'already_settled'],
    ['refund', 113, 'not_found'],
    ['refund', 20001, 'not_found'],
    ['refund', 114, 'refund_exceeds'],
    ['refund', 10133, 'refund_exceeds'],
    ['refund', 115, 'not_refundable'],
    ['refund', 10125, 'not_refundable'],
    ['refund', 20019, 'rejected'],
    ['void', undefined, 'rejected'],
  ] as const)('when a %s is refused with %s, then the reason is %s', (op, code, reason) => {
    expect(refusalReason(op, code)).toBe(reason);
  });
});
