import { isDigitKind, Kind, kindAt } from './characters';
import { luhnValid } from './luhn';
import { cardNetwork, cardNetworkByPrefix, PREFIX_DIGITS } from './networks';

/**
 * The one card-number detector: the card-data guard, the logger's and the spans' redaction, the scrub of stored
 * replays, the sale records' field filter and the gateway client's unmasked-number check all call it
 * (contract: 422 `card_data_forbidden`).
 *
 * A card number is 12–19 digits of any script (characters.ts: ASCII, full-width "４０００…", Arabic-Indic
 * "٤٠٠٠…", any `\p{Nd}`, read by value and mixed freely), unbroken or in groups joined by separators (one to
 * three a reader sees between two groups, of one kind or mixed: spaces and line breaks of every kind, dashes,
 * dots, underscores, slashes, plus signs; invisible ones, such as zero-width spaces and joiners, are not
 * counted), whose prefix and length fall in a card network's issuer ranges (networks.json) and which passes
 * Luhn: a card number in any form a person types or pastes ("4000  1000  1111  2224", "4000 - 1000 - 1111 - 2224",
 * "4000\u00a01000…", "4000-1000.1111 2224", "4000\u200b1000…", "４０００ー１０００…"). A network may refuse groups
 * of a clock value's length (UATP's clockGroups: a millisecond clock value and a counter,
 * "order-1795369789000-23", is 15 digits starting with 1).
 *
 * A run is digit groups joined by separators. Every sequence of WHOLE groups of 12–19 digits inside a run is
 * tried, so a card number next to one more group ("1 4000100011112224", "4000-1000-1111-2224-9") is still
 * found; an unbroken digit stretch is never cut, so "40001000111122240000" is not a card number, and four
 * visible separators or more end a run.
 * `delimited`: the chosen groups must not touch ASCII letters or digits either (header values hold hex and
 * base64 ids whose digit stretches are not card numbers). A run wholly inside a canonical UUID
 * (`66422251-1355-4707-9c8a-89ddd225b5b4`, an Idempotency-Key from `crypto.randomUUID()`) or inside a hex string
 * of 32 hex digits or more (a digest: the gateway's 64-hex webhook `event_id`) is an identifier, not a card number.
 */

export interface PanScanOptions {
  delimited?: boolean;
  /**
   * The text is an HTTP header value as Node hands it over: its bytes read as latin1, so a UTF-8 "４" arrives as
   * "ï¼\x94". When the scan meets a UTF-8 lead byte (0xC2–0xF4) and no card number, the value is scanned again
   * read as UTF-8, where digits and separators of other scripts are what the client sent. Found by the scan
   * itself, so an ASCII value (nearly all) costs nothing more.
   */
  headerBytes?: boolean;
}

export const MIN_PAN_DIGITS = 12;
export const MAX_PAN_DIGITS = 19;

/** True when the digits (nothing else) are a card number: length, a network's range, Luhn. */
export function isCardDigits(digits: string): boolean {
  return digits.length >= MIN_PAN_DIGITS && digits.length <= MAX_PAN_DIGITS && cardNetwork(digits) !== undefined && luhnValid(digits);
}

/** True when the candidate (digit groups and separators, nothing else) is, as a whole, a card number as written. */
export function isPan(candidate: string): boolean {
  if (candidate.length < MIN_PAN_DIGITS || !isDigitKind(kindAt(candidate, 0))) return false;
  if (runEnd(candidate, 0) !== candidate.length || runDigits > MAX_PAN_DIGITS) return false;
  const count = recordGroups(candidate, 0, candidate.length, runDigits);
  let digits = '';
  let groupLengths = 0;
  for (let k = 0; k < valueCount; k++) digits += String(values[k]);
  for (let g = 0; g < count; g++) groupLengths |= 1 << ((g + 1 < count ? (groupFirstDigit[g + 1] as number) : valueCount) - (groupFirstDigit[g] as number));
  if (digits.length < MIN_PAN_DIGITS || !luhnValid(digits)) return false;
  return cardNetworkByPrefix(Number(digits.slice(0, PREFIX_DIGITS)), digits.length, count > 1 ? groupLengths : 0) !== undefined;
}

/** The most separators a reader sees between two groups of one card number ("4000 - 1000": three); invisible ones are not counted. */
const MAX_SEPARATOR = 3;

const isAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
/** UTF-16 units of a character of this kind (characters.ts). */
const width = (kind: number) => (kind >= Kind.Wide ? 2 : 1);
/** kindAt, with ASCII digits (most of what is read here) answered without the table. */
function kindAtFast(text: string, k: number): number {
  const c = text.charCodeAt(k);
  return c >= 48 && c <= 57 ? c - 48 : kindAt(text, k);
}

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

/** The fewest hex digits of a digest-shaped identifier: an MD5's 32 (SHA-1's 40, SHA-256's 64: the gateway's `event_id`). */
const HEX_ID_MIN = 32;

/**
 * True when the run text[from, to) is unbroken ASCII digits inside a hex string of HEX_ID_MIN hex digits or more
 * (any case) touching no other letter or digit: a digest-shaped identifier, such as the gateway's webhook `event_id`
 * (64 hex, gateway-facts.md), whose decimal stretches are not card numbers. About 1 random 64-hex id in 660 holds
 * one in a network's range and Luhn-valid, and tokengate's webhook intake refused those events as card data (422,
 * so the gateway retried them until it gave up). A run with a separator in it is not wholly inside one.
 */
function insideHexId(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c < 48 || c > 57) return false;
  }
  let s = from;
  while (s > 0 && isHex(text.charCodeAt(s - 1))) s--;
  let e = to;
  while (e < text.length && isHex(text.charCodeAt(e))) e++;
  return e - s >= HEX_ID_MIN && !(s > 0 && isAlnum(text.charCodeAt(s - 1))) && !(e < text.length && isAlnum(text.charCodeAt(e)));
}

// The run being tried, reused across calls (nothing here re-enters the scanner): per group, where it stands in
// the text and where its digits start in `values`, which holds the value of every digit of the run, any script.
const groupFrom: number[] = [];
const groupTo: number[] = [];
const groupFirstDigit: number[] = [];
let values = new Uint8Array(64);
let valueCount = 0;

// Luhn's doubled digit: 2d, less 9 past 9.
const DOUBLED = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];

/**
 * True when some sequence of whole groups in the run holds a card number (the groups recordGroups kept). From
 * each first group the digits are taken one at a time, keeping the Luhn sum both ways (rightmost digit doubled
 * or not: appending a digit swaps the two) and the first six digits, so nothing is allocated and at most 19
 * digits are read per first group: linear in the run.
 */
function runHoldsPan(text: string, count: number, delimited: boolean): boolean {
  const v = values;
  for (let i = 0; i < count; i++) {
    const from = groupFrom[i] as number;
    if (delimited && from > 0 && isAlnum(text.charCodeAt(from - 1))) continue;
    let size = 0;
    let undoubled = 0; // the Luhn sum with the rightmost digit so far not doubled (valid when ≡ 0 mod 10)
    let doubled = 0; // the same with the rightmost digit doubled
    let first6 = 0;
    let groupLengths = 0; // bit n: a group of n digits so far (a network may refuse some: networks.json, clockGroups)
    for (let j = i; j < count; j++) {
      const first = groupFirstDigit[j] as number;
      const last = j + 1 < count ? (groupFirstDigit[j + 1] as number) : valueCount;
      if (size + last - first > MAX_PAN_DIGITS) break;
      groupLengths |= 1 << (last - first);
      for (let k = first; k < last; k++) {
        const d = v[k] as number;
        const next = doubled + d;
        doubled = undoubled + (DOUBLED[d] as number);
        undoubled = next;
        if (size < PREFIX_DIGITS) first6 = first6 * 10 + d;
        size++;
      }
      if (size < MIN_PAN_DIGITS) continue;
      const to = groupTo[j] as number;
      if (delimited && to < text.length && isAlnum(text.charCodeAt(to))) continue;
      if (undoubled % 10 === 0 && cardNetworkByPrefix(first6, size, j > i ? groupLengths : 0) !== undefined) return true;
    }
  }
  return false;
}

/** Records the digit groups of the run text[from, to), with `digits` digits, and returns how many: the rare, long-run path. */
function recordGroups(text: string, from: number, to: number, digits: number): number {
  if (values.length < digits) values = new Uint8Array(Math.max(digits, values.length * 2));
  const v = values;
  let count = 0;
  let n = 0;
  for (let k = from; k < to; ) {
    const kind = kindAtFast(text, k);
    if (!isDigitKind(kind)) {
      k += width(kind);
      continue;
    }
    groupFrom[count] = k;
    groupFirstDigit[count] = n;
    v[n++] = kind & 15;
    k += width(kind);
    while (k < to) {
      const c = text.charCodeAt(k);
      if (c >= 48 && c <= 57) {
        v[n++] = c - 48;
        k++;
        continue;
      }
      const next = kindAt(text, k);
      if (!isDigitKind(next)) break;
      v[n++] = next & 15;
      k += width(next);
    }
    groupTo[count++] = k;
  }
  valueCount = n;
  return count;
}

// What runEnd counted besides the end: the run's digits. Module state keeps runEnd allocation-free.
let runDigits = 0;
// Whether the last containsPan met nine ASCII digits in a row or a character past ASCII: what a routing number
// needs (src/bank/bank-data.ts). Noted on the way, so the guard's bank rule skips values without it in the same pass.
let mayHoldRouting = false;
// Whether the last scan met a UTF-8 lead byte read as latin1 (PanScanOptions.headerBytes).
let sawUtf8Lead = false;

/**
 * The end of the run starting with the digit at `start`: digit groups joined by one to three separators a
 * reader sees, with any number of invisible ones among them.
 */
function runEnd(text: string, start: number): number {
  const length = text.length;
  let j = start + (text.charCodeAt(start) < 0xd800 ? 1 : width(kindAt(text, start)));
  let digits = 1;
  let stretch = 1; // ASCII digits in a row (mayHoldRouting)
  while (j < length) {
    const c = text.charCodeAt(j);
    if (c >= 48 && c <= 57) {
      j++;
      digits++;
      if (++stretch === 9) mayHoldRouting = true;
      continue;
    }
    stretch = 0;
    if (c >= 0x80) mayHoldRouting = true;
    let kind = kindAt(text, j);
    if (isDigitKind(kind)) {
      j += width(kind);
      digits++;
      continue;
    }
    let k = j;
    let seen = 0;
    for (;;) {
      const base = kind & 15;
      if (base === Kind.Separator ? ++seen > MAX_SEPARATOR : base !== Kind.Invisible) break;
      k += width(kind);
      if (k >= length) break;
      kind = kindAt(text, k);
    }
    if (k === j || k >= length || !isDigitKind(kind)) break;
    j = k + width(kind);
    digits++;
    stretch = 1;
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
    // ASCII first, in as many comparisons as an ASCII-only check: nearly every character of a request is.
    const c = text.charCodeAt(i);
    if (c > 57) {
      if (c < 0x80) {
        i++;
        continue;
      }
      mayHoldRouting = true;
      if (c >= 0xc2 && c <= 0xf4) sawUtf8Lead = true; // never inside a run: a letter (or × ÷) to the table
      if (!isDigitKind(kindAt(text, i))) {
        i++;
        continue;
      }
    } else if (c < 48) {
      i++;
      continue;
    }
    const end = runEnd(text, i);
    if (runDigits >= MIN_PAN_DIGITS && runHoldsPan(text, recordGroups(text, i, end, runDigits), delimited) && !insideUuid(text, i, end) && !insideHexId(text, i, end) && onRun(i, end)) return true;
    i = end;
  }
  return false;
}

/** True when any run in the text holds a card number. */
export function containsPan(text: string, options: PanScanOptions = {}): boolean {
  mayHoldRouting = false;
  if (text.length < MIN_PAN_DIGITS) return false;
  const delimited = options.delimited === true;
  sawUtf8Lead = false;
  if (scan(text, delimited, () => true)) return true;
  return options.headerBytes === true && sawUtf8Lead && scan(Buffer.from(text, 'latin1').toString('utf8'), delimited, () => true);
}

/**
 * Whether the text the last containsPan call passed (no card number in it) may hold a routing number: nine ASCII
 * digits in a row or a character past ASCII. False lets the bank rule skip the value without reading it again.
 */
export function lastScanMayHoldRouting(): boolean {
  return mayHoldRouting;
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
