import { scrubResponse } from '../../src/idempotency/scrub';
import { separatorForms, TEST_CARDS } from '../support/test-cards';

describe('scrubResponse (stored replays)', () => {
  it('when an answer about to be stored carries a card number in any separator form, at any depth or in a header, then it is replaced', () => {
    for (const { number } of TEST_CARDS) {
      for (const form of separatorForms(number)) {
        const stored = scrubResponse({
          status: 201,
          body: { type: 'transaction', invoice: form, meta: [{ note: `card ${form}` }], n: Number(number) },
          headers: { 'x-note': form },
        });
        expect([form, JSON.stringify(stored).includes(form)]).toEqual([form, false]);
      }
    }
  });

  it('when an answer holds refnums, keys and clock-based invoices, then they are stored as they are', () => {
    const response = {
      status: 201,
      body: { type: 'transaction', key: 'dnfwxwhz5kvnbgb', refnum: '3102154832', invoice: 'ORD-1795369789000', batch: { key: 'ft1m9m5p9wgqf2d', sequence: '1' } },
      headers: { 'x-request-id': 'order-1795369789000-3' },
    };
    expect(scrubResponse(response)).toEqual(response);
  });
});
