import type { Secret } from './secret';

export type NodeEnv = 'development' | 'test' | 'production';
export type CardRefField = 'UMCardRef' | 'creditcard.number';
export type RateMode = 'fixed' | 'sliding';

export interface GatewayConfig {
  /** Unset in development/test: the embedded sandbox is used. */
  baseUrl: string | undefined;
  failoverHosts: readonly string[];
  allowInsecure: boolean;
  apiKey: Secret;
  apiPin: Secret;
  timeoutMs: number;
  connectTimeoutMs: number;
  maxResponseBytes: number;
  cardRefField: CardRefField;
  /** GATEWAY_CHECK_PAYMENT_KEY: `check:sale` takes a check form's payment key, or a bank method is saved from it first. */
  checkPaymentKey: 'accepted' | 'refused';
  ratePerMinute: number;
  ratePerDay: number;
  rateWindowMs: number;
  rateDayWindowMs: number;
  rateMarginMs: number;
  duplicateFolding: boolean;
  /** GATEWAY_WEBHOOK_SECRET: the key of the gateway's webhook signatures; unset, POST /v1/webhooks/gateway is 404. */
  webhookSecret: Secret | undefined;
  /** GATEWAY_MERCHANT_KEY: the merchant whose webhooks apply; unset, every signed one does (production warns). */
  merchantKey: string | undefined;
}

/** Subscriptions (contract, "Subscriptions"; issue 37). */
export interface SubscriptionsConfig {
  /** SUBSCRIPTION_RETRY_SCHEDULE_MS: a soft decline's retries, each counted from the period's due date. */
  retryScheduleMs: readonly number[];
  /** SUBSCRIPTION_EXHAUSTED_ACTION: `unpaid` (no charge until the card changes) or `cancel`. */
  exhaustedAction: 'unpaid' | 'cancel';
  /** SUBSCRIPTION_POLL_MS (beyond the contract): how often each replica looks for renewals due. */
  pollMs: number;
}

/** Payment events out (contract, "Payment events (out)"). */
export interface EventsConfig {
  /** EVENTS_WEBHOOK_URLS: the internal services that receive every event. */
  webhookUrls: readonly string[];
  /** EVENTS_WEBHOOK_SECRET: `whsec_…` secrets separated by spaces, each signing (required with URLs). */
  webhookSecret: Secret | undefined;
  /** EVENTS_RETRY_SCHEDULE_MS: the delays between delivery attempts of one event. */
  retryScheduleMs: readonly number[];
  /** EVENTS_TIMEOUT_MS (beyond the contract, which says 15 s): an attempt with no answer by then failed. */
  timeoutMs: number;
  /** EVENTS_POLL_MS (beyond the contract): how often each replica looks for events to deliver. */
  pollMs: number;
}

export interface JwtConfig {
  issuer: string;
  audience: string;
  algorithms: readonly string[];
  secret: Secret | undefined;
  publicKey: string | undefined;
  jwksUrl: string | undefined;
  clockToleranceSec: number;
  jwksCooldownMs: number;
}

/** Exactly one topology: `url` (single node), `clusterNodes` (Redis Cluster) or `sentinels` + `sentinelName`. */
export interface RedisConfig {
  url: Secret | undefined;
  /** Seed nodes, host:port; ioredis discovers the rest. */
  clusterNodes: readonly string[];
  /** Sentinels, host:port; they name the current master of `sentinelName`. */
  sentinels: readonly string[];
  sentinelName: string | undefined;
  /** AUTH for Cluster nodes or the Sentinel-managed master (a single node carries it in its URL). */
  password: Secret | undefined;
  /** TLS for Cluster nodes or the Sentinel-managed master (a single node says `rediss://`). */
  tls: boolean;
  keyPrefix: string;
  /** Replicas that must acknowledge a write's claim and its answer (Redis WAIT); 0: none waited for. */
  writeReplicas: number;
  writeReplicasTimeoutMs: number;
}

export interface LimiterConfig {
  saleMaxWaitMs: number;
  readMaxWaitMs: number;
  /** Slots of each window that reads may never take, so a read flood cannot starve sales. */
  saleReservedSlots: number;
  /** Replicas expected to share the budget; the in-memory fallback takes limit ÷ this. */
  expectedReplicas: number;
  /** Day pacing: reads hold at most this share of what the other classes leave of the day (0.5). */
  readDayShare: number;
  /** Background work: at most this share of what everything else leaves of the day (0.25). */
  backgroundDayShare: number;
  /** One caller (JWT sub): at most this share of the reads' slots per window (0.25). */
  callerShare: number;
  /** One caller: at most this share of the reads' day (readDayShare × the day budget) (0.1). */
  callerDayShare: number;
}

export interface CacheConfig {
  /** Taken off the token's expiry (start of its `expires` day, UTC). */
  tokenExpiryMarginMs: number;
  tokenMaxTtlMs: number;
  lockTtlMs: number;
  lockWaitMs: number;
}

export interface IdempotencyConfig {
  retentionMs: number;
  inProgressRetryAfterSec: number;
}

/** The reconciler of unknown outcomes (issue 12, contract guarantee 6). */
export interface ReconcileConfig {
  /** RECONCILE_DEADLINE_MS: the longest an unknown outcome may stay unknown (alerting past it); at least absenceProofMs. */
  deadlineMs: number;
  /** The gateway's longest processing time (slow processors: 120 s): a write absent after it was never made. */
  maxProcessingMs: number;
  /** How often each replica looks for due work. */
  intervalMs: number;
  /** How soon a look that failed (budget, gateway error) is tried again. */
  retryMs: number;
  /** How far before an attempt's start a customer's list is paged: the gateway's `created` has no zone. */
  lookbackMarginMs: number;
}

/** Settlements (issue 39): closed batches read once and matched with tokengate's records. */
export interface SettlementsConfig {
  /** How often each replica looks at `GET /batches` for batches closed since the last one kept (0: never). */
  lookMs: number;
  /** A sale in no closed batch this long after its batch was first seen is `missing`. */
  missingAfterMs: number;
  /** One sweep for `missing` per this long (any replica, across restarts). */
  sweepEveryMs: number;
  /** A bank payment's settlement line stays open (it may still be returned) this long after its batch's read. */
  bankReturnWindowMs: number;
}

export interface HttpConfig {
  bodyLimitBytes: number;
  /** CORS_ORIGINS: browser origins allowed to call the API; https: in production unless loopback (issue 31). */
  corsOrigins: readonly string[];
  shutdownGraceMs: number;
}

export interface SandboxConfig {
  apiKey: string;
  apiPin: Secret;
  /** Loopback by default for a developer's machine; 0.0.0.0 in a pod. */
  host: string;
  port: number;
  ratePerMinute: number;
  ratePerDay: number;
  rateWindowMs: number;
  rateDayWindowMs: number;
  rateMode: RateMode;
  latencyMs: number;
  jitterMs: number;
  duplicateFolding: boolean;
  /** `spec` or `wire`: see src/sandbox/README.md, Wire format. */
  wireFormat: 'spec' | 'wire';
  /** Close (settle) the open batch after this long; 0 = only on POST batches/current/close. */
  batchCloseIntervalMs: number;
  /** "HH:MM" (UTC) of the sandbox's daily close; '' = none. */
  batchCloseAt?: string;
  /** A sale with a removed payment method's cardref: `refused` (error 602) or `honoured` (still charges). */
  deletedCardref: 'refused' | 'honoured';
  /** A look-up's `refunds` list: `none` (as documented) or `listed` (src/sandbox/README.md, Payment lifecycle). */
  lookupRefunds: 'none' | 'listed';
  /** A look-up's `auth_amount`: `listed` (the spec's transaction response) or `omitted` (the reference's look-up example, the capture). */
  lookupAuthAmount: 'listed' | 'omitted';
  /** A follow-up's `custom_fields`: `echoed` on its look-up and list items, or `dropped`. */
  customFields: 'echoed' | 'dropped';
  /** SANDBOX_MERCHANT_KEY: the `merch_key` of its webhooks. */
  merchantKey: string;
  /** SANDBOX_REFUND_WITHOUT_AMOUNT: a refund without amount after a partial one: what is left, or the original (refused). */
  refundWithoutAmount: 'left' | 'original';
  /** SANDBOX_CHECK_PAYMENT_KEY: `check:sale` takes a check form's payment key (`accepted`) or not (`refused`). */
  checkPaymentKey: 'accepted' | 'refused';
  /** SANDBOX_CARD_SALE_CHECK_KEY: a check form's payment key on a card sale is refused (`refused`) or debited as a check (`charged`). */
  cardSaleCheckKey: 'refused' | 'charged';
  /** SANDBOX_RETURNED_CHECK_REFUND: a refund of a returned check is refused (10125) or approved as a credit back. */
  returnedCheckRefund: 'refused' | 'approved';
  /** SANDBOX_CREDIT_RETURNS: a credit to a return test account never comes back, or comes back returned or failed. */
  creditReturns: 'never' | 'returned' | 'failed';
  /** The gateway's webhooks (src/sandbox/README.md, Webhooks): receivers, signature key, retry delays. */
  webhookUrls: readonly string[];
  /** Unset: events go unsigned. */
  webhookSecret?: Secret;
  /** Unset: the gateway's schedule (about 3 days). */
  webhookRetryScheduleMs?: readonly number[];
  /** Random delay (0..ms) before each event's first delivery, and the chance of a second delivery. */
  webhookDisorderMs: number;
  webhookDuplicatePercent: number;
}

/** Adding a card from a Pay.js payment key (issue 13). */
export interface CardsConfig {
  /** CARD_VERIFY_AMOUNT: the `authonly` that verifies a new card (voided at once with cc:void:release). */
  verifyAmount: string;
  /** PAYJS_URL: where browsers load Pay.js; default `<gateway origin>/js/v2/pay.js`; https: in production unless loopback. */
  payJsUrl?: string;
}

/**
 * tokengate's own view of what pages read (guarantee 9, issue 25): how long each kind answers as fresh before it
 * is refreshed in spare budget. Settlement is daily (a sale's status changes at most once a day, when its batch
 * closes, and the gateway's webhooks say so sooner); cards and customers change only when someone changes them,
 * and tokengate's own writes update the view in the same step.
 */
export interface ViewConfig {
  /** VIEW_SALE_FRESH_MS: a sale's view after it last matched the gateway (default 1 h). */
  saleFreshMs: number;
  /**
   * VIEW_SALE_FRESH_WITH_WEBHOOKS_MS: the same while the gateway's webhooks are on (GATEWAY_WEBHOOK_SECRET set):
   * every change at the gateway then arrives as an event, so a read only guards against an event the gateway gave
   * up on (default 24 h; never shorter than VIEW_SALE_FRESH_MS).
   */
  saleFreshWithWebhooksMs: number;
  /** VIEW_WALLET_FRESH_MS: a customer's and its payment methods' view (default 24 h). */
  walletFreshMs: number;
  /** VIEW_UNKNOWN_KEY_TTL_MS: how long "the gateway does not know this key" is remembered (default 10 min). */
  unknownKeyTtlMs: number;
}

export interface Config {
  env: NodeEnv;
  /** Interface both servers listen on; all interfaces by default (a pod is reached through its IP). */
  host: string;
  port: number;
  adminPort: number;
  logLevel: string;
  redis: RedisConfig;
  gateway: GatewayConfig;
  events: EventsConfig;
  subscriptions: SubscriptionsConfig;
  jwt: JwtConfig;
  limiter: LimiterConfig;
  cache: CacheConfig;
  idempotency: IdempotencyConfig;
  reconcile: ReconcileConfig;
  settlements: SettlementsConfig;
  cards: CardsConfig;
  view: ViewConfig;
  http: HttpConfig;
  sandbox: SandboxConfig;
}
