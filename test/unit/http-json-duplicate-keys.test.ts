import fc from 'fast-check';
import { hasDuplicateKey } from '../../src/http/json-body';

/** JSON built by hand from entry lists, so a repeated key survives into the text; `dup` says whether one does. */
interface Built {
  text: string;
  dup: boolean;
}
const keyArb = fc.oneof(fc.constantFrom('a', 'b', 'amount', 'tax', '', 'é', 'a"b', 'a\\b', '\u0000'), fc.string({ unit: 'grapheme', maxLength: 4 }));
/** Spells a key with JSON escapes for some of its characters: the same key to a JSON reader. */
const spell = (key: string, escapes: boolean) =>
  escapes ? `"${[...key].map((ch) => (ch.length === 1 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : ch)).join('')}"` : JSON.stringify(key);
const { value } = fc.letrec<{ value: Built }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constantFrom('{"x":1,"x":2}', ',', '[', ']')).map((v) => ({ text: JSON.stringify(v), dup: false })),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => ({ text: `[${items.map((i) => i.text).join(',')}]`, dup: items.some((i) => i.dup) })),
    fc.array(fc.tuple(keyArb, fc.boolean(), tie('value')), { maxLength: 5 }).map((entries) => ({
      text: `{${entries.map(([k, esc, v]) => `${spell(k, esc)}:${v.text}`).join(',')}}`,
      dup: new Set(entries.map(([k]) => k)).size < entries.length || entries.some(([, , v]) => v.dup),
    })),
  ),
}));

describe('hasDuplicateKey', () => {
  it('when JSON holds objects with or without a repeated key (escaped spellings, strings that look like JSON), then it says exactly whether one repeats', () => {
    fc.assert(
      fc.property(value, ({ text, dup }) => {
        JSON.parse(text); // the generator writes valid JSON only
        expect(hasDuplicateKey(text)).toBe(dup);
      }),
      { numRuns: 5000 },
    );
  });

  it('when a body is nested thousands deep, then the check neither overflows nor misses the repeat at the bottom', () => {
    const depth = 100_000;
    expect(hasDuplicateKey('{"a":'.repeat(depth) + '{"k":1,"k":2}' + '}'.repeat(depth))).toBe(true);
    expect(hasDuplicateKey('['.repeat(depth) + '{"k":1}' + ']'.repeat(depth))).toBe(false);
  });
});

describe('hasDuplicateKey on wide objects', () => {
  it('when an object has many names (past the small-object array), then a repeat among them is still found', () => {
    const names = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`);
    expect(hasDuplicateKey(`{${names.join(',')}}`)).toBe(false);
    expect(hasDuplicateKey(`{${names.join(',')},"k3":0}`)).toBe(true);
    expect(hasDuplicateKey(`{${names.join(',')},"\\u006b39":0}`)).toBe(true);
  });
});
