/**
 * `createJwksKeySource({ uri, cooldownMs })`: public keys from a JWKS endpoint, for auth.ts.
 * jwks-rsa fetches and converts the keys; the cache and the cooldown live here because jwks-rsa caches per
 * `kid` (a second key of the same set would cost a second fetch) and rate-limits with a per-minute bucket,
 * not a cooldown. Rules:
 * - the whole set is cached for `cacheMaxAgeMs`; a known `kid` costs no fetch;
 * - an unknown `kid` (key rotation) refetches, at most once per `cooldownMs`, however many callers ask;
 *   concurrent misses share one fetch;
 * - a failed refetch keeps the previous set (an IdP outage does not log everyone out); a successful one
 *   replaces it, so a removed key stops verifying.
 */
import { JwksClient, type SigningKey } from 'jwks-rsa';

export class KeyUnavailable extends Error {
  constructor(readonly reason: 'jwks_cooldown' | 'unknown_kid' | 'kid_required' | 'jwks_fetch_failed') {
    super(reason);
    this.name = 'KeyUnavailable';
  }
}

export interface JwksKey {
  publicKey: string;
  /** The JWK's `alg` when it names one; a token must then use exactly that algorithm. */
  alg: string | undefined;
}

export interface JwksKeySourceOptions {
  uri: string;
  cooldownMs: number;
  cacheMaxAgeMs?: number;
  timeoutMs?: number;
  /** Replaces the HTTP fetch (tests, or a custom agent). */
  fetcher?: (uri: string) => Promise<{ keys: unknown[] }>;
  now?: () => number;
}

export type JwksKeySource = (kid: string | undefined) => Promise<JwksKey>;

export function createJwksKeySource(options: JwksKeySourceOptions): JwksKeySource {
  const now = options.now ?? Date.now;
  const maxAge = options.cacheMaxAgeMs ?? 10 * 60_000;
  const client = new JwksClient({
    jwksUri: options.uri,
    cache: false, // cached below, as a whole set
    rateLimit: false, // replaced by the cooldown below
    timeout: options.timeoutMs ?? 5000,
    // jwks-rsa types `keys` as any; we only hand it through.
    ...(options.fetcher ? { fetcher: options.fetcher as (uri: string) => Promise<{ keys: unknown }> } : {}),
  });

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
    let signing: SigningKey[];
    try {
      signing = await client.getSigningKeys();
    } catch {
      throw new KeyUnavailable('jwks_fetch_failed');
    }
    const next = new Map<string, JwksKey>();
    signing.forEach((k, i) => next.set(k.kid ?? `#${i}`, { publicKey: k.getPublicKey(), alg: k.alg || undefined }));
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
