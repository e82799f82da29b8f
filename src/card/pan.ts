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
 * The end of the run that starts with the digit at `start`: a match of \d+(?:[ -]\d+)*, found by a character loop
 * (every request's headers, a JWT among them, are scanned, and a regex allocated a match per digit group of
 * every base64 id, about half of the card guard's cost).
 */
function runEnd(text: string, start: number): number {
  let j = start + 1;
  for (;;) {
    if (j < text.length && isDigit(text.charCodeAt(j))) j++;
    else if (j + 1 < text.length && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 45) && isDigit(text.charCodeAt(j + 1))) j += 2;
    else return j;
  }
}

/** Calls `onRun(start, end)` for each run of 13 characters or more, in order, until it returns true. */
function someLongRun(text: string, onRun: (start: number, end: number) => boolean): boolean {
  for (let i = 0; i < text.length; ) {
    if (!isDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const end = runEnd(text, i);
    if (end - i >= 13 && onRun(i, end)) return true;
    i = end;
  }
  return false;
}

/** True when any run in the text holds a Luhn-valid card number. */
export function containsPan(text: string, options: PanScanOptions = {}): boolean {
  if (text.length < 13) return false;
  return someLongRun(text, (start, end) => runHoldsPan(text, text.slice(start, end), start, options));
}

/** Replaces every run that holds a card number, whole, with the replacement (over-redacting a neighbour group is fine). */
export function redactPans(text: string, replacement = '[card]'): string {
  if (text.length < 13) return text;
  let out = '';
  let copied = 0;
  someLongRun(text, (start, end) => {
    if (runHoldsPan(text, text.slice(start, end), start, {})) {
      out += text.slice(copied, start) + replacement;
      copied = end;
    }
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
  if (typeof value === 'number') return isPan(String(value)) ? replacement : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return '[too deep]';
  if (Array.isArray(value)) return value.map((v: unknown) => redactPansDeep(v, replacement, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactPansDeep(v, replacement, depth + 1);
  return out;
}
