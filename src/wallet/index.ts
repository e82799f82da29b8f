import type { Cluster, Redis } from 'ioredis';
import type { Config } from '../config/types';
import type { GatewayClient } from '../gateway/client';
import type { Logger } from '../observability/logger';
import type { Budget, TokenService } from '../tokens/token-service';
import type { WriteProtocol } from '../writes';
import { createWalletCustomers, type WalletCustomers } from './customers';
import { createMemoryWalletStore } from './memory-wallet-store';
import { createWalletMethods, type WalletMethods } from './methods';
import { createRedisWalletStore } from './redis-wallet-store';
import { createWalletRemovals, type WalletRemovals } from './removals';
import { createSaleGuard, type SaleGuard } from './sale-guard';
import { WALLET_TTL_MS, type WalletStore } from './types';
import { createWalletView, type WalletView } from './wallet-view';

/** The shopper's wallet (issue 26): customers, payment methods, their view, and the removal guard. README.md beside this file. */
export interface Wallet {
  store: WalletStore;
  view: WalletView;
  customers: WalletCustomers;
  methods: WalletMethods;
  removals: WalletRemovals;
  /** The sale's side of guarantee 10 (src/sales/checkout.ts). */
  guard: SaleGuard;
}

export function createWalletStore(redis: Redis | Cluster | undefined, keyPrefix: string): WalletStore {
  return redis ? createRedisWalletStore({ redis, keyPrefix }) : createMemoryWalletStore();
}

export interface WalletDeps {
  store: WalletStore;
  gateway: GatewayClient;
  budget: Budget;
  tokens: Pick<TokenService, 'evict'>;
  writes: WriteProtocol;
  logger: Logger;
  config: Pick<Config, 'gateway' | 'limiter' | 'view' | 'cache'>;
  /** Called once a customer's removal reached the gateway (its subscriptions end); idempotent. */
  onCustomerRemoved?: (custkey: string) => Promise<void>;
}

export function createWallet(deps: WalletDeps): Wallet {
  const { store, gateway, budget, tokens, writes, logger, config } = deps;
  // A sale attempt holds a removal at most this long; before sending without a re-check it must have the connect
  // timeout (a new connection's wait before the request leaves) and a second to spare.
  const guardLeaseMs = config.gateway.connectTimeoutMs + 5_000;
  const guard = createSaleGuard(store, { leaseMs: guardLeaseMs, sendMarginMs: config.gateway.connectTimeoutMs + 1_000 }, logger);
  const view = createWalletView({ gateway, budget, store, logger, settings: { freshMs: config.view.walletFreshMs } });
  // A wallet write's attempt: its wait for a (capture-class) slot and the gateway's call, with a margin.
  const writeLeaseMs = config.limiter.saleMaxWaitMs + config.gateway.timeoutMs + 10_000;
  const removals = createWalletRemovals({
    gateway, budget, store, view, tokens, writes, logger, onCustomerRemoved: deps.onCustomerRemoved,
    settings: { leaseMs: writeLeaseMs + guardLeaseMs, guardLeaseMs, tombstoneTtlMs: Math.max(WALLET_TTL_MS, 2 * config.cache.tokenMaxTtlMs) },
  });
  const customers = createWalletCustomers({ gateway, budget, store, view, writes, logger, settings: { leaseMs: writeLeaseMs + 5_000 } });
  const methods = createWalletMethods({ gateway, budget, store, view, logger });
  return { store, view, customers, methods, removals, guard };
}
