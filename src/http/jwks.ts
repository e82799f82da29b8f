/**
 * `createJwksKeySource({ uri, cooldownMs })`: public keys from a JWKS endpoint, for auth.ts.
 * Not jwks-rsa: it requires `jose` 6, an ES module that Jest's CommonJS runtime
 * cannot load, so importing it would break every test that imports the app. Node's own
 * `createPublicKey({ format: 'jwk' })` does the conversion, and the cache and cooldown are ours anyway
 * (jwks-rsa caches per `kid` and rate-limits with a per-minute bucket, not a cooldown). Rules:
 * - the whole set is cached for `cacheMaxAgeMs`; a known `kid` costs no fetch;
 * - an unknown `kid` (key rotation) refetches, at most once per `cooldownMs`, however many callers ask;
 *   concurrent misses share one fetch;
 * - a failed refetch keeps the previous set (an IdP outage does not log everyone out); a successful one
 *   replaces it, so a removed key stops verifying.
 */
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';

export class KeyUnavailable extends Error {
  constructor(readonly reason: 'jwks_cooldown' | 'unknown_kid' | 'kid_required' | 'jwks_fetch_failed') {
    super(reason);
    this.name = 'KeyUnavailable';
  }
}

export interface JwksKey {
  publicKey: KeyObject;
  /** The JWK's `alg` when it names one; a token must then use exactly that algorithm. */
  alg: string | undefined;
}

export interface JwksKeySourceOptions {
  uri: string;
  cooldownMs: number;
  cacheMaxAgeMs?: number;
  timeoutMs?: number;
  /** Replaces the HTTP fetch (tests, or a custom agent). */
  fetcher?: JwksFetcher;
  now?: () => number;
}

export type JwksFetcher = (uri: string) => Promise<{ keys: unknown }>;

const MAX_JWKS_BYTES = 256 * 1024;

/** GET the JWKS document: no redirects, a timeout, a size cap. */
export function httpJwksFetcher(timeoutMs: number): JwksFetcher {
  return async (uri) => {
    const res = await fetch(uri, { redirect: 'error', signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`JWKS endpoint answered ${res.status}`);
    const text = await res.text();
    if (text.length > MAX_JWKS_BYTES) throw new Error('JWKS document too large');
    return JSON.parse(text) as { keys: unknown };
  };
}

/** Signing keys of a JWKS document by kid (keys without a kid get a name no token kid can match). */
export function parseJwks(doc: { keys: unknown }): Map<string, JwksKey> {
  const out = new Map<string, JwksKey>();
  if (!Array.isArray(doc.keys)) return out;
  doc.keys.forEach((raw: unknown, i) => {
    if (raw === null || typeof raw !== 'object') return;
    const jwk = raw as JsonWebKey & { kid?: unknown; alg?: unknown; use?: unknown };
    if (jwk.use !== undefined && jwk.use !== 'sig') return;
    if (!['RSA', 'EC', 'OKP'].includes(String(jwk.kty)) || 'd' in jwk) return; // public signing keys only
    try {
      const publicKey = createPublicKey({ key: jwk, format: 'jwk' });
      out.set(typeof jwk.kid === 'string' && jwk.kid ? jwk.kid : `#${i}`, { publicKey, alg: typeof jwk.alg === 'string' && jwk.alg ? jwk.alg : undefined });
    } catch {
      // an unusable key is skipped, like jwks-rsa does
    }
  });
  return out;
}

export type JwksKeySource = (kid: string | undefined) => Promise<JwksKey>;

export function createJwksKeySource(options: JwksKeySourceOptions): JwksKeySource {
  const now = options.now ?? Date.now;
  const maxAge = options.cacheMaxAgeMs ?? 10 * 60_000;
  const fetcher = options.fetcher ?? httpJwksFetcher(options.timeoutMs ?? 5000);

  let keys = new Map<string, JwksKey>();
  let fetchedAt = -Infinity;
  let lastAttempt = -Infinity;
  let inflight: Promise<void> | undefined;

  const pick = (kid: string | undefined): JwksKey | undefined => {
    if (kid !== undefined) return keys.get(kid);
    // No kid: only unambiguous when the set holds one key (the jwks-rsa rule).
    return keys.size === 1 ? [...keys.values()][0] : undefined;
  };

  const refresh = async (): Promise<void> => {
    let next: Map<string, JwksKey>;
    try {
      next = parseJwks(await fetcher(options.uri));
    } catch {
      throw new KeyUnavailable('jwks_fetch_failed');
    }
    if (next.size === 0) throw new KeyUnavailable('jwks_fetch_failed');
    keys = next;
    fetchedAt = now();
  };

  return async (kid) => {
    const fresh = now() - fetchedAt < maxAge;
    const cached = pick(kid);
    if (cached && fresh) return cached;
    if (!inflight) {
      if (now() - lastAttempt < options.cooldownMs) {
        if (cached) return cached; // stale but still the newest set we could get
        throw new KeyUnavailable(kid === undefined && keys.size > 1 ? 'kid_required' : 'jwks_cooldown');
      }
      lastAttempt = now();
      inflight = refresh().finally(() => {
        inflight = undefined;
      });
    }
    try {
      await inflight;
    } catch (err) {
      if (cached) return cached;
      throw err;
    }
    const found = pick(kid);
    if (!found) throw new KeyUnavailable(kid === undefined && keys.size > 1 ? 'kid_required' : 'unknown_kid');
    return found;
  };
}
