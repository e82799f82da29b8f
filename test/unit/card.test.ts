import fc from 'fast-check';
import { luhnValid } from '../../src/card/luhn';
import { containsPan, isPan, redactPans } from '../../src/card/pan';
import { maskCardNumber } from '../../src/card/mask';

describe('luhnValid', () => {
  it.each(['4000100011112224', '371122223332225', '5555444433332226', '6011222233332224', '4000000011112275'])(
    'when given the test card %s, then it passes',
    (n) => expect(luhnValid(n)).toBe(true),
  );
  it('when one digit changes, then it fails', () => {
    expect(luhnValid('4000100011112225')).toBe(false);
  });
  it('when the input has non-digits, then it fails', () => {
    expect(luhnValid('4000-1000-1111-2224')).toBe(false);
    expect(luhnValid('')).toBe(false);
  });
});

describe('PAN detection', () => {
  it('when a card number hides in text with spaces or dashes, then it is found and redacted', () => {
    for (const form of ['4000100011112224', '4000 1000 1111 2224', '4000-1000-1111-2224', '3711-222233-32225']) {
      const text = `note: pay with ${form} please`;
      expect(containsPan(text)).toBe(true);
      expect(redactPans(text)).toBe('note: pay with [card] please');
    }
  });
  it('when digit runs fail Luhn or have the wrong length, then they are left alone', () => {
    expect(containsPan('order 4000100011112225 and 123456789012')).toBe(false);
    expect(redactPans('refnum 3100000001')).toBe('refnum 3100000001');
  });
  it('when a Luhn-valid run is glued to more digits, then it is not a PAN', () => {
    expect(isPan('40001000111122240000')).toBe(false);
    expect(containsPan('40001000111122240000')).toBe(false);
  });
  it('when separators are doubled, then the run is split and not a PAN', () => {
    expect(containsPan('4000  1000  1111  2224')).toBe(false);
  });
});

describe('maskCardNumber', () => {
  it('when given a 16-digit card, then the first and last four digits stay', () => {
    expect(maskCardNumber('4000100011112224')).toBe('4000xxxxxxxx2224');
  });
  it('when given a 15-digit Amex, then seven x replace the middle', () => {
    expect(maskCardNumber('371122223332225')).toBe('3711xxxxxxx2225');
  });
});

describe('PAN detection next to other digit groups', () => {
  it.each(['1 4000100011112224', '4000100011112224 5', '4000-1000-1111-2224-9', 'ref 12 4000 1000 1111 2224 77'])(
    'when a card number sits beside another group (%s), then it is found and redacted',
    (text) => {
      expect(containsPan(text)).toBe(true);
      expect(redactPans(text)).not.toMatch(/4000.?1000.?1111.?2224/);
    },
  );
  it('when the digits touch letters and the scan is delimited, then hex ids are not card numbers', () => {
    expect(containsPan('id=a4000100011112224f', { delimited: true })).toBe(false);
    expect(containsPan('id=a4000100011112224f')).toBe(true);
  });
});

describe('containsPan against the regex scan it replaced', () => {
  // The runs as the regex finds them, each judged alone (a whole run is one run to the scanner too).
  const RUN = /\d+(?:[ -]\d+)*/g;
  const oracle = (text: string) => [...text.matchAll(RUN)].some((m) => m[0].length >= 13 && containsPan(m[0]));
  const redactOracle = (text: string) => text.replace(RUN, (run) => (run.length >= 13 && containsPan(run) ? '[x]' : run));
  const pans = ['4000100011112224', '5555444433332226', '378282246310005', '6011222233332224', '4000 1000 1111 2224', '4000-1000-1111-2224'];

  it('when texts mix digit groups, spaces, dashes, letters and card numbers, then both scans agree on every one', () => {
    const piece = fc.oneof(
      fc.constantFrom(...pans),
      fc.stringMatching(/^[0-9]{1,8}$/),
      fc.constantFrom(' ', '-', '  ', '--', ' -', 'a', 'Z', '.', '/', '=', '\n'),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (parts) => {
        const text = parts.join('');
        expect(containsPan(text)).toBe(oracle(text));
        expect(redactPans(text, '[x]')).toBe(redactOracle(text));
      }),
      { numRuns: 5000 },
    );
  });
});
