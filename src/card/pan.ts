import { luhnValid } from './luhn';

/**
 * Card-number detection shared by the card-data guard and log redaction (contract: "a digit string of
 * 13 to 19 digits (spaces or dashes allowed) that passes Luhn").
 *
 * A run is digit groups joined by single spaces or dashes. Every sequence of WHOLE groups of 13–19 digits
 * inside a run is tried, so a card number next to one more group ("1 4000100011112224",
 * "4000-1000-1111-2224-9") is still found; an unbroken digit stretch is never cut, so
 * "40001000111122240000" is not a PAN. `delimited`: the chosen groups must not touch letters either
 * (header values hold hex and base64 ids whose digit stretches are not card numbers).
 */
const RUN = /\d+(?:[ -]\d+)*/g;
const ALNUM = /[A-Za-z0-9]/;

export interface PanScanOptions {
  delimited?: boolean;
}

export function isPan(candidate: string): boolean {
  const digits = candidate.replace(/[ -]/g, '');
  return digits.length >= 13 && digits.length <= 19 && /^\d+$/.test(digits) && luhnValid(digits);
}

function runHoldsPan(text: string, run: string, index: number, options: PanScanOptions): boolean {
  const groups = run.split(/[ -]/);
  const before = text[index - 1] ?? '';
  const after = text[index + run.length] ?? '';
  for (let i = 0; i < groups.length; i++) {
    let digits = '';
    for (let j = i; j < groups.length && digits.length + (groups[j] as string).length <= 19; j++) {
      digits += groups[j];
      if (digits.length < 13) continue;
      if (options.delimited && ((i === 0 && ALNUM.test(before)) || (j === groups.length - 1 && ALNUM.test(after)))) continue;
      if (luhnValid(digits)) return true;
    }
  }
  return false;
}

const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * True when any run in the text holds a Luhn-valid card number. The same runs as RUN finds, by a character
 * loop: every request's headers (a JWT among them) pass through here, and matchAll allocated a match per
 * digit group of every base64 id, about half of the card guard's cost.
 */
export function containsPan(text: string, options: PanScanOptions = {}): boolean {
  const n = text.length;
  if (n < 13) return false;
  let i = 0;
  while (i < n) {
    if (!isDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let j = i + 1;
    for (;;) {
      if (j < n && isDigit(text.charCodeAt(j))) j++;
      else if (j + 1 < n && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 45) && isDigit(text.charCodeAt(j + 1))) j += 2;
      else break;
    }
    if (j - i >= 13 && runHoldsPan(text, text.slice(i, j), i, options)) return true;
    i = j;
  }
  return false;
}

/** Replaces every run that holds a card number, whole, with the replacement (over-redacting a neighbour group is fine). */
export function redactPans(text: string, replacement = '[card]'): string {
  if (text.length < 13) return text;
  return text.replace(RUN, (run: string, index: number) => (run.length >= 13 && runHoldsPan(text, run, index, {}) ? replacement : run));
}

/**
 * A deep copy of a JSON-like value with every card number replaced: in strings (any run holding one) and in
 * numbers that are one. For answers about to leave the process or be stored, as a last line of defence.
 */
export function redactPansDeep(value: unknown, replacement = '[card]', depth = 0): unknown {
  if (typeof value === 'string') return redactPans(value, replacement);
  if (typeof value === 'number') return isPan(String(value)) ? replacement : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return '[too deep]';
  if (Array.isArray(value)) return value.map((v: unknown) => redactPansDeep(v, replacement, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactPansDeep(v, replacement, depth + 1);
  return out;
}
