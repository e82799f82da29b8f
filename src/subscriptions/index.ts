import type { Cluster, Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { createRenewalMetrics } from './metrics';
import type { Config } from '../config/types';
import type { EventSink } from '../events/types';
import type { Logger } from '../observability/logger';
import { RECURRING_CLASS, type Checkout, type RenderSale } from '../sales/checkout';
import type { WalletStore } from '../wallet/types';
import type { WalletView } from '../wallet/wallet-view';
import { createTestClock, createWallClock, type Clock } from './clock';
import { createMemorySubscriptionStore } from './memory-subscription-store';
import { createFirstCharges } from './first-charge';
import { createPaymentMethods } from './payment-methods';
import { createRedisSubscriptionStore } from './redis-subscription-store';
import { createRenewals, type Renewals } from './renewals';
import { createBankReturns, type BankReturns } from './returns';
import { createSubscriptionService, type SubscriptionService } from './service';
import type { SubscriptionStore } from './types';

export { subscriptionObject } from './objects';
export { SubscriptionInputError, SubscriptionNotActiveError } from './errors';
export type { Clock } from './clock';
export type { CreateInput, SubscriptionService, UpdateInput } from './service';
export type { Renewals } from './renewals';

/** Subscriptions (issue 37): the use cases, the renewals (their scheduler, run by every replica) and the clock they read. */
export interface Subscriptions {
  service: SubscriptionService;
  renewals: Renewals;
  clock: Clock;
  store: SubscriptionStore;
  /** A bank payment's return reaching its subscription (the ach.* intake calls it). */
  returns: BankReturns;
  /**
   * A write the reconciler found (ReconcilerDeps.resolved): a renewal's answer applied to its subscription
   * (Renewals.resolved), a first charge's approval creating its subscription (first-charge.ts), then, for a bank
   * debit, a return its sale already shows applied too (`saleReturn`): a return heard before the link existed
   * reached no subscription. Answers whether it was a renewal's or a first charge's.
   */
  resolved: Renewals['resolved'];
}

export interface SubscriptionsDeps {
  redis: Redis | Cluster | undefined;
  config: Pick<Config, 'env' | 'redis' | 'subscriptions' | 'idempotency'>;
  checkout: Checkout;
  view: Pick<WalletView, 'read' | 'withMethod'>;
  /** The card updater's flags (a closed account is not charged). */
  walletStore?: Pick<WalletStore, 'isClosed'>;
  /** How the renewals' sale answers are stored (the same rendering as `POST /v1/sales`). */
  render: RenderSale;
  events?: EventSink;
  appended?: () => void;
  logger: Logger;
  /** A renewal attempt's write lease (the checkout's). */
  leaseMs: number;
  registry?: Registry;
  /** tokengate's clock when the caller shares it (compose.ts: the settlements read it too); else made here. */
  clock?: Clock;
  /** The return a bank sale's own record shows (ach.returned applied to it: its code), or its failure (ach.failed), if any. */
  saleReturn?: (sale: string) => Promise<{ code?: string; failed?: boolean } | undefined>;
}

export function createSubscriptions(deps: SubscriptionsDeps): Subscriptions {
  const { redis, config, logger } = deps;
  const keyPrefix = config.redis.keyPrefix;
  // A first charge's terms outlive its write's answer: kept for the unknown outcome's retention, then the answer's.
  const firstChargeTtlMs = 2 * config.idempotency.retentionMs + deps.leaseMs;
  const store = redis ? createRedisSubscriptionStore({ redis, keyPrefix, firstChargeTtlMs }) : createMemorySubscriptionStore();
  // Production's clock is the wall clock: nothing can move it (contract: `/test/clock` answers 404 there).
  const clock = deps.clock ?? (config.env === 'production' ? createWallClock() : createTestClock({ redis, keyPrefix }));
  const methods = createPaymentMethods(deps.view, deps.walletStore);
  const common = { store, clock, checkout: deps.checkout, methods, events: deps.events, appended: deps.appended, logger };
  const firstCharges = createFirstCharges({ store, events: deps.events, appended: deps.appended, logger });
  const service = createSubscriptionService({ ...common, sendingLeaseMs: deps.leaseMs, firstCharges });
  const policy = { scheduleMs: config.subscriptions.retryScheduleMs, exhausted: config.subscriptions.exhaustedAction };
  const renewals = createRenewals({
    ...common,
    render: deps.render,
    metrics: deps.registry ? createRenewalMetrics(deps.registry, { store, clock }) : undefined,
    settings: {
      pollMs: config.subscriptions.pollMs,
      batch: 50,
      concurrency: 4,
      cls: RECURRING_CLASS,
      leaseMs: deps.leaseMs,
      policy,
    },
  });
  const returns = createBankReturns({ store, clock, events: deps.events, appended: deps.appended, logger, policy });
  const resolved: Renewals['resolved'] = async (write, context, response) => {
    if (!(await renewals.resolved(write, context, response)) && !(await firstCharges.resolved(write, context, response))) return false;
    // The link is written (above) before the sale's record is read: a return applied to the sale after this read
    // finds the link itself, one applied before is read here, so it reaches the subscription either way (once:
    // applyReturn leaves a return already in the history alone).
    const sale = context?.bank !== undefined && response.status === 201 ? (response.body as { key?: unknown } | null)?.key : undefined;
    const back = typeof sale === 'string' && sale !== '' ? await deps.saleReturn?.(sale) : undefined;
    if (back && typeof sale === 'string') await (back.failed ? returns.failed(sale) : returns.returned(sale, back.code));
    return true;
  };
  return { service, renewals, clock, store, returns, resolved };
}
