import type { GatewayClient } from '../gateway/client';
import { GatewayNotFoundError } from '../gateway/errors';
import type { CardRefToken, GatewayResult } from '../gateway/types';
import type { Metrics } from '../observability/metrics';
import type { AheadSlot, CallClass, RunOptions } from '../limiter';
import { NotFoundError } from '../access';

/** What the token use case needs from the cache (src/cache implements it for Redis and memory). */
export interface TokenStore {
  getOrLoad(key: string, load: () => Promise<CardRefToken>): Promise<{ value: CardRefToken; cacheStatus: 'hit' | 'miss' }>;
  /** The cached value or undefined; never loads, locks or throws. */
  peek(key: string): Promise<CardRefToken | undefined>;
  evict(key: string): Promise<void>;
}

/** What every use case needs from the upstream budget (src/limiter). */
export interface Budget {
  run<T>(cls: CallClass, call: () => Promise<GatewayResult<T>>, opts?: RunOptions): Promise<GatewayResult<T>>;
  /** A slot reserved beside other first Redis work, for run() to use (UpstreamScheduler.reserveAhead). */
  reserveAhead(cls: CallClass): AheadSlot;
}

export interface TokenLookup {
  token: CardRefToken;
  cacheStatus: 'hit' | 'miss';
}

export interface TokenService {
  /**
   * The payment method's card reference token: cached until its expiry, one upstream call for concurrent
   * misses. `peeked` is what an earlier peek() found, used instead of a second cache read when present.
   * `cls`: the budget class its load queues in; a token looked up for a sale is the sale's (issue 25, item 2),
   * so a storm of reads cannot hold a checkout back.
   */
  get(custkey: string, pmkey: string, peeked?: CardRefToken, cls?: CallClass): Promise<TokenLookup>;
  /** A look at the cache only (no upstream call, no lock); undefined on a miss or an unusable cache. */
  peek(custkey: string, pmkey: string): Promise<CardRefToken | undefined>;
  /** Drops a token the gateway no longer accepts. */
  evict(custkey: string, pmkey: string): Promise<void>;
}

export function tokenCacheKey(custkey: string, pmkey: string): string {
  return `token:${custkey}:${pmkey}`;
}

export interface TokenServiceDeps {
  gateway: GatewayClient;
  budget: Budget;
  store: TokenStore;
  metrics?: Metrics;
  /**
   * Whether the payment method (or its customer) was removed through tokengate (the wallet's tombstones,
   * guarantee 10): its token is never handed out, cached or not. Asked in the same tick as the cache read.
   */
  removed?: (custkey: string, pmkey: string) => Promise<boolean>;
}

export function createTokenService(deps: TokenServiceDeps): TokenService {
  const { gateway, budget, store, metrics } = deps;
  // A guard that cannot be read (Redis down) does not stop a read: sales are refused then anyway (503), and the
  // gateway no longer hands out the token of a method whose removal reached it.
  const removed = (custkey: string, pmkey: string) => deps.removed?.(custkey, pmkey).catch(() => false) ?? Promise.resolve(false);
  return {
    async get(custkey, pmkey, peeked, cls = 'read') {
      const gone = peeked ? Promise.resolve(false) : removed(custkey, pmkey);
      const { value, cacheStatus } = peeked
        ? { value: peeked, cacheStatus: 'hit' as const }
        : await store.getOrLoad(tokenCacheKey(custkey, pmkey), async () => {
            const result = await budget.run(cls, () => gateway.getCardRef(custkey, pmkey));
            return result.value;
          });
      // Removed before this read, or while it loaded (a removal's eviction may have come before our fill).
      if ((await gone) || (cacheStatus === 'miss' && (await removed(custkey, pmkey)))) {
        await store.evict(tokenCacheKey(custkey, pmkey));
        throw new NotFoundError();
      }
      metrics?.cacheLookups.inc({ result: cacheStatus });
      // Defence in depth against object-level access mistakes: a token must belong to the customer asked for
      // (a legacy numeric customer ID cannot be compared, and the gateway resolved it itself).
      if (value.custkey !== custkey && !/^\d+$/.test(custkey)) throw new GatewayNotFoundError('payment method belongs to another customer');
      return { token: value, cacheStatus };
    },
    peek(custkey, pmkey) {
      return store.peek(tokenCacheKey(custkey, pmkey));
    },
    evict(custkey, pmkey) {
      return store.evict(tokenCacheKey(custkey, pmkey));
    },
  };
}
