import fc from 'fast-check';
import { scrubResponse, storedResponseJson } from '../../src/idempotency/scrub';
import { scriptForms, separatorForms, TEST_CARDS } from '../support/test-cards';

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

describe('storedResponseJson (what a replay record keeps)', () => {
  const pans = TEST_CARDS.flatMap(({ number }) => separatorForms(number));
  // Strings mixing card numbers in every form, merchant-like ids, digits and separators, so runs meet at edges.
  // Forms in other scripts and with joins JSON escapes (\f, \u000b) or writes as they are (U+2028, U+200B) too (issue 30).
  const unicodePans = TEST_CARDS.slice(0, 8).flatMap(({ number }) => scriptForms(number));
  const piece = fc.oneof(
    fc.constantFrom(...pans),
    fc.constantFrom(...unicodePans),
    fc.constantFrom('ORD-', '1795369789000', ' ', '-', '.', '_', '/', '"', '\\', '\n', 'é', '\f', '\u000b', '\u2028', '\u200b', '+', '４', '\ud835'),
    fc.string({ maxLength: 6 }),
  );
  const text = fc.array(piece, { maxLength: 5 }).map((xs) => xs.join(''));
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(...TEST_CARDS.map((c) => Number(c.number))), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.dictionary(text, tie('value'), { maxKeys: 4 }),
  }));

  it('when any answer is stored, then it is exactly what the deep scrub would keep', () => {
    fc.assert(
      fc.property(json.object, fc.dictionary(fc.constantFrom('x-note', 'retry-after'), text), (body, headers) => {
        const response = { status: 201, body, headers };
        expect(JSON.parse(storedResponseJson(response))).toEqual(JSON.parse(JSON.stringify(scrubResponse(response))));
      }),
      { numRuns: 2000 },
    );
  });

  it('when an answer carries a card number, then the stored text does not', () => {
    for (const form of pans) {
      expect([form, storedResponseJson({ status: 201, body: { invoice: form }, headers: {} }).includes(form)]).toEqual([form, false]);
    }
  });
});
