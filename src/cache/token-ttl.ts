/**
 * How long a card reference token may sit in the cache (guarantee 4 of the contract).
 *
 * `expires` is the LAST day the token is valid (gateway-api-v2.md, CardRefToken), but we only cache up to
 * the START of that day (UTC) less `marginMs`: on its expires day the token may already be refused in some
 * time zone or by clock skew at the gateway, so from then on every read goes upstream, which also picks up
 * the refreshed token the gateway issues. Conservative on purpose: a cache miss costs one upstream read, a
 * stale token costs a failed sale.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Milliseconds since the epoch of 00:00 UTC on `YYYY-MM-DD`, or undefined when it is not a real calendar date. */
export function startOfUtcDay(date: string): number | undefined {
  const m = DATE.exec(date);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  // Date.UTC rolls 2025-02-30 over to March and maps years < 100 to 19xx: a round trip rejects both.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return ms;
}

/**
 * TTL in ms for a token expiring on `expires`, capped at `maxTtlMs`; `undefined` means "do not cache"
 * (unparseable date, already inside the margin, or expired).
 */
export function tokenTtlMs(expires: string, nowMs: number, marginMs: number, maxTtlMs: number): number | undefined {
  const start = startOfUtcDay(expires);
  if (start === undefined) return undefined;
  const ttl = Math.floor(Math.min(start - marginMs - nowMs, maxTtlMs));
  return ttl > 0 ? ttl : undefined;
}

/** `ttlOf` for the read-through from the `cache.*` config keys; `now` is injectable for tests. */
export function tokenTtlFromConfig(
  cfg: { tokenExpiryMarginMs: number; tokenMaxTtlMs: number },
  now: () => number = Date.now,
): (token: { expires: string }) => number | undefined {
  return (token) => tokenTtlMs(token.expires, now(), cfg.tokenExpiryMarginMs, cfg.tokenMaxTtlMs);
}
