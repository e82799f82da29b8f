import { createHash, timingSafeEqual } from 'node:crypto';
import { ERRORS, type ErrorSpec } from './errors';

/**
 * The gateway's API-key authentication (spec §5; gateway-facts.md, Authentication):
 * `Authorization: Basic base64(apikey + ":" + apihash)`, apihash = `s2/<seed>/<sha256 hex(apikey + seed + pin)>`.
 * Nothing here logs or returns the header, the hash or the PIN.
 */

export interface ParsedAuth {
  apiKey: string;
  /** Undefined when the part after ":" is absent or not of the `s2/` form (PIN required). */
  hash: { seed: string; digest: string } | undefined;
}

export type AuthResult = { ok: true } | { ok: false; error: ErrorSpec };

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function apiHash(apiKey: string, seed: string, pin: string): string {
  return `s2/${seed}/${sha256Hex(apiKey + seed + pin)}`;
}

export function authorizationHeader(apiKey: string, pin: string, seed: string): string {
  return `Basic ${Buffer.from(`${apiKey}:${apiHash(apiKey, seed, pin)}`, 'utf8').toString('base64')}`;
}

/** Strict base64 (standard alphabet, optional padding); Buffer.from would silently skip junk. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/**
 * Parses the header; undefined = missing or malformed (answered 21002). The seed is everything between
 * `s2/` and the LAST `/`, so seeds with `/` (base64) work (gateway-facts.md).
 */
export function parseAuthorization(header: string | undefined): ParsedAuth | undefined {
  if (typeof header !== 'string' || header.length > 4096) return undefined;
  const m = /^Basic\s+(\S+)\s*$/i.exec(header);
  if (!m || !BASE64.test(m[1] as string)) return undefined;
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const apiKey = colon === -1 ? decoded : decoded.slice(0, colon);
  if (apiKey.length === 0) return undefined;
  const rest = colon === -1 ? '' : decoded.slice(colon + 1);
  if (!rest.startsWith('s2/')) return { apiKey, hash: undefined };
  const body = rest.slice(3);
  const last = body.lastIndexOf('/');
  if (last <= 0) return { apiKey, hash: { seed: '', digest: '' } };
  return { apiKey, hash: { seed: body.slice(0, last), digest: body.slice(last + 1).toLowerCase() } };
}

/** Checks a request's header against the one merchant key and PIN of the sandbox. */
export function checkAuthorization(header: string | undefined, apiKey: string, pin: string): AuthResult {
  const parsed = parseAuthorization(header);
  if (!parsed) return { ok: false, error: ERRORS.authFailed };
  if (parsed.apiKey !== apiKey) return { ok: false, error: ERRORS.sourceKeyNotFound };
  if (!parsed.hash) return { ok: false, error: ERRORS.pinRequired };
  const { seed, digest } = parsed.hash;
  if (seed.length === 0 || !/^[0-9a-f]{64}$/.test(digest)) return { ok: false, error: ERRORS.authFailed };
  const expected = Buffer.from(sha256Hex(apiKey + seed + pin), 'hex');
  // Constant time, so response timing reveals nothing about how much of the hash matched.
  return timingSafeEqual(expected, Buffer.from(digest, 'hex')) ? { ok: true } : { ok: false, error: ERRORS.authFailed };
}
