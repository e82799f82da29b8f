import type { CardRefToken } from '../gateway/types';

/**
 * The storage behind the token read-through: a value per key plus a short lock per key, so that one
 * replica loads while the others wait. Implemented on Redis (redis-token-cache.ts) and in memory
 * (memory-token-cache.ts) with identical semantics. Keys are the caller's (e.g. `<custkey>:<pmkey>`).
 */
export interface TokenCache {
  get(key: string): Promise<CardRefToken | undefined>;
  /** Stores only the token's own fields (never anything else that might ride along on the object). */
  set(key: string, value: CardRefToken, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** One step of the read-through: the cached value, or the lock taken for `owner`, or "someone else loads". */
  getOrLock(key: string, owner: string, lockTtlMs: number): Promise<LockProbe>;
  /** Caches `value` for `ttlMs` (not at all when undefined) and releases the lock if `owner` still holds it. */
  fillAndUnlock(key: string, owner: string, value: CardRefToken, ttlMs: number | undefined): Promise<void>;
  /** Releases the lock only if `owner` still holds it (compare-and-delete). */
  unlock(key: string, owner: string): Promise<void>;
  /** Renews the lock for another `lockTtlMs` if `owner` still holds it; false when it does not. */
  extendLock(key: string, owner: string, lockTtlMs: number): Promise<boolean>;
}

export type LockProbe =
  | { kind: 'hit'; value: CardRefToken }
  | { kind: 'locked' }
  /** Another owner holds the lock for about `lockTtlMs` more. */
  | { kind: 'busy'; lockTtlMs: number };

/** Thrown by the Redis cache when Redis fails or does not answer in time; the read-through catches it. */
export class CacheUnavailableError extends Error {
  readonly code = 'cache_unavailable';
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'CacheUnavailableError';
  }
}

const FIELDS = ['cardref', 'expires', 'ccnumlast4', 'cardtype', 'custkey', 'pmkey'] as const;

/** JSON of exactly the token's fields: guarantee 1 (no card data in Redis) does not depend on callers. */
export function serializeToken(t: CardRefToken): string {
  const out: Record<string, string> = { type: 'token' };
  for (const f of FIELDS) out[f] = String(t[f]);
  return JSON.stringify(out);
}

/** Parses what serializeToken wrote; undefined for anything else (treated as a miss). */
export function parseToken(raw: string): CardRefToken | undefined {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o.type !== 'token' || !FIELDS.every((f) => typeof o[f] === 'string')) return undefined;
  return {
    type: 'token',
    cardref: o.cardref as string,
    expires: o.expires as string,
    ccnumlast4: o.ccnumlast4 as string,
    cardtype: o.cardtype as string,
    custkey: o.custkey as string,
    pmkey: o.pmkey as string,
  };
}
