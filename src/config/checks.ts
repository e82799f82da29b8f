import { publicKeyMismatch } from './jwt-key';
import { deadlineProblem } from './reconcile-deadline';
import type { Config } from './types';
import { isLoopbackUrl, protocolOf } from './urls';

/** Values shipped for development only; production refuses to start with any of them. */
export const DEV_DEFAULTS = {
  gatewayApiKey: '_V87Qtb513Cd3vabM7RC0TbtJWeSo8p7',
  gatewayApiPin: '123456',
  jwtSecret: 'tokengate-dev-secret-do-not-use-in-production',
} as const;

/** The config as far as it parsed: a setting that failed is undefined. */
export type PartialConfig = { [K in keyof Config]?: Config[K] extends object ? Partial<Config[K]> : Config[K] };

export interface CheckContext {
  c: PartialConfig;
  /** Settings given but refused (their own line names them): never named again as required. */
  invalid: ReadonlySet<string>;
  /** Production only: a "required in production" line already spoke. */
  productionMissing: boolean;
}

/**
 * A rule across settings (or one a mode adds), with its reason beside it: load.ts runs them in this order, and
 * the configuration reference (docs/configuration.md, `npm run config:generate`) prints `doc` under the settings
 * named in `settings`, so what is refused and what is documented cannot drift apart.
 */
export interface ConfigCheck {
  /** The environment variables it reads. */
  settings: readonly string[];
  /** `every`: refused in every mode; `production`: refused in production only (development and test accept it). */
  mode: 'every' | 'production';
  /** What it refuses and why, in Markdown as docs/configuration.md prints it (links relative to docs/). */
  doc: string;
  /** The lines naming what is wrong (never a value), or none. */
  problems(ctx: CheckContext): string[];
}

const LOOPBACK_ONLY = 'http: only on a loopback host: 127.0.0.0/8, ::1, localhost';

/** http: on a host other than loopback (the scheme as parsed: `HTTP://` too). */
const plainHttp = (url: string) => protocolOf(url) === 'http:' && !isLoopbackUrl(url);

const when = (condition: unknown, line: string): string[] => (condition ? [line] : []);
const listed = (v: readonly unknown[] | undefined) => (v ?? []).length > 0;

/** "entry 2", "entries 1 and 3", "entries 1, 2 and 4": which items of a list, never their values. */
function entries(positions: readonly number[]): string {
  if (positions.length === 1) return `entry ${positions[0]}`;
  return `entries ${positions.slice(0, -1).join(', ')} and ${positions[positions.length - 1]}`;
}

const jwtOf = (c: PartialConfig) => c.jwt ?? {};
const algorithmsOf = (c: PartialConfig) => jwtOf(c).algorithms ?? [];

/**
 * Settings optional elsewhere but required in production, run before the others and named even when other
 * settings are also bad; a group with a member that was given but invalid is not missing (its own line names it).
 */
export const REQUIRED_IN_PRODUCTION: readonly ConfigCheck[] = [
  {
    settings: ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'],
    mode: 'production',
    doc: 'One Redis topology is required in production: idempotency records, the shared budget and the views live there.',
    problems: ({ c, invalid }) => {
      const r = c.redis ?? {};
      const given = ['redis.url', 'redis.clusterNodes', 'redis.sentinels'].some((p) => invalid.has(p));
      return when(!r.url && !listed(r.clusterNodes) && !listed(r.sentinels) && !given, 'REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (redis.url) is required in production');
    },
  },
  {
    settings: ['GATEWAY_BASE_URL'],
    mode: 'production',
    doc: 'The gateway URL is required in production.',
    problems: ({ c, invalid }) => when(!c.gateway?.baseUrl && !invalid.has('gateway.baseUrl'), 'GATEWAY_BASE_URL (gateway.baseUrl) is required in production'),
  },
  {
    settings: ['JWT_SECRET', 'JWT_PUBLIC_KEY', 'JWT_JWKS_URL'],
    mode: 'production',
    doc: 'A JWT key is required in production: an HS secret, a PEM public key or a JWKS URL.',
    problems: ({ c, invalid }) => {
      const jwt = jwtOf(c);
      const given = ['jwt.secret', 'jwt.publicKey', 'jwt.jwksUrl'].some((p) => invalid.has(p));
      return when(!jwt.secret && !jwt.publicKey && !jwt.jwksUrl && !given, 'JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL is required in production');
    },
  },
];

/** Every check across settings, in the order their lines are printed. */
export const CHECKS: readonly ConfigCheck[] = [
  {
    settings: ['JWT_ALGORITHMS'],
    mode: 'every',
    doc: 'HS* and asymmetric algorithms are never mixed: mixing invites HS/RS key confusion (a public key used as an HMAC secret).',
    problems: ({ c }) => {
      const algorithms = algorithmsOf(c);
      return when(algorithms.some((a) => a.startsWith('HS')) && algorithms.some((a) => !a.startsWith('HS')), 'JWT_ALGORITHMS (jwt.algorithms) must not mix HS* with asymmetric algorithms');
    },
  },
  {
    settings: ['JWT_ALGORITHMS', 'JWT_SECRET', 'JWT_PUBLIC_KEY', 'JWT_JWKS_URL'],
    mode: 'every',
    doc: 'HS* algorithms need `JWT_SECRET`; asymmetric ones need `JWT_PUBLIC_KEY` or `JWT_JWKS_URL`.',
    problems: ({ c, invalid, productionMissing }) => {
      const jwt = jwtOf(c);
      const algorithms = algorithmsOf(c);
      // In production with no key at all, REQUIRED_IN_PRODUCTION has named it already.
      if (!jwt.secret && !jwt.publicKey && !jwt.jwksUrl && productionMissing) return [];
      return [
        ...when(algorithms.some((a) => a.startsWith('HS')) && !jwt.secret && !invalid.has('jwt.secret'), 'JWT_SECRET (jwt.secret) is required for HS* algorithms'),
        ...when(
          algorithms.some((a) => !a.startsWith('HS')) && !jwt.publicKey && !jwt.jwksUrl && !invalid.has('jwt.publicKey') && !invalid.has('jwt.jwksUrl'),
          'JWT_PUBLIC_KEY or JWT_JWKS_URL (jwt.publicKey/jwt.jwksUrl) is required for asymmetric algorithms',
        ),
      ];
    },
  },
  {
    settings: ['JWT_PUBLIC_KEY', 'JWT_ALGORITHMS'],
    mode: 'every',
    doc: '`JWT_PUBLIC_KEY` must fit at least one algorithm of `JWT_ALGORITHMS` (RSA for RS*/PS*, EC on the matching curve for ES*): otherwise every token would fail.',
    problems: ({ c }) => {
      const jwt = jwtOf(c);
      const mismatch = jwt.publicKey && !jwt.jwksUrl ? publicKeyMismatch(jwt.publicKey, algorithmsOf(c)) : undefined;
      return mismatch ? [mismatch] : [];
    },
  },
  {
    settings: ['PORT', 'ADMIN_PORT'],
    mode: 'every',
    doc: '`ADMIN_PORT` must differ from `PORT` (0, any free port, may repeat).',
    problems: ({ c }) => when(c.port !== undefined && c.port !== 0 && c.port === c.adminPort, 'ADMIN_PORT (adminPort) must differ from PORT'),
  },
  {
    settings: ['LIMITER_SALE_RESERVED_SLOTS', 'GATEWAY_RATE_PER_MINUTE'],
    mode: 'every',
    doc: '`LIMITER_SALE_RESERVED_SLOTS` must be below `GATEWAY_RATE_PER_MINUTE`: reads need at least one slot a window.',
    problems: ({ c }) => {
      const reserved = c.limiter?.saleReservedSlots;
      const perMinute = c.gateway?.ratePerMinute;
      return when(reserved !== undefined && perMinute !== undefined && reserved >= perMinute, 'LIMITER_SALE_RESERVED_SLOTS (limiter.saleReservedSlots) must be below GATEWAY_RATE_PER_MINUTE');
    },
  },
  {
    settings: ['LIMITER_READ_DAY_SHARE', 'LIMITER_BACKGROUND_DAY_SHARE', 'GATEWAY_RATE_PER_DAY'],
    mode: 'every',
    doc: 'Each day share times `GATEWAY_RATE_PER_DAY` must allow at least one call a day: pacing to less would refuse reads or background work for ever.',
    problems: ({ c }) => {
      const perDay = c.gateway?.ratePerDay;
      return ([['readDayShare', 'LIMITER_READ_DAY_SHARE'], ['backgroundDayShare', 'LIMITER_BACKGROUND_DAY_SHARE']] as const).flatMap(([key, env]) => {
        const dayShare = c.limiter?.[key];
        return when(dayShare !== undefined && perDay !== undefined && Math.floor(dayShare * perDay) < 1, `${env} (limiter.${key}) times GATEWAY_RATE_PER_DAY must allow at least one call a day`);
      });
    },
  },
  {
    settings: ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'],
    mode: 'every',
    doc: 'One Redis topology at a time: `REDIS_URL`, `REDIS_CLUSTER_NODES` or `REDIS_SENTINELS`.',
    problems: ({ c }) => {
      const r = c.redis ?? {};
      const topologies = [r.url && 'REDIS_URL', listed(r.clusterNodes) && 'REDIS_CLUSTER_NODES', listed(r.sentinels) && 'REDIS_SENTINELS'].filter(Boolean);
      return when(topologies.length > 1, `${topologies.join(' and ')} are ${topologies.length === 2 ? 'both' : 'all'} set: keep one`);
    },
  },
  {
    settings: ['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME'],
    mode: 'every',
    doc: '`REDIS_SENTINELS` and `REDIS_SENTINEL_NAME` go together.',
    problems: ({ c }) => {
      const r = c.redis ?? {};
      return [
        ...when(listed(r.sentinels) && !r.sentinelName, 'REDIS_SENTINEL_NAME (redis.sentinelName) is required with REDIS_SENTINELS'),
        ...when(r.sentinelName && !listed(r.sentinels), 'REDIS_SENTINEL_NAME (redis.sentinelName) needs REDIS_SENTINELS'),
      ];
    },
  },
  {
    settings: ['REDIS_WRITE_REPLICAS', 'REDIS_CLUSTER_NODES'],
    mode: 'every',
    doc: '`REDIS_WRITE_REPLICAS` waits on one connection to one master (`REDIS_URL` or `REDIS_SENTINELS`); a Cluster spreads a write\'s keys over masters.',
    problems: ({ c }) => {
      const r = c.redis ?? {};
      return when(listed(r.clusterNodes) && (r.writeReplicas ?? 0) > 0, 'REDIS_WRITE_REPLICAS (redis.writeReplicas) works with REDIS_URL or REDIS_SENTINELS, not REDIS_CLUSTER_NODES');
    },
  },
  {
    settings: ['REDIS_URL', 'REDIS_PASSWORD', 'REDIS_TLS'],
    mode: 'every',
    doc: "A single node's password and TLS live in its URL (`rediss://`): `REDIS_PASSWORD` and `REDIS_TLS` are for Cluster or Sentinel.",
    problems: ({ c }) => {
      const r = c.redis ?? {};
      return [
        ...when(r.url && r.password, "REDIS_PASSWORD (redis.password) is for Cluster or Sentinel: put a single node's password in REDIS_URL"),
        ...when(r.url && r.tls, 'REDIS_TLS (redis.tls) is for Cluster or Sentinel: use a rediss:// REDIS_URL'),
      ];
    },
  },
  {
    settings: ['EVENTS_WEBHOOK_URLS', 'EVENTS_WEBHOOK_SECRET'],
    mode: 'every',
    doc: '`EVENTS_WEBHOOK_URLS` needs `EVENTS_WEBHOOK_SECRET`: receivers verify every delivery.',
    problems: ({ c, invalid }) =>
      when(listed(c.events?.webhookUrls) && !c.events?.webhookSecret && !invalid.has('events.webhookSecret'), 'EVENTS_WEBHOOK_SECRET (events.webhookSecret) is required when EVENTS_WEBHOOK_URLS is set'),
  },
  {
    settings: ['GATEWAY_BASE_URL', 'GATEWAY_ALLOW_INSECURE'],
    mode: 'production',
    doc: '`GATEWAY_BASE_URL` must be `https:` unless `GATEWAY_ALLOW_INSECURE=true`, which allows `http:` on any host: meant for loopback tests and the sandbox overlay\'s in-cluster emulator, never a real gateway (a listener on the path could change what tokengate trusts).',
    problems: ({ c }) => {
      const g = c.gateway ?? {};
      return when(g.baseUrl && protocolOf(g.baseUrl) === 'http:' && !g.allowInsecure, 'GATEWAY_BASE_URL (gateway.baseUrl) must use https: in production (GATEWAY_ALLOW_INSECURE=true for loopback tests only)');
    },
  },
  {
    settings: ['JWT_JWKS_URL'],
    mode: 'production',
    doc: '`JWT_JWKS_URL` must be `https:` unless its host is loopback (`127.0.0.0/8`, `::1`, `localhost`: local test issuers). No flag widens this, `GATEWAY_ALLOW_INSECURE` included: a key injected into the JWKS would let its holder sign in as any caller.',
    problems: ({ c }) => {
      const jwks = jwtOf(c).jwksUrl;
      return when(jwks && plainHttp(jwks), `JWT_JWKS_URL (jwt.jwksUrl) must use https: in production (${LOOPBACK_ONLY})`);
    },
  },
  {
    settings: ['PAYJS_URL'],
    mode: 'production',
    doc: '`PAYJS_URL` must be `https:` unless its host is loopback (issue 31). Browsers load the card form\'s script from it: fetched over http, anyone on the path can swap the script and read every card typed into it, the one thing tokengate exists to prevent. The refusal says to give the `https:` URL or to unset it; unset, Pay.js comes from the gateway\'s host, which follows `GATEWAY_BASE_URL`\'s rule (so only the sandbox overlay\'s `GATEWAY_ALLOW_INSECURE` emulator serves it over http). No flag widens this.',
    problems: ({ c }) => {
      const payJsUrl = c.cards?.payJsUrl;
      return when(
        payJsUrl && plainHttp(payJsUrl),
        `PAYJS_URL (cards.payJsUrl) must use https: in production, or be unset to load Pay.js from the gateway's host (${LOOPBACK_ONLY}): a card form's script fetched over http can be swapped in transit`,
      );
    },
  },
  {
    settings: ['CORS_ORIGINS'],
    mode: 'production',
    doc: 'Each `CORS_ORIGINS` entry must be `https:` unless its host is loopback (local frontends on `http://localhost:3000` and the like). A listed origin\'s pages call the API with shoppers\' tokens; served over http they can be rewritten in transit to do anything those tokens allow. The refusal names the entries by position (`entry 2`), never their values. No flag widens this.',
    problems: ({ c }) => {
      const httpOrigins = (c.http?.corsOrigins ?? []).flatMap((origin, i) => (plainHttp(origin) ? [i + 1] : []));
      return when(
        httpOrigins.length > 0,
        `CORS_ORIGINS (http.corsOrigins) ${entries(httpOrigins)} must use https: in production, or be removed (${LOOPBACK_ONLY}): a page served over http can be rewritten in transit to call the API with a shopper's token`,
      );
    },
  },
  {
    settings: ['RECONCILE_DEADLINE_MS', 'RECONCILE_MAX_PROCESSING_MS', 'RECONCILE_INTERVAL_MS', 'RECONCILE_RETRY_MS'],
    mode: 'production',
    doc:
      '`RECONCILE_DEADLINE_MS` must be at least what the reconciler needs to prove a write absent while the gateway\'s lists answer, `RECONCILE_MAX_PROCESSING_MS + 1.25 × RECONCILE_INTERVAL_MS + RECONCILE_RETRY_MS` ' +
      '(126,250 ms with the defaults; each term: [the deadline](../src/reconcile/README.md#the-deadline)). Shorter, writes never sent stay 409 `outcome_unknown` past the deadline (issue 28: 20 s against the 120 s default). ' +
      'The line names both settings and the minimum: raise `RECONCILE_DEADLINE_MS` (lower `RECONCILE_MAX_PROCESSING_MS` only if the gateway records every write sooner: below that, a slow write could be released and charged twice).',
    problems: ({ c }) => {
      const deadline = deadlineProblem(c.reconcile);
      return deadline ? [deadline] : [];
    },
  },
  {
    settings: ['GATEWAY_API_KEY', 'GATEWAY_API_PIN', 'JWT_SECRET'],
    mode: 'production',
    doc: 'No development default: the sandbox\'s documented example credentials and the shipped dev JWT secret are refused.',
    problems: ({ c }) => [
      ...when(c.gateway?.apiKey?.reveal() === DEV_DEFAULTS.gatewayApiKey, 'GATEWAY_API_KEY (gateway.apiKey) is the development default'),
      ...when(c.gateway?.apiPin?.reveal() === DEV_DEFAULTS.gatewayApiPin, 'GATEWAY_API_PIN (gateway.apiPin) is the development default'),
      ...when(jwtOf(c).secret?.reveal() === DEV_DEFAULTS.jwtSecret, 'JWT_SECRET (jwt.secret) is the development default'),
    ],
  },
  {
    settings: ['JWT_SECRET'],
    mode: 'production',
    doc: '`JWT_SECRET` must be at least 32 characters (RFC 7518 §3.2: at least the hash\'s size for HS256).',
    problems: ({ c }) => {
      const secret = jwtOf(c).secret;
      return when(secret && secret.length < 32, 'JWT_SECRET (jwt.secret) must be at least 32 characters in production');
    },
  },
];

/** The lines of `checks` that apply in `env`, in order. */
export function runChecks(checks: readonly ConfigCheck[], env: string | undefined, ctx: CheckContext): string[] {
  return checks.filter((check) => check.mode === 'every' || env === 'production').flatMap((check) => check.problems(ctx));
}
