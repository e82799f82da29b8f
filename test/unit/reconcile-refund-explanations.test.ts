import { canonicalExplanation, explanations } from '../../src/reconcile/find';
import type { Reservation } from '../../src/sale-records';

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
