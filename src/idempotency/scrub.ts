import { redactPansDeep } from '../card/pan';
import type { StoredResponse } from './types';

/**
 * Defence in depth for guarantee 1 (no card number in any Redis value): the answers we store should carry
 * masked numbers only, but if a full PAN ever slipped into one, it is replaced before it is kept for 24 h.
 */
export function scrubResponse(response: StoredResponse): StoredResponse {
  return { status: response.status, body: redactPansDeep(response.body), headers: redactPansDeep(response.headers) as Record<string, string> };
}

