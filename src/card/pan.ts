import { luhnValid } from './luhn';
import { cardNetwork, cardNetworkByPrefix, PREFIX_DIGITS } from './networks';

/**
 * The one card-number detector: the card-data guard, the logger's redaction, the scrub of stored replays and
 * the gateway client's unmasked-number check all call it (contract: 422 `card_data_forbidden`).
 *
 * A card number is 12–19 digits, unbroken or in groups joined by separators (one to three characters between
 * two groups, of one kind or mixed: spaces, tabs, line breaks, no-break and thin spaces, dashes and hyphens, dots,
 * underscores, slashes), whose prefix and length fall in a card network's issuer ranges (networks.json) and
 * which passes Luhn: a card number in any form a person types or pastes ("4000  1000  1111  2224",
 * "4000 - 1000 - 1111 - 2224", "4000\u00a01000…", "4000-1000.1111 2224"). A network may refuse groups of a clock
 * value's length (UATP's clockGroups: a millisecond clock value and a counter, "order-1795369789000-23", is 15
 * digits starting with 1).
 *
 * A run is digit groups joined by separators. Every sequence of WHOLE groups of 12–19 digits inside a run is
 * tried, so a card number next to one more group ("1 4000100011112224", "4000-1000-1111-2224-9") is still
 * found; an unbroken digit stretch is never cut, so "40001000111122240000" is not a card number, and four
 * separators or more end a run.
 * `delimited`: the chosen groups must not touch letters either (header values hold hex and base64 ids whose digit stretches are not card numbers). A run wholly
 * inside a canonical UUID (`66422251-1355-4707-9c8a-89ddd225b5b4`, an Idempotency-Key from
 * `crypto.randomUUID()`) is an identifier, not a card number.
 */

export interface PanScanOptions {
  delimited?: boolean;
}

export const MIN_PAN_DIGITS = 12;
export const MAX_PAN_DIGITS = 19;

/** True when the digits (nothing else) are a card number: length, a network's range, Luhn. */
export function isCardDigits(digits: string): boolean {
  return digits.length >= MIN_PAN_DIGITS && digits.length <= MAX_PAN_DIGITS && cardNetwork(digits) !== undefined && luhnValid(digits);
}

/** The most separator characters between two groups of one card number ("4000 - 1000": three). */
const MAX_SEPARATOR = 3;
const SEPARATORS = /[ \t\n\r\u00a0\u2007\u2009\u202f\u2010-\u2013\u2212._/-]+/g;

/** True when the candidate (digit groups and separators, nothing else) is a card number as written. */
export function isPan(candidate: string): boolean {
  if ((candidate.match(SEPARATORS) ?? []).some((sep) => sep.length > MAX_SEPARATOR)) return false;
  const groups = candidate.split(SEPARATORS);
  const digits = groups.join('');
  if (digits.length < MIN_PAN_DIGITS || digits.length > MAX_PAN_DIGITS || !/^\d+$/.test(digits) || !luhnValid(digits)) return false;
  const groupLengths = groups.length > 1 ? groups.reduce((mask, g) => mask | (1 << g.length), 0) : 0;
  return cardNetworkByPrefix(Number(digits.slice(0, PREFIX_DIGITS)), digits.length, groupLengths) !== undefined;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
/** Space, tab, LF, CR, - . _ /, no-break space, figure space, thin space, narrow no-break space, hyphens and dashes, minus. */
function isSeparator(c: number): boolean {
  if (c < 128) return c === 32 || c === 45 || c === 46 || c === 95 || c === 47 || c === 9 || c === 10 || c === 13;
  return c === 0xa0 || c === 0x2007 || c === 0x2009 || c === 0x202f || (c >= 0x2010 && c <= 0x2013) || c === 0x2212;
}
const isAlnum = (c: number) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isHex = (c: number) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

/** Where the dashes of a canonical UUID stand (8-4-4-4-12 hex digits, 36 characters in all). */
const UUID_LENGTH = 36;
const isUuidDash = (k: number) => k === 8 || k === 13 || k === 18 || k === 23;

/** True when text[s, s + 36) is a canonical UUID touching no letter or digit on either side. */
function isUuidAt(text: string, s: number): boolean {
  if (s < 0 || s + UUID_LENGTH > text.length) return false;
  if ((s > 0 && isAlnum(text.charCodeAt(s - 1))) || (s + UUID_LENGTH < text.length && isAlnum(text.charCodeAt(s + UUID_LENGTH)))) return false;
  for (let k = 0; k < UUID_LENGTH; k++) {
    const c = text.charCodeAt(s + k);
    if (isUuidDash(k) ? c !== 45 : !isHex(c)) return false;
  }
  return true;
}

/**
 * True when the run text[from, to) lies wholly inside a canonical UUID: its decimal groups are pieces of an
 * identifier (a v4 UUID's first groups are all decimal about once in 2,300, its last one once in 280), not a
 * card number, which no network prints in a UUID's 8-4-4-4-12 layout. Only asked of runs that hold a candidate.
 */
function insideUuid(text: string, from: number, to: number): boolean {
  for (let s = Math.max(0, to - UUID_LENGTH); s <= from; s++) if (isUuidAt(text, s)) return true;
  return false;
}

// Group offsets of the run being tried, reused across calls (nothing here re-enters the scanner).
const starts: number[] = [];
const ends: number[] = [];

// Luhn's doubled digit: 2d, less 9 past 9.
const DOUBLED = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];

/**
 * True when some sequence of whole groups in the run holds a card number, the groups being
 * `starts[0..count)`/`ends[0..count)`. From each first group the digits are taken one at a time, keeping the
 * Luhn sum both ways (rightmost digit doubled or not: appending a digit swaps the two) and the first six
 * digits, so nothing is allocated and at most 19 digits are read per first group: linear in the run.
 */
function runHoldsPan(text: string, count: number, delimited: boolean): boolean {
  for (let i = 0; i < count; i++) {
    const from = starts[i] as number;
    if (delimited && from > 0 && isAlnum(text.charCodeAt(from - 1))) continue;
    let size = 0;
    let undoubled = 0; // the Luhn sum with the rightmost digit so far not doubled (valid when ≡ 0 mod 10)
    let doubled = 0; // the same with the rightmost digit doubled
    let first6 = 0;
    let groupLengths = 0; // bit n: a group of n digits so far (a network may refuse some: networks.json, clockGroups)
    for (let j = i; j < count; j++) {
      const groupStart = starts[j] as number;
      const to = ends[j] as number;
      if (size + to - groupStart > MAX_PAN_DIGITS) break;
      groupLengths |= 1 << (to - groupStart);
      for (let k = groupStart; k < to; k++) {
        const d = text.charCodeAt(k) - 48;
        const next = doubled + d;
        doubled = undoubled + (DOUBLED[d] as number);
        undoubled = next;
        if (size < PREFIX_DIGITS) first6 = first6 * 10 + d;
        size++;
      }
      if (size < MIN_PAN_DIGITS) continue;
      if (delimited && to < text.length && isAlnum(text.charCodeAt(to))) continue;
      if (undoubled % 10 === 0 && cardNetworkByPrefix(first6, size, j > i ? groupLengths : 0) !== undefined) return true;
    }
  }
  return false;
}

/** Records the digit groups of the run text[from, to) and tries them: the rare, long-run path. */
function runAt(text: string, from: number, to: number, delimited: boolean): boolean {
  let count = 0;
  for (let k = from; k < to; k++) {
    if (!isDigit(text.charCodeAt(k))) continue;
    starts[count] = k;
    while (k < to && isDigit(text.charCodeAt(k))) k++;
    ends[count] = k;
    count++;
  }
  return runHoldsPan(text, count, delimited);
}

// What runEnd counted besides the end: the run's digits. Module state keeps runEnd allocation-free.
let runDigits = 0;

/** The end of the run starting with the digit at `start`: digit groups joined by one to three separators. */
function runEnd(text: string, start: number): number {
  let j = start + 1;
  let digits = 1;
  for (;;) {
    if (j < text.length && isDigit(text.charCodeAt(j))) {
      j++;
      digits++;
      continue;
    }
    let k = j;
    while (k < text.length && k - j < MAX_SEPARATOR && isSeparator(text.charCodeAt(k))) k++;
    if (k === j || k >= text.length || !isDigit(text.charCodeAt(k))) break;
    j = k + 1;
    digits++;
  }
  runDigits = digits;
  return j;
}

/**
 * One left-to-right pass over the text, calling `onRun(start, end)` for each run holding a card number
 * until it returns true. Every request's headers (a JWT among them) and body go through here, so a run is
 * first measured without storing anything; only runs of 12 digits or more have their groups recorded.
 */
function scan(text: string, delimited: boolean, onRun: (start: number, end: number) => boolean): boolean {
  for (let i = 0; i < text.length; ) {
    if (!isDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const end = runEnd(text, i);
    if (runDigits >= MIN_PAN_DIGITS && runAt(text, i, end, delimited) && !insideUuid(text, i, end) && onRun(i, end)) return true;
    i = end;
  }
  return false;
}

/** True when any run in the text holds a card number. */
export function containsPan(text: string, options: PanScanOptions = {}): boolean {
  if (text.length < MIN_PAN_DIGITS) return false;
  return scan(text, options.delimited === true, () => true);
}

/** Replaces every run that holds a card number, whole, with the replacement (over-redacting a neighbour group is fine). */
export function redactPans(text: string, replacement = '[card]'): string {
  if (text.length < MIN_PAN_DIGITS) return text;
  let out = '';
  let copied = 0;
  scan(text, false, (start, end) => {
    out += text.slice(copied, start) + replacement;
    copied = end;
    return false;
  });
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * A deep copy of a JSON-like value with every card number replaced: in strings (any run holding one) and in
 * numbers that are one. For answers about to leave the process or be stored, as a last line of defence.
 */
export function redactPansDeep(value: unknown, replacement = '[card]', depth = 0): unknown {
  if (typeof value === 'string') return redactPans(value, replacement);
  if (typeof value === 'number' || typeof value === 'bigint') return isPan(String(value)) ? replacement : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return '[too deep]';
  if (Array.isArray(value)) return value.map((v: unknown) => redactPansDeep(v, replacement, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactPansDeep(v, replacement, depth + 1);
  return out;
}
