/**
 * How fresh an answer from tokengate's own view is (guarantee 9), the same for every view (sales, customers,
 * payment methods); the HTTP edge renders it as RFC 9211 `Cache-Status` and `Age` (src/http/freshness.ts).
 *   hit     from the view, within its freshness bound (`ttlSec` left);
 *   stale   from the view past its bound (`ttlSec` negative): answered at once, refreshed in spare budget;
 *   miss    tokengate knew nothing of it: read from the gateway, and kept from now on;
 *   forced  the caller asked for the gateway's word (`Cache-Control: no-cache`);
 *   bypass  Redis is unreachable: the gateway's word, nothing kept.
 */
export type Freshness =
  | { kind: 'hit' | 'stale'; ageSec: number; ttlSec: number }
  | { kind: 'miss' | 'forced' | 'bypass' };

/** A view entry's freshness from when it last matched the gateway (`seenMs`) and its bound. */
export function freshnessOf(seenMs: number, freshMs: number, nowMs: number): Extract<Freshness, { kind: 'hit' | 'stale' }> {
  const ageMs = Math.max(0, nowMs - seenMs);
  return { kind: ageMs > freshMs ? 'stale' : 'hit', ageSec: Math.floor(ageMs / 1000), ttlSec: Math.floor((freshMs - ageMs) / 1000) };
}

/** The budget class a stale view is refreshed in: spare budget only, never in front of a page or a sale. */
export const REFRESH_CLASS = 'background' as const;
