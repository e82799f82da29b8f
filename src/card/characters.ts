import table from './character-classes.json';

/**
 * What each character is to the card-number rule (contract.md, 422 `card_data_forbidden`: "12 to 19 digits of
 * any script … grouped by separators"), from Unicode's own classes:
 * - a decimal digit: anything Unicode calls one (`\p{Nd}`: ASCII, full-width `４`, Arabic-Indic `٤`, Devanagari,
 *   the mathematical `𝟒` of "fancy text" generators, …), with its value. Unicode encodes every decimal digit in
 *   runs of ten, 0 to 9 in order (its stability policy), so the table keeps each run's 0.
 * - a separator a reader sees between groups (at most three count between two groups): any white space
 *   (spaces of every width, tabs, line and paragraph separators U+2028/U+2029), any dash (`\p{Pd}` and the minus
 *   sign), dots, underscores, slashes and plus signs in their ASCII and full-width forms, and what a Japanese IME
 *   types for `-`, `.` and `/` (`ー`, `。`, `・`).
 * - an invisible one: default-ignorable code points (zero-width space, joiners, word joiner U+2060, BOM U+FEFF,
 *   soft hyphen, bidi marks, variation selectors, tags) and marks that take no width (`4̲0̲0̲0̲`); they separate groups
 *   but are not counted among the three, since a reader sees none of them.
 * Everything else ends a run. The classes are data (character-classes.json, written by scripts/card-characters.js from
 * Node's Unicode tables, which test/unit/card-characters.test.ts compares them with).
 */

/**
 * Kinds 0–9 are digits (the kind is the value); the rest below. A const enum: its members are written into the
 * scanner's hot loops as numbers, not read off this module at each character.
 */
export const enum Kind {
  Separator = 10,
  Invisible = 11,
  Other = 12,
  /** A high surrogate: the kind is that of the code point it starts (see kindAt). */
  High = 13,
  /** Added to the kind of a code point written as a surrogate pair (two UTF-16 units). */
  Wide = 16,
}

/** The kinds of the code points base…base+0xffff (one plane); in the BMP, surrogates start (HIGH) or end a pair. */
function plane(base: number): Uint8Array {
  const kinds = new Uint8Array(0x10000).fill(Kind.Other);
  // Ranges "0300-036F" or single code points "200B", in hex.
  const mark = (ranges: readonly string[], kind: number) => {
    for (const range of ranges) {
      const [from = 0, to = from] = range.split('-').map((h) => parseInt(h, 16) - base);
      if (to >= 0 && from < 0x10000) kinds.fill(kind, Math.max(from, 0), Math.min(to, 0xffff) + 1);
    }
  };
  mark(table.separators, Kind.Separator);
  mark(table.invisibles, Kind.Invisible);
  for (const zero of table.digitZeros) {
    const at = parseInt(zero, 16) - base;
    if (at >= 0 && at < 0x10000) for (let value = 0; value < 10; value++) kinds[at + value] = value;
  }
  if (base === 0) kinds.fill(Kind.High, 0xd800, 0xdc00);
  return kinds;
}

/** The BMP, indexed by UTF-16 unit. */
const BMP = plane(0);
/** Plane 1 (U+10000–U+1FFFF): every astral decimal digit is there (mathematical, Osmanya, Adlam, …). */
const PLANE1 = plane(0x10000);
/** Plane 14: tags and variation selectors, invisible. No other plane holds a character of the rule (the generator checks). */
const PLANE14 = plane(0xe0000);

function astralKind(cp: number): number {
  const p = cp >> 16;
  return p === 1 ? (PLANE1[cp & 0xffff] as number) : p === 14 ? (PLANE14[cp & 0xffff] as number) : Kind.Other;
}

/**
 * The kind of the character at text[k] (k < text.length), plus Kind.Wide when it takes two units. A digit is
 * `(kind & 15) < 10`, its value `kind & 15`. A lone surrogate is Kind.Other.
 */
export function kindAt(text: string, k: number): number {
  const c = text.charCodeAt(k);
  const kind = BMP[c] as number;
  if (kind !== Kind.High) return kind;
  const low = text.charCodeAt(k + 1);
  if (!(low >= 0xdc00 && low <= 0xdfff)) return Kind.Other;
  return astralKind(((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000) | Kind.Wide;
}

/** A digit of any script; its value is `kind & 15`. */
export const isDigitKind = (kind: number): boolean => (kind & 15) < 10;

/** Every decimal digit of the text, of any script, as ASCII digits; everything else dropped ("４０-٠٠" → "4000"). */
export function asciiDigits(text: string): string {
  let out = '';
  for (let k = 0; k < text.length; k++) {
    const kind = kindAt(text, k);
    if (isDigitKind(kind)) out += String.fromCharCode(48 + (kind & 15));
    if (kind >= Kind.Wide) k++;
  }
  return out;
}
