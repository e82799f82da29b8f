import { containsPan, redactPansDeep } from '../card/pan';
import type { StoredResponse } from './types';

/**
 * Defence in depth for guarantee 1 (no card number in any Redis value): the answers we store should carry
 * masked numbers only, but if a full PAN ever slipped into one, it is replaced before it is kept for 24 h.
 */
export function scrubResponse(response: StoredResponse): StoredResponse {
  return { status: response.status, body: redactPansDeep(response.body), headers: redactPansDeep(response.headers) as Record<string, string> };
}

/**
 * The JSON kept for replays: scrubResponse's, without its deep copy when the text holds no card number at all.
 * Equivalent because JSON.stringify escapes no digit and, of the separators (src/card/characters.ts), only tab,
 * line feed, vertical tab, form feed and carriage return (`\t`, `\n`, `\u000b`, `\f`, `\r`; U+2028, U+2029 and
 * the zero-width ones are written as they are), and a lone surrogate, which is no digit: when the text holds an
 * escape, the check reads it with every escape decoded, so every run in a string or a number is seen whole. A
 * run the text alone forms (across a key and its value, or after a decoded quote) only sends the answer the slow
 * way. Every write stores one; the copy was ~3 % of the bytes a sale allocated.
 */
export function storedResponseJson(response: StoredResponse): string {
  const json = JSON.stringify({ status: response.status, body: response.body, headers: response.headers });
  return mayHoldPan(json) ? JSON.stringify(scrubResponse(response)) : json;
}

const ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(.))/g;
const SHORT_ESCAPES: Readonly<Record<string, string>> = { t: '\t', n: '\n', r: '\r', f: '\f', b: '\b' };
const decodeEscape = (_m: string, hex: string | undefined, c: string) => (hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : (SHORT_ESCAPES[c] ?? c));
const mayHoldPan = (json: string) => containsPan(json) || (json.includes('\\') && containsPan(json.replace(ESCAPE, decodeEscape)));
