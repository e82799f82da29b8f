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
 * Equivalent because JSON escapes no digit and, of the separators (src/card/pan.ts), only tab, line feed and
 * carriage return, which the check reads back as one separator each: every run in a string or a number is then
 * seen whole; a run the text alone forms (across a key and its value, or an escaped backslash before a t)
 * only sends the answer the slow way. Every write stores one; the copy was ~3 % of the bytes a sale allocated.
 */
export function storedResponseJson(response: StoredResponse): string {
  const json = JSON.stringify({ status: response.status, body: response.body, headers: response.headers });
  return mayHoldPan(json) ? JSON.stringify(scrubResponse(response)) : json;
}

const ESCAPED_SEPARATOR = /\\[tnr]/g;
const mayHoldPan = (json: string) => containsPan(json) || (json.includes('\\') && containsPan(json.replace(ESCAPED_SEPARATOR, ' ')));
