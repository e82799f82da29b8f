import { publicKeyPem } from './jwt-key';
import { bool, int, intList, list, oneOf, secret, secretUrl, share, str, url, webhookSecrets, type Parser } from './parse';

/**
 * Every setting: where it lives in `config/*.json`, the environment variable that overrides it, its parser, and
 * what it means. `file: true` also accepts `<ENV>_FILE` (a mounted Kubernetes Secret). Names follow
 * ../shared/contract.md. docs/configuration.md is written from this table, the parsers' bounds, config/*.json and
 * the checks of ./checks.ts by `npm run config:generate`; `npm run lint` fails when it is stale.
 */
export interface Setting {
  path: string;
  env: string;
  parse: Parser<unknown>;
  file?: boolean;
  /** What it means and why it is there, in Markdown as docs/configuration.md prints it (links relative to docs/). */
  doc: string;
}

const hostList = list(str(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, '`host` or `host:port`'));
const algorithms = list(oneOf('HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'));
const ms = int(1, 366 * 24 * 3600 * 1000);
const port = int(0, 65535);
const address = str(/^[0-9A-Fa-f.:]+$|^localhost$/, 'an IP address or `localhost`');

export const SETTINGS: readonly Setting[] = [
  { path: 'env', env: 'NODE_ENV', parse: oneOf('development', 'test', 'production'), doc: '`development`: the embedded sandbox gateway, in-memory stores unless `REDIS_URL` is set, a printed dev JWT secret. `test`: the same, for the test suite. `production`: refuses to start without what it needs (the checks below). Read from the environment only.' },
  { path: 'host', env: 'HOST', parse: address, doc: 'The address both ports listen on.' },
  { path: 'port', env: 'PORT', parse: port, doc: 'The public API (the Service and the Ingress send here). A port that is taken stops the service with one line (`tokengate: PORT 8080 is already in use`), in every mode; 0 takes any free port.' },
  { path: 'adminPort', env: 'ADMIN_PORT', parse: port, doc: '`/healthz`, `/readyz` and `/metrics`; never exposed through the Ingress. A taken port stops the service like `PORT`.' },
  { path: 'logLevel', env: 'LOG_LEVEL', parse: oneOf('error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'), doc: 'The winston level of the JSON log lines (every line is redacted whatever its level).' },

  { path: 'redis.url', env: 'REDIS_URL', parse: secretUrl('redis:', 'rediss:'), file: true, doc: 'A single Redis node: `redis://[user:password@]host[:port][/db]`; `rediss://` turns TLS on and verifies the certificate against the host name. Production Redis must persist (AOF): idempotency records live there ([deploy](deploy.md#6-redis-topologies)).' },
  { path: 'redis.clusterNodes', env: 'REDIS_CLUSTER_NODES', parse: hostList, doc: 'Redis Cluster seeds (the rest is discovered). Every Lua script\'s keys share one hash tag, so each runs on one node.' },
  { path: 'redis.sentinels', env: 'REDIS_SENTINELS', parse: hostList, doc: 'Redis Sentinel: the sentinels, which name the current master; a failover (`+switch-master`, or `READONLY` from a demoted master) reconnects at once. Sentinels are reached without a password or TLS.' },
  { path: 'redis.sentinelName', env: 'REDIS_SENTINEL_NAME', parse: str(/^[A-Za-z0-9._-]{1,64}$/, '1 to 64 of `A-Z a-z 0-9 . _ -`'), doc: 'The master\'s name as the sentinels know it.' },
  { path: 'redis.password', env: 'REDIS_PASSWORD', parse: secret(1), file: true, doc: 'AUTH for Cluster nodes or the Sentinel\'s master (a single node\'s goes in `REDIS_URL`).' },
  { path: 'redis.tls', env: 'REDIS_TLS', parse: bool, doc: 'TLS to Cluster nodes or the Sentinel\'s master (a single node: `rediss://`).' },
  { path: 'redis.writeReplicas', env: 'REDIS_WRITE_REPLICAS', parse: int(0, 10), doc: 'Replicas that must hold a write\'s claim before its gateway call, and its answer before that answer is final (Redis `WAIT`). Replication is asynchronous: without this a failover can lose a claim the old master had taken, and a retry is sent again (the soak saw one double charge in 90 s of Sentinel failovers). Set `1` with `REDIS_SENTINELS`; a single node has no replica to wait for (0). Not with `REDIS_CLUSTER_NODES`.' },
  { path: 'redis.writeReplicasTimeoutMs', env: 'REDIS_WRITE_REPLICAS_TIMEOUT_MS', parse: int(10, 10_000), doc: 'How long a write waits for `REDIS_WRITE_REPLICAS` replicas. Short of them before the gateway call: 503 `unavailable`, nothing sent; after it: the answer is given and kept again once Redis is back (a failover), as when Redis fails.' },
  { path: 'redis.keyPrefix', env: 'REDIS_KEY_PREFIX', parse: str(/^[A-Za-z0-9:_-]{1,64}$/, '1 to 64 of `A-Z a-z 0-9 : _ -`'), doc: 'Starts every key, inside its hash tag ([the keys](architecture.md#redis-keys-by-folder)): deployments sharing a Redis need different prefixes.' },

  { path: 'gateway.baseUrl', env: 'GATEWAY_BASE_URL', parse: url('https:', 'http:'), doc: 'The gateway, e.g. `https://<host>/api/v2/`; the `v2` segment may be an endpoint key, whose limits `GATEWAY_RATE_PER_*` mirror.' },
  { path: 'gateway.failoverHosts', env: 'GATEWAY_FAILOVER_HOSTS', parse: hostList, doc: 'Alternate gateway hosts, tried only when a failure proves nothing was sent (refused, DNS, connect timeout).' },
  { path: 'gateway.allowInsecure', env: 'GATEWAY_ALLOW_INSECURE', parse: bool, doc: '`true` lets production use an `http://` `GATEWAY_BASE_URL`: loopback tests and the sandbox overlay\'s in-cluster emulator only. It widens nothing else.' },
  { path: 'gateway.apiKey', env: 'GATEWAY_API_KEY', parse: secret(8), file: true, doc: 'The merchant\'s API key; never logged.' },
  { path: 'gateway.apiPin', env: 'GATEWAY_API_PIN', parse: secret(1), file: true, doc: 'The merchant\'s PIN, hashed into every call\'s authentication; it never leaves the server and is never logged.' },
  { path: 'gateway.timeoutMs', env: 'GATEWAY_TIMEOUT_MS', parse: int(100, 600_000), doc: 'How long a gateway call may take. A write that times out has an unknown outcome (504, reconciled, never re-sent); at shutdown, in-flight calls get this long.' },
  { path: 'gateway.connectTimeoutMs', env: 'GATEWAY_CONNECT_TIMEOUT_MS', parse: int(50, 60_000), doc: 'How long connecting may take: a connect timeout proves nothing was sent, so a failover host may be tried.' },
  { path: 'gateway.maxResponseBytes', env: 'GATEWAY_MAX_RESPONSE_BYTES', parse: int(1024, 64 * 1024 * 1024), doc: 'The largest gateway answer read; a larger one is an error, never buffered whole.' },
  { path: 'gateway.checkPaymentKey', env: 'GATEWAY_CHECK_PAYMENT_KEY', parse: oneOf('accepted', 'refused'), doc: 'Whether the merchant\'s gateway takes a Pay.js check form\'s `payment_key` on `check:sale` (undocumented): `accepted`: a bank payment is one call; `refused`: tokengate saves the bank method from the key first and charges it (`customer:sale`), removing it afterwards unless the sale keeps it ([bank payments](checkout.md#bank-payments-ach)).' },
  { path: 'gateway.cardRefField', env: 'GATEWAY_CARDREF_FIELD', parse: oneOf('UMCardRef', 'creditcard.number'), doc: 'Where a sale carries the card reference token: `UMCardRef` (the spec) or `creditcard.number` (the documented REST v2 form).' },
  { path: 'gateway.ratePerMinute', env: 'GATEWAY_RATE_PER_MINUTE', parse: int(1, 1_000_000), doc: 'The endpoint key\'s calls per window, kept across all replicas ([the budget](budget.md)).' },
  { path: 'gateway.ratePerDay', env: 'GATEWAY_RATE_PER_DAY', parse: int(1, 100_000_000), doc: 'The endpoint key\'s calls per day window.' },
  { path: 'gateway.rateWindowMs', env: 'GATEWAY_RATE_WINDOW_MS', parse: ms, doc: 'The limit\'s window (tests shrink it).' },
  { path: 'gateway.rateDayWindowMs', env: 'GATEWAY_RATE_DAY_WINDOW_MS', parse: ms, doc: 'The day window (tests shrink it).' },
  { path: 'gateway.rateMarginMs', env: 'GATEWAY_RATE_MARGIN_MS', parse: int(20, 600_000), doc: 'Added to each window: the budget counts any span of window + margin, on Redis\' clock.' },
  { path: 'gateway.duplicateFolding', env: 'GATEWAY_DUPLICATE_FOLDING', parse: bool, doc: '`true` only if the merchant enabled duplicate folding on the key: a retry of an `outcome_unknown` sale re-sends with the same invoice and the gateway answers the original (`is_duplicate` `Y`).' },
  { path: 'gateway.webhookSecret', env: 'GATEWAY_WEBHOOK_SECRET', parse: secret(8), file: true, doc: 'The signature key of the gateway\'s webhooks, as set in the merchant console. Unset: `POST /v1/webhooks/gateway` answers 404. Set, a sale\'s view stays fresh for `VIEW_SALE_FRESH_WITH_WEBHOOKS_MS`; in development, [the embedded sandbox posts to it](sandbox.md#the-same-with-npm-start-alone).' },

  { path: 'gateway.merchantKey', env: 'GATEWAY_MERCHANT_KEY', parse: str(/^[A-Za-z0-9_-]{4,64}$/, '4 to 64 letters, digits, `_` or `-`'), doc: 'The `merch_key` of the merchant tokengate serves, as the gateway puts it in every webhook\'s `event_body.merchant`. A webhook for another merchant is acknowledged, counted (`result="foreign"`) and changes nothing. Unset: every signed webhook is taken as this merchant\'s (production warns at start while `GATEWAY_WEBHOOK_SECRET` is set).' },

  { path: 'events.webhookUrls', env: 'EVENTS_WEBHOOK_URLS', parse: list(url('https:', 'http:')), doc: 'Receivers of the payment events (internal services, over cluster DNS). None: the events are still readable with `GET /v1/events`.' },
  { path: 'events.webhookSecret', env: 'EVENTS_WEBHOOK_SECRET', parse: webhookSecrets, file: true, doc: 'Signs every delivery (Standard Webhooks); several, separated by spaces, each sign, so a secret rotates without a gap.' },
  { path: 'events.retryScheduleMs', env: 'EVENTS_RETRY_SCHEDULE_MS', parse: intList(1, 7 * 86_400_000), doc: 'The delays between delivery attempts of one event, each counted from the failed attempt\'s end; after the last, the event is counted undelivered (alert `TokengateEventsUndelivered`).' },
  { path: 'events.timeoutMs', env: 'EVENTS_TIMEOUT_MS', parse: int(100, 120_000), doc: 'An attempt unanswered by then failed (the contract\'s 15 s; tests shrink it).' },
  { path: 'subscriptions.retryScheduleMs', env: 'SUBSCRIPTION_RETRY_SCHEDULE_MS', parse: intList(1, 366 * 86_400_000), doc: 'A soft decline\'s retries of a subscription\'s period, each counted from the period\'s due date (the contract\'s 1, 3, 7 and 14 days: Stripe\'s and Recurly\'s schedules stay within Visa\'s 15 attempts in 30 days); after the last the subscription is `unpaid` (or canceled: `SUBSCRIPTION_EXHAUSTED_ACTION`). A hard decline is never retried on the same card.' },
  { path: 'subscriptions.exhaustedAction', env: 'SUBSCRIPTION_EXHAUSTED_ACTION', parse: oneOf('unpaid', 'cancel'), doc: 'What a subscription whose retries are exhausted becomes: `unpaid` (no charge until its card changes) or `cancel`.' },
  { path: 'subscriptions.pollMs', env: 'SUBSCRIPTION_POLL_MS', parse: int(10, 600_000), doc: 'How often each replica looks for renewals due (by tokengate\'s clock, which `POST /test/clock` moves outside production).' },
  { path: 'events.pollMs', env: 'EVENTS_POLL_MS', parse: int(10, 60_000), doc: 'How often each replica looks for events to deliver.' },

  { path: 'jwt.issuer', env: 'JWT_ISSUER', parse: str(), doc: 'The `iss` every token must carry.' },
  { path: 'jwt.audience', env: 'JWT_AUDIENCE', parse: str(), doc: 'The `aud` every token must carry.' },
  { path: 'jwt.algorithms', env: 'JWT_ALGORITHMS', parse: algorithms, doc: 'The only algorithms a token may use.' },
  { path: 'jwt.secret', env: 'JWT_SECRET', parse: secret(16), file: true, doc: 'The HS* secret. Development prints the shipped one at start (never one you set).' },
  { path: 'jwt.publicKey', env: 'JWT_PUBLIC_KEY', parse: publicKeyPem, file: true, doc: 'The key RS*, PS* or ES* tokens are verified with, parsed at boot.' },
  { path: 'jwt.jwksUrl', env: 'JWT_JWKS_URL', parse: url('https:', 'http:'), doc: 'A JWKS endpoint (jose\'s remote key set: cached 10 min, refetched on an unknown `kid` at most once per `JWT_JWKS_COOLDOWN_MS`; a failed fetch keeps the last good keys).' },
  { path: 'jwt.clockToleranceSec', env: 'JWT_CLOCK_TOLERANCE_SEC', parse: int(0, 30), doc: 'Clock skew allowed on `exp`, `nbf` and `iat` (the contract\'s limit: 30 s).' },
  { path: 'jwt.jwksCooldownMs', env: 'JWT_JWKS_COOLDOWN_MS', parse: int(0, 3_600_000), doc: 'The least time between two JWKS fetches for an unknown `kid`, counted from the last fetch, failed ones included, so a dead identity provider is not asked on every request.' },

  { path: 'limiter.saleMaxWaitMs', env: 'LIMITER_SALE_MAX_WAIT_MS', parse: int(0, 600_000), doc: 'The longest a sale may wait for a gateway slot; one that could not start within it is refused at once (429 with `Retry-After`). Captures and refunds wait as long.' },
  { path: 'limiter.readMaxWaitMs', env: 'LIMITER_READ_MAX_WAIT_MS', parse: int(0, 600_000), doc: 'The longest a read may wait for a gateway slot (then 429 with `Retry-After` at once, like a sale).' },
  { path: 'limiter.saleReservedSlots', env: 'LIMITER_SALE_RESERVED_SLOTS', parse: int(0, 1_000_000), doc: 'Slots of every window reads leave to money (refunds leave round(2/3 of it), captures round(1/3), background round(4/3)), so no read flood or refund batch makes a checkout wait.' },
  { path: 'limiter.expectedReplicas', env: 'LIMITER_EXPECTED_REPLICAS', parse: int(1, 1000), doc: 'While Redis is down each replica reads on `limit ÷ this`: keep it at least the HPA\'s maximum so the fleet stays within budget.' },
  { path: 'limiter.readDayShare', env: 'LIMITER_READ_DAY_SHARE', parse: share, doc: 'Day pacing: reads may hold at most this share of what the other classes leave of the day window, so a read storm at noon leaves the afternoon\'s sales their calls.' },
  { path: 'limiter.backgroundDayShare', env: 'LIMITER_BACKGROUND_DAY_SHARE', parse: share, doc: 'The same for background work (view refreshes).' },
  { path: 'limiter.callerShare', env: 'LIMITER_CALLER_SHARE', parse: share, doc: 'The most of the reads\' slots per window one caller (JWT `sub`) may take; past it that caller alone is refused (guarantee 11).' },
  { path: 'limiter.callerDayShare', env: 'LIMITER_CALLER_DAY_SHARE', parse: share, doc: 'The most of the reads\' day one caller may take.' },

  { path: 'cache.tokenExpiryMarginMs', env: 'CACHE_TOKEN_EXPIRY_MARGIN_MS', parse: int(0, 30 * 24 * 3600 * 1000), doc: 'A card reference token is cached until the start of its `expires` day (UTC) less this.' },
  { path: 'cache.tokenMaxTtlMs', env: 'CACHE_TOKEN_MAX_TTL_MS', parse: ms, doc: 'The longest a token is cached, whatever its expiry.' },
  { path: 'cache.lockTtlMs', env: 'CACHE_LOCK_TTL_MS', parse: int(100, 600_000), doc: 'The lock that makes concurrent misses for one payment method one gateway call across replicas; renewed while a slow load runs.' },
  { path: 'cache.lockWaitMs', env: 'CACHE_LOCK_WAIT_MS', parse: int(10, 600_000), doc: 'How often (±50 %) a replica waiting for another\'s load looks again.' },

  { path: 'idempotency.retentionMs', env: 'IDEMPOTENCY_RETENTION_MS', parse: ms, doc: 'How long a finished `Idempotency-Key` is kept: a retry within it replays the answer.' },
  { path: 'idempotency.inProgressRetryAfterSec', env: 'IDEMPOTENCY_RETRY_AFTER_SEC', parse: int(1, 3600), doc: 'The `Retry-After` of 409 `idempotency_in_progress`.' },

  { path: 'reconcile.deadlineMs', env: 'RECONCILE_DEADLINE_MS', parse: int(1000, 7 * 24 * 3600 * 1000), doc: 'The longest an outcome may stay unknown while the gateway\'s lists answer (guarantee 6).' },
  { path: 'reconcile.maxProcessingMs', env: 'RECONCILE_MAX_PROCESSING_MS', parse: int(0, 3_600_000), doc: 'The gateway\'s slowest processing: a write is proven absent only at a look made this long after its outcome became unknown.' },
  { path: 'reconcile.intervalMs', env: 'RECONCILE_INTERVAL_MS', parse: int(50, 600_000), doc: 'Each replica\'s reconciler pass comes every interval (±25 %).' },
  { path: 'reconcile.retryMs', env: 'RECONCILE_RETRY_MS', parse: int(50, 600_000), doc: 'A look that found no spare read slot is tried again this much later.' },
  { path: 'cards.verifyAmount', env: 'CARD_VERIFY_AMOUNT', parse: str(/^(0\.(0[1-9]|[1-9]\d?)|[1-9]\d{0,2}(\.\d{1,2})?)$/, 'an amount from 0.01 to 999.99'), doc: 'The `authonly` that verifies a card added from Pay.js, voided at once.' },
  { path: 'cards.payJsUrl', env: 'PAYJS_URL', parse: url('https:', 'http:'), doc: 'Where browsers load Pay.js (`pay_js_url` of `GET /v1/payment-config`). Unset: the gateway host\'s `/js/v2/pay.js`.' },
  { path: 'settlements.lookMs', env: 'SETTLEMENTS_LOOK_MS', parse: int(0, 7 * 24 * 3600 * 1000), doc: 'Each replica looks at the gateway\'s closed batches this often for any closed in the last 7 days and not yet kept (one background call for a page of batches; with webhooks off, the only way settlements are read; with them on, the net under a lost webhook; a replica that died reading a webhook\'s batch leaves it due in Redis, read by another within seconds). 0: only on `settlement.batch.success`.' },
  { path: 'settlements.missingAfterMs', env: 'SETTLEMENTS_MISSING_AFTER_MS', parse: int(60_000, 30 * 24 * 3600 * 1000), doc: 'A sale in no closed batch this long after tokengate first saw its batch is `missing` (its batch closes within a day, plus the contract\'s day of grace).' },
  { path: 'settlements.sweepEveryMs', env: 'SETTLEMENTS_SWEEP_EVERY_MS', parse: int(60_000, 30 * 24 * 3600 * 1000), doc: 'How often one replica (any, across restarts) sweeps for `missing` sales, checked at each look (hourly when looks are off).' },
  { path: 'settlements.bankReturnWindowMs', env: 'SETTLEMENTS_BANK_RETURN_WINDOW_MS', parse: int(60_000, 400 * 24 * 3600 * 1000), doc: 'A bank payment\'s settlement line is `bank: open` this long after its batch was read, then `final` (settled for good) unless returned. The gateway does not say how late a return comes (only that it may come after settlement); the default is NACHA\'s 60 days for a consumer\'s "not authorized" return (R10), the longest common one. A return after it still changes the line.' },
  { path: 'reconcile.lookbackMarginMs', env: 'RECONCILE_LOOKBACK_MARGIN_MS', parse: int(0, 7 * 24 * 3600 * 1000), doc: 'The gateway\'s `created` carries no time zone: the reconciler pages this much further back than the attempt\'s start.' },

  { path: 'view.saleFreshMs', env: 'VIEW_SALE_FRESH_MS', parse: ms, doc: 'A sale\'s view answers as fresh this long after it last matched the gateway (settlement is daily); past it, it is answered at once and refreshed in spare budget.' },
  { path: 'view.saleFreshWithWebhooksMs', env: 'VIEW_SALE_FRESH_WITH_WEBHOOKS_MS', parse: ms, doc: 'The same while the gateway\'s webhooks are on (`GATEWAY_WEBHOOK_SECRET`): every change reaches tokengate as it happens, so the read left is a guard against an event the gateway gave up on.' },
  { path: 'view.walletFreshMs', env: 'VIEW_WALLET_FRESH_MS', parse: ms, doc: 'The same for customers and their cards, which change only when someone changes them.' },
  { path: 'view.unknownKeyTtlMs', env: 'VIEW_UNKNOWN_KEY_TTL_MS', parse: ms, doc: 'A sale key the gateway does not know is remembered as unknown this long and not asked about again (guarantee 11).' },

  { path: 'http.bodyLimitBytes', env: 'HTTP_BODY_LIMIT_BYTES', parse: int(1024, 1024 * 1024), doc: 'Larger request bodies answer 413 `payload_too_large`.' },
  { path: 'http.corsOrigins', env: 'CORS_ORIGINS', parse: list(url('https:', 'http:')), doc: 'Origins whose pages may call the API from a browser.' },
  { path: 'http.shutdownGraceMs', env: 'SHUTDOWN_GRACE_MS', parse: int(0, 600_000), doc: 'After SIGTERM, calls queued for the budget may still get their slot this long; then they answer 503 ([shutdown](deploy.md#7-shutdown-sequence)).' },

  { path: 'sandbox.apiKey', env: 'SANDBOX_API_KEY', parse: str(/^[^:\s]{8,}$/, 'at least 8 characters, no `:` or space'), doc: 'The emulator\'s merchant API key (default: the documented example, so the documented header works as is).' },
  { path: 'sandbox.apiPin', env: 'SANDBOX_API_PIN', parse: secret(1), doc: 'The emulator\'s PIN (default: the documented example).' },
  { path: 'sandbox.host', env: 'SANDBOX_HOST', parse: address, doc: 'The address `npm run sandbox` listens on.' },
  { path: 'sandbox.port', env: 'SANDBOX_PORT', parse: port, doc: 'The port `npm run sandbox` listens on.' },
  { path: 'sandbox.ratePerMinute', env: 'SANDBOX_RATE_PER_MINUTE', parse: int(1, 1_000_000), doc: 'The emulator\'s limit per window, counted per (endpoint key, client IP).' },
  { path: 'sandbox.ratePerDay', env: 'SANDBOX_RATE_PER_DAY', parse: int(1, 100_000_000), doc: 'Its day limit.' },
  { path: 'sandbox.rateWindowMs', env: 'SANDBOX_RATE_WINDOW_MS', parse: ms, doc: 'Its window.' },
  { path: 'sandbox.rateDayWindowMs', env: 'SANDBOX_RATE_DAY_WINDOW_MS', parse: ms, doc: 'Its day window.' },
  { path: 'sandbox.rateMode', env: 'SANDBOX_RATE_MODE', parse: oneOf('fixed', 'sliding'), doc: 'How it counts its window (the gateway does not say which it does).' },
  { path: 'sandbox.latencyMs', env: 'SANDBOX_LATENCY_MS', parse: int(0, 600_000), doc: 'Delay before every API answer.' },
  { path: 'sandbox.jitterMs', env: 'SANDBOX_JITTER_MS', parse: int(0, 600_000), doc: 'A uniform random 0 to this added to the delay.' },
  { path: 'sandbox.duplicateFolding', env: 'SANDBOX_DUPLICATE_FOLDING', parse: bool, doc: 'Folds duplicate sales as a merchant\'s key with folding on would ([sandbox](../src/sandbox/README.md#sales)).' },
  { path: 'sandbox.wireFormat', env: 'SANDBOX_WIRE_FORMAT', parse: oneOf('spec', 'wire'), doc: '`wire` answers the real wire\'s forms where the spec differs ([details](../src/sandbox/README.md#wire-format-and-real-clients)).' },
  { path: 'sandbox.batchCloseIntervalMs', env: 'SANDBOX_BATCH_CLOSE_INTERVAL_MS', parse: int(0, 366 * 86_400_000), doc: 'Closes (settles) the open batch once it has been open this long; 0: only when asked.' },
  { path: 'sandbox.batchCloseAt', env: 'SANDBOX_BATCH_CLOSE_AT', parse: str(/^([01]\d|2[0-3]):[0-5]\d$/, '`HH:MM` (24 h)'), doc: 'The merchant\'s daily close: the open batch closes by itself at this time each day, in the sandbox\'s gateway time, UTC (the gateway does not document its zone; [details](../src/sandbox/README.md#payment-lifecycle)), on the sandbox\'s clock (`/test/clock` moves it). Unset: only when asked.' },
  { path: 'sandbox.deletedCardref', env: 'SANDBOX_DELETED_CARDREF', parse: oneOf('refused', 'honoured'), doc: '`refused`: a sale with the cardref of a removed payment method answers error 602; `honoured`: it still charges (the gateway\'s behaviour is undocumented; guarantee 10 holds either way).' },
  { path: 'sandbox.lookupRefunds', env: 'SANDBOX_LOOKUP_REFUNDS', parse: oneOf('none', 'listed'), doc: '`none`: a transaction look-up has no `refunds` list (as the reference and the real capture); `listed`: it lists the sale\'s refunds ([details](../src/sandbox/README.md#payment-lifecycle)).' },
  { path: 'sandbox.lookupAuthAmount', env: 'SANDBOX_LOOKUP_AUTH_AMOUNT', parse: oneOf('listed', 'omitted'), doc: '`listed`: `GET /transactions/{key}` carries `auth_amount` (the spec\'s transaction response); `omitted`: it does not (the reference\'s look-up example and the real capture); tokengate then decides a lost refund from the batch lists and the look-up\'s status only ([details](../src/sandbox/README.md#sources-per-answer-issue-36s-audit)).' },
  { path: 'sandbox.customFields', env: 'SANDBOX_CUSTOM_FIELDS', parse: oneOf('echoed', 'dropped'), doc: '`echoed`: a refund\'s `custom_fields` come back on its look-up and list items (fields set up in the console); `dropped`: the gateway keeps none (not set up).' },
  { path: 'sandbox.webhookUrls', env: 'SANDBOX_WEBHOOK_URLS', parse: list(url('https:', 'http:')), doc: 'Where the emulator posts the gateway\'s signed webhooks, for every transaction, follow-up and batch close ([details](../src/sandbox/README.md#webhooks)).' },
  { path: 'sandbox.webhookSecret', env: 'SANDBOX_WEBHOOK_SECRET', parse: secret(1), doc: 'The signature key it signs them with (unset: no `X-Signature`; [the embedded one\'s key](sandbox.md#the-same-with-npm-start-alone)).' },
  { path: 'sandbox.merchantKey', env: 'SANDBOX_MERCHANT_KEY', parse: str(/^[A-Za-z0-9_-]{4,64}$/, '4 to 64 letters, digits, `_` or `-`'), doc: 'The `merch_key` its webhooks carry (default: the reference\'s example merchant, `5qwnn5b51gnkd1b`).' },
  { path: 'sandbox.refundWithoutAmount', env: 'SANDBOX_REFUND_WITHOUT_AMOUNT', parse: oneOf('left', 'original'), doc: 'What a `refund` without `amount` does after an earlier partial refund (undocumented: "a full refund on the transaction"): `left` refunds what is left; `original` asks for the whole original amount, refused as exceeding once anything was refunded. tokengate always sends an amount.' },
  { path: 'sandbox.returnedCheckRefund', env: 'SANDBOX_RETURNED_CHECK_REFUND', parse: oneOf('refused', 'approved'), doc: 'What a `refund`, `creditvoid` or `refund:adjust` of a returned check does (undocumented): `refused` error 10125 (nothing to give back); `approved` a credit back to the account like a settled check\'s. tokengate refuses such a refund itself (409 `sale_not_refundable`) either way ([details](../src/sandbox/README.md#ach-bank-payments)).' },
  { path: 'sandbox.creditReturns', env: 'SANDBOX_CREDIT_RETURNS', parse: oneOf('never', 'returned', 'failed'), doc: 'Whether a credit to a bank account (a bank payment\'s refund) to a return test account comes back (undocumented: the facts show returns of debits only): `never`; `returned` on the ACH clock as a debit\'s, `ach.returned` about the credit; `failed`, `ach.failed` about it. tokengate marks the credit\'s settlement line returned under both ([details](../src/sandbox/README.md#ach-bank-payments)).' },
  { path: 'sandbox.checkPaymentKey', env: 'SANDBOX_CHECK_PAYMENT_KEY', parse: oneOf('accepted', 'refused'), doc: 'Whether `check:sale` takes a Pay.js check form\'s `payment_key` (undocumented): `accepted` it does (tokengate pays in one call); `refused` it answers error 10213 and the key is taken only by saving a bank method (tokengate saves it first and charges it) ([details](../src/sandbox/README.md#ach-bank-payments)).' },
  { path: 'sandbox.cardSaleCheckKey', env: 'SANDBOX_CARD_SALE_CHECK_KEY', parse: oneOf('refused', 'charged'), doc: 'What a card sale (`cc:sale`, `authonly`) does with a Pay.js check form\'s `payment_key` (undocumented): `refused` it is unknown there (error 10210, the key unspent); `charged` the account is debited as by `check:sale`, with no authorization. tokengate answers 400 naming `body.authorization` either way, and under `charged` voids the debit at once and removes the bank method it saved (`save_payment_method`, or the key sent to add a card) ([details](../src/sandbox/README.md#ach-bank-payments)).' },
  { path: 'sandbox.webhookRetryScheduleMs', env: 'SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS', parse: intList(1, 7 * 86_400_000), doc: 'Its delays between tries of one delivery (unset: the gateway\'s schedule, 72 h).' },
  { path: 'sandbox.webhookDisorderMs', env: 'SANDBOX_WEBHOOK_DISORDER_MS', parse: int(0, 600_000), doc: 'Each event\'s first delivery waits a random 0 to this, so a burst arrives shuffled.' },
  { path: 'sandbox.webhookDuplicatePercent', env: 'SANDBOX_WEBHOOK_DUPLICATE_PERCENT', parse: int(0, 100), doc: 'The chance that an event is delivered a second time.' },
];

/** Settings that may stay unset (null in JSON); every other one must end with a value. */
export const OPTIONAL = new Set(['gateway.webhookSecret', 'gateway.merchantKey', 'events.webhookSecret', 'redis.url', 'redis.sentinelName', 'redis.password', 'gateway.baseUrl', 'jwt.secret', 'jwt.publicKey', 'jwt.jwksUrl', 'cards.payJsUrl', 'sandbox.webhookSecret', 'sandbox.webhookRetryScheduleMs', 'sandbox.batchCloseAt']);
