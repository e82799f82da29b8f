import { isDigitKind, Kind, kindAt } from '../card/characters';
import { isRoutingDigits } from './aba';

/**
 * The one bank-data detector (contract.md, 422 `bank_data_forbidden`; issue 38): the request guard
 * (src/http/card-guard.ts, in the same walk as the card rule) and the logger's redaction call it. Bank details
 * are typed into the gateway's Pay.js check form; a request that carries them is refused, never stored.
 *
 * Raw bank data is
 * - a field whose NAME names it (isBankLikeName: `routing`, `account_number`, `check`, `iban`, …), or
 * - a VALUE holding a routing number beside an account-like number (containsBankNumbers):
 *   - a routing number: a group of exactly 9 digits (any script, as the card rule reads them; zero-width
 *     characters inside are ignored) with a Federal Reserve routing symbol and the ABA checksum (aba.ts);
 *   - account-like: a group of 4 to 17 digits (NACHA's account field holds up to 17), not the year, day or
 *     integer part of a date, time or amount (joined by one `.`, `,`, `:`, `/` or `-` to a group of 1 or 2
 *     digits: `2026-11-27`, `1234.56`);
 *   - beside: the next digit group before or after the routing number, with between them either
 *     (a) one to three separators a reader sees (the card rule's: spaces, line breaks, dashes, dots, `_`, `/`,
 *         `+`) or `:`, `#`, `|`, among them a white space, and any of the MICR symbols ⑆ ⑇ ⑈ ⑉
 *         (`123456780 12345678`, `123456780 / 12345678`, `⑆123456780⑆ 12345678⑈`); no comma or semicolon: those
 *         join a list's items (as for card numbers, docs/card-data.md); digits joined by punctuation alone
 *         (`123456780-0001`) are one identifier, as merchants write order numbers; or
 *     (b) at most 40 characters holding bank words (`routing`, `acct`, `account no.`, …) and no other letters
 *         (`routing 123456780 account 12345678`, `ABA: 123456780, acct# 12345678`);
 *   - and neither number is part of an identifier: a token (what lies between white space) that holds a
 *     letter other than bank words (`ORD-123456780-1234`, a UUID, a JWT) holds ids, not bank details.
 * A routing number alone is never bank data: one random 9-digit id in 26 passes both checks (aba.ts).
 * docs/card-data.md ("Bank data") measures what this refuses.
 */

/** Words that may sit between or around the numbers of bank details (lowercase); BANK_WORDS must be among them in a gap. */
const BANK_WORDS = new Set([
  'routing', 'route', 'rtn', 'aba', 'transit', 'account', 'acct', 'acc', 'accnt', 'checking', 'savings', 'chk',
  'dda', 'bank', 'ach', 'micr',
]);
const FILLER_WORDS = new Set(['no', 'nr', 'nbr', 'num', 'number', 'a', 'c', 'my', 'and', 'is', 'the', 'of', 'id']);

/** Field names that only ever hold bank data, compared lowercased with every non-alphanumeric dropped. */
const BANK_NAMES = new Set([
  'routing', 'routingnumber', 'routingno', 'routingnum', 'routingtransitnumber', 'rtn', 'aba', 'abanumber',
  'abarouting', 'abaroutingnumber', 'transitnumber', 'bankrouting', 'bankroutingnumber',
  'account', 'accountnumber', 'accountno', 'accountnum', 'acct', 'acctnumber', 'acctno', 'acctnum', 'accno',
  'bankaccount', 'bankaccountnumber', 'checkingaccount', 'checkingaccountnumber', 'savingsaccount',
  'savingsaccountnumber', 'dda', 'ddanumber', 'bankdetails',
  'check', 'echeck', 'ach', 'achaccount', 'usbankaccount',
  'iban', 'bban', 'sortcode', 'bsb', 'micr', 'micrline',
  // the gateway's legacy form fields
  'umrouting', 'umaccount',
]);

export function normaliseBankName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/**
 * True when a field name names raw bank data. Names that only describe an account (`account_type`,
 * `account_last4`, `routing_last4`, `accountholder`, `authorization`) are not bank data: the contract's bank
 * payment method shows them.
 */
export function isBankLikeName(name: string): boolean {
  return isBankLikeNormalised(name.toLowerCase());
}

/** The same for a name already lowercased (the guard's walk has it without `-` and `_`): other separators dropped only when present. */
export function isBankLikeNormalised(lower: string): boolean {
  return BANK_NAMES.has(lower) || (/[^a-z0-9]/.test(lower) && BANK_NAMES.has(normaliseBankName(lower)));
}

export const MIN_BANK_TEXT = 9 + 1 + 4; // a routing number, one separator, the shortest account

// Digit groups of the text being scanned, reused across calls (nothing here re-enters the scanner).
const groupFrom: number[] = [];
const groupTo: number[] = [];
const groupLength: number[] = [];
const groupRouting: boolean[] = [];
const nine = new Uint8Array(9);

/** Records the text's digit groups and returns how many; -1 when none is a routing number (the common case). */
function recordGroups(text: string): number {
  let count = 0;
  let anyRouting = false;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c < 48 || (c > 57 && c < 0x80)) {
      i++;
      continue;
    }
    if (c >= 0x80) {
      const kind = kindAt(text, i);
      if (!isDigitKind(kind)) {
        i += kind >= Kind.Wide ? 2 : 1;
        continue;
      }
    }
    const from = i;
    let length = 0;
    let end = i;
    while (i < text.length) {
      const d = text.charCodeAt(i);
      const k = d >= 48 && d <= 57 ? d - 48 : d < 0x80 ? Kind.Other : kindAt(text, i);
      if (isDigitKind(k)) {
        if (length < 9) nine[length] = k & 15;
        length++;
        i += k >= Kind.Wide ? 2 : 1;
        end = i;
      } else if ((k & 15) === Kind.Invisible) i += k >= Kind.Wide ? 2 : 1;
      else break;
    }
    i = Math.max(end, i);
    const routing = length === 9 && isRoutingDigits(nine);
    anyRouting ||= routing;
    groupFrom[count] = from;
    groupTo[count] = end;
    groupLength[count] = length;
    groupRouting[count] = routing;
    count++;
  }
  return anyRouting ? count : -1;
}

const isSpace = (c: string) => /\s/u.test(c);
const MICR = new Set(['\u2446', '\u2447', '\u2448', '\u2449']);
const LETTERS = /\p{L}+/gu;

/** True when every letter word of the text is a bank or filler word (`needBank`: and one is a bank word). */
function onlyBankWords(text: string, needBank: boolean): boolean {
  let bank = false;
  for (const word of text.toLowerCase().match(LETTERS) ?? []) {
    if (BANK_WORDS.has(word)) bank = true;
    else if (!FILLER_WORDS.has(word)) return false;
  }
  return bank || !needBank;
}

/** True when the group lies in a token (between white space) whose letters, if any, are bank words only. */
function notInIdentifier(text: string, g: number): boolean {
  let from = groupFrom[g] as number;
  let to = groupTo[g] as number;
  while (from > 0 && !isSpace(text.charAt(from - 1))) from--;
  while (to < text.length && !isSpace(text.charAt(to))) to++;
  return onlyBankWords(text.slice(from, groupFrom[g]) + ' ' + text.slice(groupTo[g], to), false);
}

/** The part of a date, time or amount: joined by one `.`, `,`, `:`, `/` or `-` to a group of one or two digits. */
function partOfDateOrAmount(text: string, g: number, count: number): boolean {
  for (const n of [g - 1, g + 1]) {
    if (n < 0 || n >= count || (groupLength[n] as number) > 2) continue;
    const gap = n < g ? text.slice(groupTo[n], groupFrom[g]) : text.slice(groupTo[g], groupFrom[n]);
    if (gap.length === 1 && '.,:/-'.includes(gap)) return true;
  }
  return false;
}

/** What may stand between a routing number and the account beside it (see the file's comment). */
function besideGap(gap: string): boolean {
  if (/\p{L}/u.test(gap)) return gap.length <= 40 && onlyBankWords(gap, true);
  let seen = 0;
  let apart = false; // white space or a MICR symbol: digits joined by punctuation alone are one identifier
  for (let k = 0; k < gap.length; k++) {
    const ch = gap.charAt(k);
    if (MICR.has(ch)) {
      apart = true;
      continue;
    }
    const kind = kindAt(gap, k) & 15;
    if (kind === Kind.Invisible) continue;
    if (kind !== Kind.Separator && ch !== ':' && ch !== '#' && ch !== '|') return false;
    if (++seen > 3) return false;
    apart ||= isSpace(ch);
  }
  return apart;
}

/**
 * Nine ASCII digits in a row, or any character past ASCII (another script's digit, a zero-width character): what
 * a value needs before a routing number can be in it, and nearly no value (JWTs, ids, names, amounts) has. Two
 * native regex scans cost a fraction of the scanner's loop (one alternation costs more than both); the guard
 * has the card scan note it on its way instead (pan.ts, lastScanMayHoldRouting).
 */
const NINE_DIGITS = /[0-9]{9}/;
const PAST_ASCII = /[\u0080-\uffff]/;

/** Calls onPair(from, to) for each routing number beside an account-like number until it returns true. */
function scanPairs(text: string, onPair: (from: number, to: number) => boolean): boolean {
  if (text.length < MIN_BANK_TEXT || !(NINE_DIGITS.test(text) || PAST_ASCII.test(text))) return false;
  const count = recordGroups(text);
  for (let g = 0; g < count; g++) {
    if (!groupRouting[g] || !notInIdentifier(text, g)) continue;
    for (const a of [g - 1, g + 1]) {
      if (a < 0 || a >= count) continue;
      const length = groupLength[a] as number;
      if (length < 4 || length > 17 || partOfDateOrAmount(text, a, count) || !notInIdentifier(text, a)) continue;
      const gap = a < g ? text.slice(groupTo[a], groupFrom[g]) : text.slice(groupTo[g], groupFrom[a]);
      if (!besideGap(gap)) continue;
      if (onPair(Math.min(groupFrom[g] as number, groupFrom[a] as number), Math.max(groupTo[g] as number, groupTo[a] as number))) return true;
    }
  }
  return false;
}

/** True when the text holds a routing number beside an account-like number. */
export function containsBankNumbers(text: string): boolean {
  return scanPairs(text, () => true);
}

/** Replaces each routing number and the account beside it, and what lies between, with the replacement. */
export function redactBankNumbers(text: string, replacement = '[bank]'): string {
  const spans: [number, number][] = [];
  scanPairs(text, (from, to) => {
    spans.push([from, to]);
    return false;
  });
  if (spans.length === 0) return text;
  spans.sort((x, y) => x[0] - y[0]);
  let out = '';
  let copied = 0;
  for (const [from, to] of spans) {
    if (to <= copied) continue;
    out += text.slice(copied, Math.max(from, copied)) + replacement;
    copied = to;
  }
  return out + text.slice(copied);
}
