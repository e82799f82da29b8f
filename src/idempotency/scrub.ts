import { isPan, redactPans } from '../card/pan';
import type { StoredResponse } from './types';

/**
 * Defence in depth for guarantee 1 (no card number in any Redis value): the answers we store should carry
 * masked numbers only, but if a full PAN ever slipped into one, it is replaced before it is kept for 24 h.
 */
export function scrubResponse(response: StoredResponse): StoredResponse {
  return { status: response.status, body: scrub(response.body, 0), headers: scrub(response.headers, 0) as Record<string, string> };
}

function scrub(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactPans(value);
  if (typeof value === 'number') return isPan(String(value)) ? '[card]' : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return '[too deep]';
  if (Array.isArray(value)) return value.map((v: unknown) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrub(v, depth + 1);
  return out;
}
