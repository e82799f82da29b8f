import { publicKeyPem } from './jwt-key';
import { bool, int, intList, list, oneOf, secret, secretUrl, share, str, url, webhookSecrets, type Parser } from './parse';

/**
 * Every setting: where it lives in `config/*.json`, the environment variable that overrides it, and its parser.
 * `file: true` also accepts `<ENV>_FILE` (a mounted Kubernetes Secret). Names follow ../shared/contract.md.
 */
export interface Setting {
  path: string;
  env: string;
  parse: Parser<unknown>;
  file?: boolean;
}

const hostList = list(str(/^[A-Za-z0-9.-]+(:\d{1,5})?$/));
const algorithms = list(oneOf('HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'));
const ms = int(1, 366 * 24 * 3600 * 1000);
const port = int(0, 65535);

export const SETTINGS: readonly Setting[] = [
  { path: 'env', env: 'NODE_ENV', parse: oneOf('development', 'test', 'production') },
  { path: 'host', env: 'HOST', parse: str(/^[0-9A-Fa-f.:]+$|^localhost$/) },
  { path: 'port', env: 'PORT', parse: port },
  { path: 'adminPort', env: 'ADMIN_PORT', parse: port },
  { path: 'logLevel', env: 'LOG_LEVEL', parse: oneOf('error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly') },

  { path: 'redis.url', env: 'REDIS_URL', parse: secretUrl('redis:', 'rediss:'), file: true },
  { path: 'redis.clusterNodes', env: 'REDIS_CLUSTER_NODES', parse: hostList },
  { path: 'redis.sentinels', env: 'REDIS_SENTINELS', parse: hostList },
  { path: 'redis.sentinelName', env: 'REDIS_SENTINEL_NAME', parse: str(/^[A-Za-z0-9._-]{1,64}$/) },
  { path: 'redis.password', env: 'REDIS_PASSWORD', parse: secret(1), file: true },
  { path: 'redis.tls', env: 'REDIS_TLS', parse: bool },
  { path: 'redis.keyPrefix', env: 'REDIS_KEY_PREFIX', parse: str(/^[A-Za-z0-9:_-]{1,64}$/) },

  { path: 'gateway.baseUrl', env: 'GATEWAY_BASE_URL', parse: url('https:', 'http:') },
  { path: 'gateway.failoverHosts', env: 'GATEWAY_FAILOVER_HOSTS', parse: hostList },
  { path: 'gateway.allowInsecure', env: 'GATEWAY_ALLOW_INSECURE', parse: bool },
  { path: 'gateway.apiKey', env: 'GATEWAY_API_KEY', parse: secret(8), file: true },
  { path: 'gateway.apiPin', env: 'GATEWAY_API_PIN', parse: secret(1), file: true },
  { path: 'gateway.timeoutMs', env: 'GATEWAY_TIMEOUT_MS', parse: int(100, 600_000) },
  { path: 'gateway.connectTimeoutMs', env: 'GATEWAY_CONNECT_TIMEOUT_MS', parse: int(50, 60_000) },
  { path: 'gateway.maxResponseBytes', env: 'GATEWAY_MAX_RESPONSE_BYTES', parse: int(1024, 64 * 1024 * 1024) },
  { path: 'gateway.cardRefField', env: 'GATEWAY_CARDREF_FIELD', parse: oneOf('UMCardRef', 'creditcard.number') },
  { path: 'gateway.ratePerMinute', env: 'GATEWAY_RATE_PER_MINUTE', parse: int(1, 1_000_000) },
  { path: 'gateway.ratePerDay', env: 'GATEWAY_RATE_PER_DAY', parse: int(1, 100_000_000) },
  { path: 'gateway.rateWindowMs', env: 'GATEWAY_RATE_WINDOW_MS', parse: ms },
  { path: 'gateway.rateDayWindowMs', env: 'GATEWAY_RATE_DAY_WINDOW_MS', parse: ms },
  { path: 'gateway.rateMarginMs', env: 'GATEWAY_RATE_MARGIN_MS', parse: int(20, 600_000) },
  { path: 'gateway.duplicateFolding', env: 'GATEWAY_DUPLICATE_FOLDING', parse: bool },
  { path: 'gateway.webhookSecret', env: 'GATEWAY_WEBHOOK_SECRET', parse: secret(8), file: true },

  { path: 'events.webhookUrls', env: 'EVENTS_WEBHOOK_URLS', parse: list(url('https:', 'http:')) },
  { path: 'events.webhookSecret', env: 'EVENTS_WEBHOOK_SECRET', parse: webhookSecrets, file: true },
  { path: 'events.retryScheduleMs', env: 'EVENTS_RETRY_SCHEDULE_MS', parse: intList(1, 7 * 86_400_000) },
  { path: 'events.timeoutMs', env: 'EVENTS_TIMEOUT_MS', parse: int(100, 120_000) },
  { path: 'events.pollMs', env: 'EVENTS_POLL_MS', parse: int(10, 60_000) },

  { path: 'jwt.issuer', env: 'JWT_ISSUER', parse: str() },
  { path: 'jwt.audience', env: 'JWT_AUDIENCE', parse: str() },
  { path: 'jwt.algorithms', env: 'JWT_ALGORITHMS', parse: algorithms },
  { path: 'jwt.secret', env: 'JWT_SECRET', parse: secret(16), file: true },
  { path: 'jwt.publicKey', env: 'JWT_PUBLIC_KEY', parse: publicKeyPem, file: true },
  { path: 'jwt.jwksUrl', env: 'JWT_JWKS_URL', parse: url('https:', 'http:') },
  { path: 'jwt.clockToleranceSec', env: 'JWT_CLOCK_TOLERANCE_SEC', parse: int(0, 30) },
  { path: 'jwt.jwksCooldownMs', env: 'JWT_JWKS_COOLDOWN_MS', parse: int(0, 3_600_000) },

  { path: 'limiter.saleMaxWaitMs', env: 'LIMITER_SALE_MAX_WAIT_MS', parse: int(0, 600_000) },
  { path: 'limiter.readMaxWaitMs', env: 'LIMITER_READ_MAX_WAIT_MS', parse: int(0, 600_000) },
  { path: 'limiter.saleReservedSlots', env: 'LIMITER_SALE_RESERVED_SLOTS', parse: int(0, 1_000_000) },
  { path: 'limiter.expectedReplicas', env: 'LIMITER_EXPECTED_REPLICAS', parse: int(1, 1000) },
  { path: 'limiter.readDayShare', env: 'LIMITER_READ_DAY_SHARE', parse: share },
  { path: 'limiter.backgroundDayShare', env: 'LIMITER_BACKGROUND_DAY_SHARE', parse: share },
  { path: 'limiter.callerShare', env: 'LIMITER_CALLER_SHARE', parse: share },
  { path: 'limiter.callerDayShare', env: 'LIMITER_CALLER_DAY_SHARE', parse: share },

  { path: 'cache.tokenExpiryMarginMs', env: 'CACHE_TOKEN_EXPIRY_MARGIN_MS', parse: int(0, 30 * 24 * 3600 * 1000) },
  { path: 'cache.tokenMaxTtlMs', env: 'CACHE_TOKEN_MAX_TTL_MS', parse: ms },
  { path: 'cache.lockTtlMs', env: 'CACHE_LOCK_TTL_MS', parse: int(100, 600_000) },
  { path: 'cache.lockWaitMs', env: 'CACHE_LOCK_WAIT_MS', parse: int(10, 600_000) },

  { path: 'idempotency.retentionMs', env: 'IDEMPOTENCY_RETENTION_MS', parse: ms },
  { path: 'idempotency.inProgressRetryAfterSec', env: 'IDEMPOTENCY_RETRY_AFTER_SEC', parse: int(1, 3600) },

  { path: 'reconcile.deadlineMs', env: 'RECONCILE_DEADLINE_MS', parse: int(1000, 7 * 24 * 3600 * 1000) },
  { path: 'reconcile.maxProcessingMs', env: 'RECONCILE_MAX_PROCESSING_MS', parse: int(0, 3_600_000) },
  { path: 'reconcile.intervalMs', env: 'RECONCILE_INTERVAL_MS', parse: int(50, 600_000) },
  { path: 'reconcile.retryMs', env: 'RECONCILE_RETRY_MS', parse: int(50, 600_000) },
  { path: 'cards.verifyAmount', env: 'CARD_VERIFY_AMOUNT', parse: str(/^(0\.(0[1-9]|[1-9]\d?)|[1-9]\d{0,2}(\.\d{1,2})?)$/) },
  { path: 'cards.payJsUrl', env: 'PAYJS_URL', parse: url('https:', 'http:') },
  { path: 'reconcile.lookbackMarginMs', env: 'RECONCILE_LOOKBACK_MARGIN_MS', parse: int(0, 7 * 24 * 3600 * 1000) },

  { path: 'view.saleFreshMs', env: 'VIEW_SALE_FRESH_MS', parse: ms },
  { path: 'view.saleFreshWithWebhooksMs', env: 'VIEW_SALE_FRESH_WITH_WEBHOOKS_MS', parse: ms },
  { path: 'view.walletFreshMs', env: 'VIEW_WALLET_FRESH_MS', parse: ms },
  { path: 'view.unknownKeyTtlMs', env: 'VIEW_UNKNOWN_KEY_TTL_MS', parse: ms },

  { path: 'http.bodyLimitBytes', env: 'HTTP_BODY_LIMIT_BYTES', parse: int(1024, 1024 * 1024) },
  { path: 'http.corsOrigins', env: 'CORS_ORIGINS', parse: list(url('https:', 'http:')) },
  { path: 'http.shutdownGraceMs', env: 'SHUTDOWN_GRACE_MS', parse: int(0, 600_000) },

  { path: 'sandbox.apiKey', env: 'SANDBOX_API_KEY', parse: str(/^[^:\s]{8,}$/) },
  { path: 'sandbox.apiPin', env: 'SANDBOX_API_PIN', parse: secret(1) },
  { path: 'sandbox.host', env: 'SANDBOX_HOST', parse: str(/^[0-9A-Fa-f.:]+$|^localhost$/) },
  { path: 'sandbox.port', env: 'SANDBOX_PORT', parse: port },
  { path: 'sandbox.ratePerMinute', env: 'SANDBOX_RATE_PER_MINUTE', parse: int(1, 1_000_000) },
  { path: 'sandbox.ratePerDay', env: 'SANDBOX_RATE_PER_DAY', parse: int(1, 100_000_000) },
  { path: 'sandbox.rateWindowMs', env: 'SANDBOX_RATE_WINDOW_MS', parse: ms },
  { path: 'sandbox.rateDayWindowMs', env: 'SANDBOX_RATE_DAY_WINDOW_MS', parse: ms },
  { path: 'sandbox.rateMode', env: 'SANDBOX_RATE_MODE', parse: oneOf('fixed', 'sliding') },
  { path: 'sandbox.latencyMs', env: 'SANDBOX_LATENCY_MS', parse: int(0, 600_000) },
  { path: 'sandbox.jitterMs', env: 'SANDBOX_JITTER_MS', parse: int(0, 600_000) },
  { path: 'sandbox.duplicateFolding', env: 'SANDBOX_DUPLICATE_FOLDING', parse: bool },
  { path: 'sandbox.wireFormat', env: 'SANDBOX_WIRE_FORMAT', parse: oneOf('spec', 'wire') },
  { path: 'sandbox.batchCloseIntervalMs', env: 'SANDBOX_BATCH_CLOSE_INTERVAL_MS', parse: int(0, 366 * 86_400_000) },
  { path: 'sandbox.deletedCardref', env: 'SANDBOX_DELETED_CARDREF', parse: oneOf('refused', 'honoured') },
  { path: 'sandbox.webhookUrls', env: 'SANDBOX_WEBHOOK_URLS', parse: list(url('https:', 'http:')) },
  { path: 'sandbox.webhookSecret', env: 'SANDBOX_WEBHOOK_SECRET', parse: secret(1) },
  { path: 'sandbox.webhookRetryScheduleMs', env: 'SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS', parse: intList(1, 7 * 86_400_000) },
  { path: 'sandbox.webhookDisorderMs', env: 'SANDBOX_WEBHOOK_DISORDER_MS', parse: int(0, 600_000) },
  { path: 'sandbox.webhookDuplicatePercent', env: 'SANDBOX_WEBHOOK_DUPLICATE_PERCENT', parse: int(0, 100) },
];

/** Settings that may stay unset (null in JSON); every other one must end with a value. */
export const OPTIONAL = new Set(['gateway.webhookSecret', 'events.webhookSecret', 'redis.url', 'redis.sentinelName', 'redis.password', 'gateway.baseUrl', 'jwt.secret', 'jwt.publicKey', 'jwt.jwksUrl', 'cards.payJsUrl', 'sandbox.webhookSecret', 'sandbox.webhookRetryScheduleMs']);
