import type { Request, Response } from 'express';
import type { Freshness } from '../views/freshness';

/** The cache's name in `Cache-Status` (RFC 9211 §2: a token naming the cache that handled the request). */
const CACHE = 'tokengate';

/**
 * Whether the caller asks for the gateway's word rather than tokengate's view (guarantee 9): `Cache-Control:
 * no-cache` (or `max-age=0`) on the request, as HTTP caches read it (RFC 9111 §5.2.1). It costs one gateway
 * read in the caller's share of the read budget.
 */
export function wantsOrigin(req: Request): boolean {
  const value = req.get('Cache-Control');
  if (!value) return false;
  return value.split(',').some((d) => {
    const directive = d.trim().toLowerCase();
    return directive === 'no-cache' || directive === 'max-age=0';
  });
}

/**
 * `Cache-Status` (RFC 9211) and `Age` (RFC 9111 §5.1) of a view answer: `hit` with the seconds of freshness
 * left (`ttl`, negative once stale: served at once while it is refreshed in spare budget); `fwd=uri-miss`
 * (tokengate knew nothing: read from the gateway and kept), `fwd=request` (the caller asked for the gateway's
 * word), `fwd=bypass` (Redis unreachable: the gateway's word, nothing kept). `private`: answers are per caller.
 */
export function setFreshness(res: Response, f: Freshness): void {
  switch (f.kind) {
    case 'hit':
    case 'stale':
      res.set('Cache-Status', `${CACHE}; hit; ttl=${f.ttlSec}`).set('Age', String(f.ageSec));
      break;
    case 'miss':
      res.set('Cache-Status', `${CACHE}; fwd=uri-miss; stored`).set('Age', '0');
      break;
    case 'forced':
      res.set('Cache-Status', `${CACHE}; fwd=request; stored`).set('Age', '0');
      break;
    case 'bypass':
      res.set('Cache-Status', `${CACHE}; fwd=bypass`).set('Age', '0');
      break;
  }
  res.set('Cache-Control', 'private, no-cache');
}
