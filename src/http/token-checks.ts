/**
 * `checkToken(token, rules, nowSec)`: what a JWT must be before its key is looked up or its signature checked
 * (contract.md, "Callers and JWTs"), for auth.ts. jsonwebtoken lets a `crit` header, an unencoded payload
 * (`b64`) and a text or future `iat` through (issue 30, item 4); these rules refuse them. Every rule answers with
 * the reason it refuses, never by throwing: refused tokens come by the thousand, and each Error captures a stack
 * (~7 µs, a tenth of a whole refused request; issue 30, item 5). Checking claims before the signature refuses
 * nothing a signature would let through, and keeps an expired token with an unknown `kid` from refetching the
 * JWKS. jsonwebtoken still verifies every token that passes these rules and the signature (auth.ts): the rules
 * only ever add refusals to its own.
 */
import type { AuthContext } from './types';

export const ANY_CUSTOMER_SCOPE = 'customers:any';
// A kid is looked up, never used as a path or URL; still, only short plain tokens reach the key source.
const SAFE_KID = /^[A-Za-z0-9._-]{1,128}$/;
const CUSTKEY = /^[A-Za-z0-9_-]{1,64}$/;

export type RefusalReason =
  | 'malformed'
  | 'not_json'
  | 'alg_not_allowed'
  | 'bad_kid'
  | 'crit_unsupported'
  | 'b64_unsupported'
  | 'missing_exp'
  | 'bad_exp'
  | 'expired'
  | 'bad_nbf'
  | 'not_yet_valid'
  | 'bad_iat'
  | 'issued_in_future'
  | 'bad_issuer'
  | 'bad_audience'
  | 'bad_sub'
  | 'bad_scope'
  | 'bad_custkey';

export interface TokenRules {
  algorithms: readonly string[];
  issuer: string;
  audience: string;
  clockToleranceSec: number;
}

/** A token whose header and claims pass: what the signature check needs, and the claims for callerOf. */
export interface CheckedToken {
  alg: string;
  kid: string | undefined;
  signingInput: string;
  signature: string;
  exp: number;
  claims: Readonly<Record<string, unknown>>;
}

type Json = Record<string, unknown>;

/** One base64url segment as a JSON object; undefined for anything else, without a throw for most garbage. */
function jsonObject(segment: string): Json | undefined {
  const text = Buffer.from(segment, 'base64url').toString('utf8').trim();
  // Random bytes rarely start with `{` and end with `}`: they are refused here, before JSON.parse can throw.
  if (text.charCodeAt(0) !== 0x7b || text.charCodeAt(text.length - 1) !== 0x7d) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The JOSE header: a pinned algorithm, a safe kid, and no `crit` (RFC 7515 §4.1.11: a recipient must refuse
 * extensions it does not implement; this verifier implements none) nor an unencoded payload (`b64` other than
 * true, RFC 7797, which only exists with `crit`).
 */
function headerRefusal(header: Json, algorithms: readonly string[]): RefusalReason | undefined {
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) return 'alg_not_allowed';
  if (header.kid !== undefined && (typeof header.kid !== 'string' || !SAFE_KID.test(header.kid))) return 'bad_kid';
  if (header.crit !== undefined) return 'crit_unsupported';
  if (header.b64 !== undefined && header.b64 !== true) return 'b64_unsupported';
  return undefined;
}

/** The time claims, as jsonwebtoken compares them (whole seconds, the tolerance on each side), plus `iat`. */
function timeRefusal(claims: Json, toleranceSec: number, nowSec: number): RefusalReason | undefined {
  const { exp, nbf, iat } = claims;
  if (exp === undefined) return 'missing_exp';
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return 'bad_exp';
  if (nowSec >= exp + toleranceSec) return 'expired';
  if (nbf !== undefined) {
    if (typeof nbf !== 'number' || !Number.isFinite(nbf)) return 'bad_nbf';
    if (nbf > nowSec + toleranceSec) return 'not_yet_valid';
  }
  if (iat !== undefined) {
    if (typeof iat !== 'number' || !Number.isFinite(iat)) return 'bad_iat';
    // A token issued later than now (beyond the tolerance) comes from a wrong clock or a forger's.
    if (iat > nowSec + toleranceSec) return 'issued_in_future';
  }
  return undefined;
}

function audienceMatches(aud: unknown, audience: string): boolean {
  return aud === audience || (Array.isArray(aud) && aud.includes(audience));
}

/** Whether `s` holds a C0 control character or DEL. */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Whether `sub`, `scope` and `custkey` have their shapes; a reason when one is missing or wrong. */
function callerRefusal(claims: Json): RefusalReason | undefined {
  const { sub, custkey } = claims;
  // No control characters: tokengate's own callers (the renewals, src/subscriptions) carry one, so no token's
  // idempotency keys can meet theirs.
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > 256 || hasControl(sub)) return 'bad_sub';
  if (typeof (claims.scope ?? '') !== 'string') return 'bad_scope';
  if (custkey !== undefined && (typeof custkey !== 'string' || !CUSTKEY.test(custkey))) return 'bad_custkey';
  return undefined;
}

/** The caller a token that passed checkToken names; built only once its signature is proven. */
export function callerOf(checked: CheckedToken): AuthContext {
  const { sub, scope, custkey } = checked.claims as { sub: string; scope?: string | null; custkey?: string };
  const scopes: ReadonlySet<string> = new Set((scope ?? '').split(' ').filter((s) => s.length > 0));
  // A token bound to one customer never acts for all of them, whatever scopes it also carries.
  const auth: AuthContext = { sub, scopes, anyCustomer: custkey === undefined && scopes.has(ANY_CUSTOMER_SCOPE) };
  if (custkey !== undefined) auth.custkey = custkey;
  return Object.freeze(auth);
}

/** The token's parts when its header and claims pass every rule; else the first rule it breaks. */
export function checkToken(token: string, rules: TokenRules, nowSec: number): CheckedToken | RefusalReason {
  const first = token.indexOf('.');
  const last = token.lastIndexOf('.');
  if (first <= 0 || last === first || token.indexOf('.', first + 1) !== last) return 'malformed';
  const header = jsonObject(token.slice(0, first));
  if (!header) return 'malformed';
  const headerRefused = headerRefusal(header, rules.algorithms);
  if (headerRefused) return headerRefused;
  const claims = jsonObject(token.slice(first + 1, last));
  if (!claims) return 'not_json';
  const timeRefused = timeRefusal(claims, rules.clockToleranceSec, nowSec);
  if (timeRefused) return timeRefused;
  if (claims.iss !== rules.issuer) return 'bad_issuer';
  if (!audienceMatches(claims.aud, rules.audience)) return 'bad_audience';
  const callerRefused = callerRefusal(claims);
  if (callerRefused) return callerRefused;
  return {
    alg: header.alg as string,
    kid: header.kid as string | undefined,
    signingInput: token.slice(0, last),
    signature: token.slice(last + 1),
    exp: claims.exp as number,
    claims,
  };
}
