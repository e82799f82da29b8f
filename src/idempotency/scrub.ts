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
 * Equivalent because JSON never escapes a digit or a separator (space - . _ /), so every run in a string or a
 * number appears whole in the text; a run the text alone forms (across a key and its value) only sends the
 * answer the slow way. Every write stores one; the copy was ~3 % of the bytes a sale allocated.
 */
export function storedResponseJson(response: StoredResponse): string {
  const json = JSON.stringify({ status: response.status, body: response.body, headers: response.headers });
  return containsPan(json) ? JSON.stringify(scrubResponse(response)) : json;
}
