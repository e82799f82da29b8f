import type { Express } from 'express';
import { createApp } from './app';
import { createMemoryTokenCache, createReadThrough, createRedisTokenCache, tokenTtlFromConfig } from './cache';
import type { Config } from './config/types';
import { createGatewayClient, type GatewayClient } from './gateway/client';
import { createAuthenticator } from './http';
import { createAdminApp } from './http/admin-app';
import { createMemoryIdempotencyStore, createRedisIdempotencyStore, type IdempotencyStore } from './idempotency';
import { createMemoryScheduler, createRedisScheduler, endpointKeyOf, limiterSettings, type UpstreamScheduler } from './limiter';
import { traceBudget } from './limiter/traced';
import type { Logger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import { registerRedisUp } from './observability/redis-up';
import { activeTracing } from './observability/tracing';
import { closeRedis, connectRedis, waitForRedis, type RedisClient } from './redis/connect';
import { replicatedWrites } from './redis/replicas';
import { warnWithoutPersistence } from './redis/persistence';
import { createMemorySaleRecords, createRedisSaleRecords, type RecordChangeSink } from './sale-records';
import { createSaleEvents } from './sales/sale-events';
import { createAchEvents } from './webhooks/ach-events';
import { createCardUpdates, createGatewayWebhookIntake, createMemoryWebhookStore, createRedisWebhookStore, createWebhookConfirmation } from './webhooks';
import { createFollowUpService } from './sales/follow-up-service';
import { createBankSales } from './sales/bank-sale';
import { createCheckout } from './sales/checkout';
import { createBankMethods } from './wallet/bank-methods';
import { createNewCards } from './sales/new-card';
import { createWallet, createWalletStore } from './wallet';
import { createSaleActions } from './sales/sale-actions';
import { createSaleLookup } from './sales/sale-lookup';
import { createCardWrites } from './payment-methods/add-card-write';
import { createSaleService, type SaleService } from './sales/sale-service';
import type { RunningSandbox } from './sandbox';
import { clockDrivingSandbox, postWebhooksToTokengate, startEmbeddedSandbox } from './sandbox/embedded';
import { createTokenService, type TokenService } from './tokens/token-service';
import { createWriteProtocol, type WhenStoreReady } from './writes';
import { createMemoryPendingWrites, createReconcileMetrics, createReconciler, createRedisPendingWrites, type Reconciler } from './reconcile';
import { createFollowThrough, createWriteFinder } from './reconcile/find';
import { createHandSettler } from './reconcile/settle-by-hand';
import { createSettlements, type Settlements } from './settlements';
import { createCardService } from './payment-methods/add-card';
import { createCheckUndo } from './sales/check-on-card';
import { createCheckKeys } from './payment-methods/check-key';
import { canMintDevToken, mintDevToken } from './cli/token';
import type { DemoOptions } from './http/demo';
import { reconciledAnswer } from './http/reconciled-answers';
import { createSubscriptions, type Subscriptions } from './subscriptions';
import { createTestClock, createWallClock, observedClock } from './subscriptions/clock';
import { renderSale } from './http/render-sale';
import { createEventDelivery, createEventMetrics, createEventSigner, createMemoryEventLog, createRedisEventLog, EVENT_RETENTION_MS, type EventDelivery, type EventLog } from './events';

/**
 * Builds the whole service from one config: Redis (or in-memory stores in development), the gateway client
 * (or the embedded sandbox when no gateway URL is set outside production), the budget, the use cases, the
 * public and admin apps. main.ts serves it; integration tests build the same graph in-process.
 */
export interface Service {
  app: Express;
  admin: Express;
  config: Config;
  metrics: Metrics;
  gateway: GatewayClient;
  budget: UpstreamScheduler;
  tokens: TokenService;
  sales: SaleService;
  idempotency: IdempotencyStore;
  redis: RedisClient | undefined;
  /** Resolves unknown outcomes from the gateway's records (started with the service, stopped by close()). */
  reconciler: Reconciler;
  /** The payment event log (Redis Streams, or memory in development) and its delivery to EVENTS_WEBHOOK_URLS. */
  events: EventLog;
  delivery: EventDelivery;
  /** Subscriptions: the use cases, the renewals (started with the service, stopped by close()) and the clock. */
  subscriptions: Subscriptions;
  /** Settlements (issue 39): the kept ones, the one read per closed batch, and when reads happen (webhook, look). */
  settlements: Settlements;
  /** The embedded sandbox gateway (development and test without GATEWAY_BASE_URL). */
  sandbox: RunningSandbox | undefined;
  /**
   * Where the public port listens, once it does: the embedded sandbox then posts the gateway's webhooks there
   * when GATEWAY_WEBHOOK_SECRET is set (src/sandbox/embedded.ts). Returns that receiver's URL, if any.
   */
  listeningAt(url: string): string | undefined;
  draining(): boolean;
  startDraining(): void;
  /** Refuses calls still queued for the upstream budget (they answer 503 with Retry-After). */
  stopQueue(): Promise<void>;
  /** Releases everything: scheduler, gateway sockets, Redis, the embedded sandbox. */
  close(): Promise<void>;
}

export interface BuildOptions {
  /** A Redis connection to use instead of one from config (tests share theirs). Not closed by close(). */
  redis?: RedisClient;
  /** Force in-memory stores even when Redis is configured. */
  memory?: boolean;
}

/**
 * The /demo page's dev customer and tokens (development with the embedded sandbox only). The shopper's token
 * has no refunds:create (contract: "internal services; never in a frontend user's token"); the refund button
 * gets a back-office token of its own, 5 minutes, limited to refunding and reading that customer's sales
 * (bound by custkey rather than customers:any: the demo's back office needs no other customer).
 */
function demoOptions(config: Config, sandbox: RunningSandbox, clock: DemoOptions['clock']): DemoOptions {
  const customer = sandbox.fixtures.firstCustomer().key;
  const scope = 'sales:create sales:read sales:void payment_methods:read payment_methods:write subscriptions:read subscriptions:write';
  return {
    customer,
    clock,
    payJsOrigin: new URL(sandbox.url).origin,
    token: () => mintDevToken(config, { sub: 'demo-page', custkey: customer, scope }, 3600),
    backOfficeToken: () => mintDevToken(config, { sub: 'demo-backoffice', custkey: customer, scope: 'refunds:create sales:read' }, 300),
  };
}

export async function buildService(config: Config, logger: Logger, options: BuildOptions = {}): Promise<Service> {
  const metrics = createMetrics({ defaultMetrics: true });
  const ownsRedis = !options.redis && !options.memory;
  const redis = options.memory ? undefined : (options.redis ?? connectRedis(config.redis, logger));
  if (!redis && config.env === 'production') throw new Error('production needs Redis'); // loadConfig already refuses this
  if (redis) {
    if (await waitForRedis(redis, 5000)) await warnWithoutPersistence(redis, logger, config.env === 'production');
    else logger.warn('redis is not reachable at start; serving degraded until it is');
    if (config.redis.sentinels.length > 0 && config.redis.writeReplicas === 0) {
      logger.warn('REDIS_SENTINELS without REDIS_WRITE_REPLICAS: a failover can lose a write\'s claim and let a retry send it again; set REDIS_WRITE_REPLICAS=1 (docs/deploy.md)');
    }
  }

  let sandbox: RunningSandbox | undefined;
  let baseUrl = config.gateway.baseUrl;
  if (!baseUrl) {
    if (config.env === 'production') throw new Error('production needs GATEWAY_BASE_URL'); // loadConfig already refuses this
    sandbox = await startEmbeddedSandbox(config, logger);
    baseUrl = sandbox.baseUrl;
  }

  const endpointKey = endpointKeyOf(baseUrl);
  const { limits, classes, expectedReplicas } = limiterSettings(config);
  const schedulerOptions = { endpointKey, limits, classes, logger, registry: metrics.registry };
  // With tracing on, each wait for a slot is a span (limiter/traced.ts); off, the scheduler is used as it is.
  const budget = traceBudget(redis
    ? createRedisScheduler({ ...schedulerOptions, redis, keyPrefix: config.redis.keyPrefix, expectedReplicas })
    : createMemoryScheduler(schedulerOptions), activeTracing());

  const gateway = createGatewayClient({
    ...config.gateway,
    baseUrl,
    logger,
    // A re-sent read may be counted by the gateway: it takes a read slot like any other call.
    beforeRetry: () => budget.acquire('read'),
    onCall: (e) => {
      metrics.upstreamCalls.inc({ operation: e.op, outcome: e.outcome });
      metrics.upstreamDuration.observe({ operation: e.op }, e.durationMs / 1000);
    },
  });

  const cache = redis ? createRedisTokenCache({ redis, keyPrefix: config.redis.keyPrefix }) : createMemoryTokenCache();
  const store = createReadThrough({ cache, ttlOf: tokenTtlFromConfig(config.cache), lockTtlMs: config.cache.lockTtlMs, lockWaitMs: config.cache.lockWaitMs, logger });
  const idempotencySettings = { retentionMs: config.idempotency.retentionMs, inProgressRetryAfterSec: config.idempotency.inProgressRetryAfterSec };
  const idempotency = redis
    ? createRedisIdempotencyStore({ redis, keyPrefix: config.redis.keyPrefix, ...idempotencySettings })
    : createMemoryIdempotencyStore(idempotencySettings);

  const walletStore = createWalletStore(redis, config.redis.keyPrefix);
  const tokens = createTokenService({ gateway, budget, store, metrics, removed: walletStore.isRemoved });
  const sales = createSaleService({ gateway, budget, tokens, logger, metrics });
  const { authenticate } = createAuthenticator({ jwt: config.jwt, logger });

  let draining = false;
  // Changes tokengate hears of (webhooks, refreshes) become payment events; the renderer reads the records, so
  // it is wired once both exist (below).
  let onChange: RecordChangeSink = async () => undefined;
  // tokengate's clock (contract, "Subscriptions": `/test/clock` outside production), read by the renewals and the
  // settlements' sweep; the records stamp a batch's first sight with it synchronously, so its offset is followed.
  let clockOffsetMs = 0;
  const baseClock = config.env === 'production' ? createWallClock() : createTestClock({ redis, keyPrefix: config.redis.keyPrefix });
  // With the embedded sandbox, its clock follows (contract: `/test/clock` moves its ACH clock and batch closing).
  const clock = observedClock(sandbox ? clockDrivingSandbox(baseClock, sandbox) : baseClock, (offsetMs) => void (clockOffsetMs = offsetMs));
  const recordOptions = { onChange: (changes: Parameters<RecordChangeSink>[0]) => onChange(changes), now: () => Date.now() + clockOffsetMs };
  const records = redis ? createRedisSaleRecords({ redis, keyPrefix: config.redis.keyPrefix, ...recordOptions }) : createMemorySaleRecords(recordOptions);
  // Batches indexed before the due index existed join it, once per deployment (issue 39: swept for `missing`).
  void records.backfillDue().then((n) => n > 0 && logger.info('settlements: batches from before the due index joined it', { batches: n }), (err: unknown) => logger.warn('settlements: the due index backfill failed', { error: err instanceof Error ? err.name : 'error' }));
  // Unknown outcomes (contract guarantee 6): every write is tracked in the due set; every replica reconciles.
  const pending = redis ? createRedisPendingWrites({ redis, keyPrefix: config.redis.keyPrefix }) : createMemoryPendingWrites();
  const unknownRetryAfterSec = Math.max(1, Math.ceil(config.reconcile.intervalMs / 1000));
  // Payment events out (issue 27): one log shared by the replicas; every replica delivers, one event at a time.
  const events = redis ? createRedisEventLog({ redis, keyPrefix: config.redis.keyPrefix, retentionMs: EVENT_RETENTION_MS }) : createMemoryEventLog({ retentionMs: EVENT_RETENTION_MS });
  const destinations = config.events.webhookUrls;
  const delivery = createEventDelivery({
    log: events,
    signer: createEventSigner(config.events.webhookSecret?.reveal().split(/\s+/) ?? []),
    settings: { destinations, scheduleMs: config.events.retryScheduleMs, timeoutMs: config.events.timeoutMs, pollMs: config.events.pollMs },
    logger,
    metrics: createEventMetrics(metrics.registry, destinations.length > 0 ? { log: events, destinations } : undefined),
  });
  const appended = () => delivery.nudge();
  onChange = createSaleEvents({ records, events, appended });
  // An attempt's lease: its reads (a token, a sale's fields), its wait for a slot and its gateway call(s).
  const writeLeaseMs = config.limiter.readMaxWaitMs + config.limiter.saleMaxWaitMs + 2 * config.gateway.timeoutMs + 10_000;
  const settlements = createSettlements({
    redis, keyPrefix: config.redis.keyPrefix, config: config.settlements, gateway, budget, records, events, appended, registry: metrics.registry, logger,
    now: recordOptions.now, clockNow: () => clock.now(),
    // A write begun before the close is due at its lease end: any due before heard + lease may be in the batch.
    unresolved: (heardMs) => pending.unresolvedBefore(heardMs + writeLeaseMs),
  });
  // The gateway's webhooks in: the events applied (marks) and the sales told of by invoice, shared by replicas.
  const webhookStore = redis ? createRedisWebhookStore({ redis, keyPrefix: config.redis.keyPrefix }) : createMemoryWebhookStore();
  const whenStoreReady: WhenStoreReady | undefined = redis ? (listener) => (redis.on('ready', listener), () => void redis.off('ready', listener)) : undefined;
  const writes = createWriteProtocol({
    idempotency, logger, metrics, duplicateFolding: config.gateway.duplicateFolding, pending, unknownRetryAfterSec, events, appended,
    whenStoreReady,
    replicated: replicatedWrites(redis, config.redis.writeReplicas, config.redis.writeReplicasTimeoutMs),
  });
  const wallet = createWallet({
    store: walletStore, gateway, budget, tokens, writes, logger, config,
    // A deleted customer's subscriptions are canceled (issue 37): bound late, as subscriptions read the wallet.
    onCustomerRemoved: async (custkey) => void (await subscriptions.service.cancelAllOf(custkey)),
  });
  // A check form's key the gateway debited on the card path: voided at once, or by the reconciler (check-on-card.ts).
  // Sent with save_customer_paymethod (adding a card, a sale with save_payment_method), the bank method the gateway
  // saved from it is removed too (guarantee 10): one mechanism for both writes and the reconciler (check-key.ts).
  const checkKeys = createCheckKeys({
    gateway, budget, logger, unknownRetryAfterSec,
    checks: createCheckUndo({ gateway, budget, logger, unknownRetryAfterSec }),
    discard: (custkey, pmkey) => wallet.removals.discard(custkey, pmkey),
  });
  const cards = createCardService({
    gateway, budget, logger, unknownRetryAfterSec, checkKeys,
    verifyAmount: config.cards.verifyAmount,
    // Pay.js is served by the gateway's host (gateway-facts.md); PAYJS_URL overrides it.
    payJsUrl: config.cards.payJsUrl ?? new URL('/js/v2/pay.js', baseUrl).toString(),
  });
  // A renewal the reconciler resolves reaches its subscription at once (made below: subscriptions need the checkout).
  const resolvedRenewals: { resolved?: Subscriptions['resolved'] } = {};
  const reconcileMetrics = createReconcileMetrics(metrics.registry, { pending, deadlineMs: config.reconcile.deadlineMs });
  const reconciler = createReconciler({
    pending,
    store: idempotency,
    find: createWriteFinder({
      gateway, budget, records, cards, checkKeys, wallet, answer: reconciledAnswer, lookbackMarginMs: config.reconcile.lookbackMarginMs, maxProcessingMs: config.reconcile.maxProcessingMs,
      told: (invoice) => webhookStore.salesByInvoice(invoice),
    }),
    settings: config.reconcile,
    logger,
    metrics: reconcileMetrics,
    events,
    appended,
    resolved: async (write, context, response) => resolvedRenewals.resolved?.(write, context, response),
    followThrough: createFollowThrough({ gateway, budget, records, wallet: walletStore }),
  });
  reconciler.start();
  const lookup = createSaleLookup({
    gateway, budget, records, logger, customerRemoved: (custkey) => walletStore.isRemoved(custkey, ''),
    // With the gateway's webhooks on, tokengate hears of every change to a sale: its view needs no hourly read.
    settings: {
      freshMs: config.gateway.webhookSecret ? Math.max(config.view.saleFreshMs, config.view.saleFreshWithWebhooksMs) : config.view.saleFreshMs,
      unknownKeyTtlMs: config.view.unknownKeyTtlMs,
    },
  });
  // A change tokengate did not make is confirmed against the gateway in spare budget (guarantee 12).
  const confirmations = createWebhookConfirmation({ gateway, budget, records, fold: lookup.fold, logger, registry: metrics.registry, deadlineMs: config.reconcile.deadlineMs, store: webhookStore,
    // The reconciler's cadence: a confirmation left over is another look at the gateway in spare budget.
    retryMs: config.reconcile.retryMs, pollMs: config.reconcile.intervalMs,
  });
  if (config.gateway.webhookSecret) confirmations.start();
  // ach.* steps about sales not recorded yet are kept and applied when the record appears (guarantee 14).
  // A return reaches the subscription a sale paid (made below: the subscriptions need the checkout), then the
  // sale's settlement line (issue 39: changed and reported again, once per return).
  const late: { bankReturns?: Subscriptions['returns'] } = {};
  const achEvents = createAchEvents({
    records, wallet: walletStore, events, appended, store: webhookStore, keptPollMs: config.reconcile.intervalMs, logger,
    onReturned: async (sale, code) => {
      await (late.bankReturns?.returned(sale, code) ?? Promise.resolve(false));
      await settlements.bank.returned(sale);
    },
    // A debit that failed after it was accepted takes a return's path: its subscription (a hard return, no code:
    // the facts give a failure none), then its settlement line. A credit the shopper's bank sent back: its line.
    onFailed: async (sale) => {
      await (late.bankReturns?.failed(sale) ?? Promise.resolve(false));
      await settlements.bank.returned(sale);
    },
    onCreditReturned: (credit, _sale, back) => settlements.bank.creditReturned(credit, back),
  });
  if (config.gateway.webhookSecret) achEvents.start();
  const gatewayWebhooks = config.gateway.webhookSecret
    ? createGatewayWebhookIntake({
      secret: config.gateway.webhookSecret, records, store: webhookStore, logger, registry: metrics.registry, confirm: confirmations.confirm, onBatchClosed: settlements.look.closed, onBatchFailed: settlements.look.failed,
      cardUpdates: createCardUpdates({ wallet: walletStore, tokens, records, events, appended }),
      achEvents,
      ...(config.gateway.merchantKey ? { merchantKey: config.gateway.merchantKey } : {}),
    })
    : undefined;
  // A void waits for another follow-up of its sale at most as long as that one's gateway call can take.
  const followUps = createFollowUpService({ gateway, budget, records, logger, fold: lookup.fold, voidWaitMs: config.gateway.timeoutMs + 5_000, whenStoreReady });
  const newCards = createNewCards({ gateway, budget, store: walletStore, records, logger });
  // A bank payment under GATEWAY_CHECK_PAYMENT_KEY `refused` makes two calls (save, charge): within the lease's two.
  const bank = createBankSales({ gateway, budget, logger, checkPaymentKey: config.gateway.checkPaymentKey });
  const checkout = createCheckout({ sales, records, writes, guard: wallet.guard, newCards, bank, bankMethods: createBankMethods(walletStore, wallet.view), checkKeys, leaseMs: writeLeaseMs });
  const subscriptions = createSubscriptions({
    redis, config, checkout, view: wallet.view, walletStore, events, appended, logger, leaseMs: writeLeaseMs, registry: metrics.registry, clock,
    render: (outcome, facts) => renderSale(outcome, facts, 'renewal'),
    // A renewal the reconciler resolves after its sale's return or failure was applied (it found no link yet).
    saleReturn: async (sale) => {
      const bank = (await records.get(sale))?.fields?.bank;
      if (bank?.ach_status === 'E') return { failed: true };
      return bank?.ach_status === 'R' ? { ...(bank.return_code ? { code: bank.return_code } : {}) } : undefined;
    },
  });
  late.bankReturns = subscriptions.returns;
  resolvedRenewals.resolved = subscriptions.resolved;
  subscriptions.renewals.start();
  const actions = createSaleActions({ lookup, followUps, writes, leaseMs: writeLeaseMs });
  const cardWrites = createCardWrites({
    cards, writes, verifyAmount: config.cards.verifyAmount, keep: (custkey, method) => walletStore.putMethod(custkey, method.key, method, false),
    leaseMs: config.limiter.saleMaxWaitMs + config.limiter.readMaxWaitMs + 3 * config.gateway.timeoutMs + 10_000,
  });
  const app = createApp({
    config, logger, metrics, authenticate, gateway, budget, tokens, checkout, lookup, actions, cards, cardWrites, wallet, events, gatewayWebhooks, draining: () => draining,
    subscriptions: subscriptions.service,
    settlements: settlements.store,
    // The demo page hands its page a dev token: only where one can be minted (an HS secret, not RS/JWKS).
    ...(sandbox && config.env === 'development' && canMintDevToken(config) ? { demo: demoOptions(config, sandbox, clock) } : {}),
  });
  const admin = createAdminApp({
    metrics,
    logger,
    outcomes: { authenticate, settler: createHandSettler({ reconciler, pending, gateway, budget, records, answer: reconciledAnswer }) },
    clock,
    readiness: {
      draining: () => draining,
      degraded: () => (redis && redis.status !== 'ready' ? ['redis'] : []),
    },
  });
  if (redis) registerRedisUp(metrics.registry, redis);
  await delivery.start();

  let queueStopped = false;
  return {
    app, admin, config, metrics, gateway, budget, tokens, sales, idempotency, redis, sandbox, reconciler, events, delivery, subscriptions,
    settlements,
    listeningAt: (url) => (sandbox ? postWebhooksToTokengate(sandbox, config, url) : undefined),
    draining: () => draining,
    startDraining: () => {
      draining = true;
    },
    async stopQueue() {
      if (queueStopped) return;
      queueStopped = true;
      await budget.close();
    },
    async close() {
      draining = true;
      await Promise.all([reconciler.stop(), delivery.stop(), confirmations.stop(), subscriptions.renewals.stop(), settlements.look.stop()]);
      achEvents.stop();
      if (!queueStopped) await budget.close();
      queueStopped = true;
      gateway.close();
      await pending.flush();
      if (ownsRedis && redis) await closeRedis(redis);
      if (sandbox) await sandbox.close();
    },
  };
}
