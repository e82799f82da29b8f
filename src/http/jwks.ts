/**
 * `createJwksKeySource({ uri, cooldownMs })`: public keys from a JWKS endpoint, for auth.ts.
 * The fetch, the cache (10 min), the unknown-`kid` refetch with its cooldown, the shared in-flight fetch and
 * the key selection (kid, `alg`, `use: sig`, key type) are jose 5's `createRemoteJWKSet`. jose 5 rather than
 * jwks-rsa: jwks-rsa 3.2+ and jose 6 are ES modules that Jest's CommonJS runtime cannot load, and jwks-rsa
 * rate-limits with a per-minute bucket, not a cooldown. Verification stays with jsonwebtoken (auth.ts), so
 * every key kind goes through one verify call with the configured algorithm list.
 * What this file adds on top of jose, both because an IdP outage must not log everyone out nor be hammered:
 * - a failed fetch keeps serving the last good set (jose keeps it; `jwks()` returns it);
 * - after a failed fetch, no new attempt for `cooldownMs` (jose's cooldown counts from the last success).
 */
import { KeyObject } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, errors, type JSONWebKeySet } from 'jose';

export class KeyUnavailable extends Error {
  constructor(readonly reason: 'jwks_cooldown' | 'unknown_kid' | 'kid_required' | 'jwks_fetch_failed') {
    super(reason);
    this.name = 'KeyUnavailable';
  }
}

export interface JwksKeySourceOptions {
  uri: string;
  cooldownMs: number;
  cacheMaxAgeMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

/** The public key for a token's `alg` and `kid`; throws KeyUnavailable with the reason to log. */
export type JwksKeySource = (alg: string, kid: string | undefined) => Promise<KeyObject>;

type LocalSet = ReturnType<typeof createLocalJWKSet>;

/** jose's selection errors; anything else it throws is a failed fetch (timeout, non-200, not JSON, refused). */
function selectionFailure(err: unknown, coolingDown: boolean): KeyUnavailable | undefined {
  if (err instanceof errors.JWKSNoMatchingKey) return new KeyUnavailable(coolingDown ? 'jwks_cooldown' : 'unknown_kid');
  if (err instanceof errors.JWKSMultipleMatchingKeys) return new KeyUnavailable('kid_required');
  return undefined;
}

export function createJwksKeySource(options: JwksKeySourceOptions): JwksKeySource {
  const now = options.now ?? Date.now;
  const remote = createRemoteJWKSet(new URL(options.uri), {
    cooldownDuration: options.cooldownMs,
    cacheMaxAge: options.cacheMaxAgeMs ?? 10 * 60_000,
    timeoutDuration: options.timeoutMs ?? 5000,
  });
  let failedAt = -Infinity;
  let lastGood: { doc: JSONWebKeySet; set: LocalSet } | undefined;

  /** The newest set jose fetched successfully, as a local set (rebuilt only when jose replaced it). */
  const fromLastGood = async (header: { alg: string; kid?: string }, coolingDown: boolean): Promise<KeyObject> => {
    const doc = remote.jwks();
    if (!doc) throw new KeyUnavailable('jwks_fetch_failed');
    if (lastGood?.doc !== doc) lastGood = { doc, set: createLocalJWKSet(doc) };
    try {
      return asKeyObject(await lastGood.set(header));
    } catch (err) {
      throw selectionFailure(err, coolingDown) ?? new KeyUnavailable('jwks_fetch_failed');
    }
  };

  return async (alg, kid) => {
    const header = kid === undefined ? { alg } : { alg, kid };
    // A fetch failed within the cooldown: no new attempt; answer from the last good set.
    if (now() - failedAt < options.cooldownMs) return fromLastGood(header, true);
    const coolingDown = remote.coolingDown;
    try {
      return asKeyObject(await remote(header));
    } catch (err) {
      const selection = selectionFailure(err, coolingDown);
      if (selection) throw selection;
      failedAt = now();
      return fromLastGood(header, false);
    }
  };
}

function asKeyObject(key: unknown): KeyObject {
  // jose's Node build imports JWKs as KeyObjects; a symmetric JWK (Uint8Array) is never a public key here.
  if (key instanceof KeyObject && key.type === 'public') return key;
  throw new KeyUnavailable('unknown_kid');
}
