import { canonicalExplanation, explanations } from '../../src/reconcile/find';
import type { TransactionDetail } from '../../src/gateway/types';
import type { Credit } from '../../src/reconcile/find-refund';
import { decideRefund } from '../../src/reconcile/refund-decision';
import type { Reservation, SaleRecord } from '../../src/sale-records';

/** Which of a sale's refunds of unknown outcome the gateway's unattributed money can be (contract guarantees 6, 7). */
const r = (id: string, cents: number): Reservation => ({ id, op: 'refund', cents, unknown: true });

describe('explanations of the money a sale returned beyond its settled refunds', () => {
  it('when the returned money is exactly another unknown refund, then this one is not among what happened', () => {
    expect(explanations(500, r('a', 300), [r('b', 500)])).toBe('none');
  });
  it('when nothing was returned, then this one did not happen', () => {
    expect(explanations(0, r('a', 300), [r('b', 500)])).toBe('none');
  });
  it('when the money needs this one in every way it adds up, then it happened', () => {
    expect(explanations(300, r('a', 300), [r('b', 500)])).toBe('all');
    expect(explanations(800, r('a', 300), [r('b', 500)])).toBe('all');
  });
  it('when two unknown refunds of the same amount and one such amount returned, then it cannot be told yet', () => {
    expect(explanations(400, r('a', 400), [r('b', 400)])).toBe('some');
  });
  it('when no subset adds up (a refund made elsewhere, or one still landing), then it is no proof either way', () => {
    expect(explanations(100, r('a', 300), [r('b', 500)])).toBe('some');
  });
  it('when several ways add up and some hold it, then it waits', () => {
    expect(explanations(500, r('a', 200), [r('b', 300), r('c', 500)])).toBe('some');
  });
});

describe('the one explanation every replica picks once no refund can still land', () => {
  it('when two refunds of one amount are unknown and one such amount came back, then the earlier id is credited and the other is not', () => {
    expect(canonicalExplanation(400, r('a', 400), [r('b', 400)])).toBe('all');
    expect(canonicalExplanation(400, r('b', 400), [r('a', 400)])).toBe('none');
  });
  it('when the credited one settles, then what is left picks the same way (the other stays uncredited)', () => {
    // a credited (400 settled): nothing unaccounted is left for b.
    expect(canonicalExplanation(0, r('b', 400), [])).toBe('none');
    // b decided first (not credited) and released: a alone explains the 400.
    expect(canonicalExplanation(400, r('a', 400), [])).toBe('all');
  });
  it('when several ways add up, then the earliest ids are included first, and nothing fitting gives no pick', () => {
    expect(canonicalExplanation(500, r('a', 200), [r('b', 300), r('c', 500)])).toBe('all');
    expect(canonicalExplanation(500, r('c', 500), [r('a', 200), r('b', 300)])).toBe('none');
    expect(canonicalExplanation(100, r('a', 300), [r('b', 500)])).toBeUndefined();
  });
});

describe('an unknown refund decided from documented evidence only (issue 42)', () => {
  // A settled sale of 40.00 (its auth_amount unchanged by credits), no refund settled yet.
  const sale = { type: 'transaction', key: 'dsale', refnum: '1', created: '', trantype_code: 'S', trantype: '', status_code: 'S', status: 'Settled', result_code: 'A', amount: '40.00', auth_amount: '40.00', batch: { type: 'batch', key: 'b', batchrefnum: 1, sequence: '1' }, refunds: [] } as unknown as TransactionDetail;
  const known = { customer: 'c', state: 'captured', authorizedCents: 4000, capturedCents: 4000, refundedCents: 0, pendingRefundCents: 1000 } as SaleRecord;
  const credit = (key: string, cents: number, tag?: string): Credit => ({ key, refnum: key, cents, voided: false, ...(tag ? { tag } : {}) });
  const base = { tx: sale, known, mine: r('a', 1000), others: [], final: true, credits: [], credited: new Set<string>(), settledAdjustCents: 0 };

  it('when its tagged credit is listed, then it happened and names that credit', () => {
    expect(decideRefund({ ...base, credits: [credit('other', 1000), credit('mine', 1000, 'a')] })).toEqual({ happened: true, key: 'mine', refnum: 'mine', method: 'refund' });
  });
  it('when no credit of its amount is listed and the look-up shows no money back, then it did not happen', () => {
    expect(decideRefund({ ...base, credits: [credit('x', 500)] })).toEqual({ happened: false });
  });
  it('when an untagged credit of its amount is listed, then it is never proven absent (it may be this one)', () => {
    expect(decideRefund({ ...base, credits: [credit('x', 1000)] })).toMatchObject({ happened: 'unknown' });
    // One credited to another write, or tagged by another, is not this one.
    expect(decideRefund({ ...base, credits: [credit('x', 1000)], credited: new Set(['x']) })).toEqual({ happened: false });
    expect(decideRefund({ ...base, credits: [credit('x', 1000, 'b')] })).toEqual({ happened: false });
  });
  it('when an unsettled sale\'s capture was lowered by its amount, then it happened as an adjust naming the sale', () => {
    const lowered = { ...sale, status_code: 'P', auth_amount: '30.00' } as TransactionDetail;
    expect(decideRefund({ ...base, tx: lowered })).toEqual({ happened: true, key: 'dsale', refnum: '1', method: 'refund' });
  });
  it('when another unknown refund of the same amount has its tagged credit listed, then the lowered capture is this one\'s', () => {
    const lowered = { ...sale, status_code: 'P', auth_amount: '30.00' } as TransactionDetail;
    expect(decideRefund({ ...base, tx: lowered, others: [r('b', 1000)], final: false, credits: [credit('cb', 1000, 'b')] })).toMatchObject({ happened: true, key: 'dsale' });
  });
});
