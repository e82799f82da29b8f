import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { publicKeyMismatch } from './jwt-key';
import { InvalidSetting } from './parse';
import { deadlineProblem } from './reconcile-deadline';
import { OPTIONAL, SETTINGS, type Setting } from './schema';
import { Secret } from './secret';
import type { Config, NodeEnv } from './types';
import { isLoopbackUrl, protocolOf } from './urls';

/** Boot-time configuration failure; `problems` holds one line per bad setting, each naming it. */
export class ConfigError extends Error {
  readonly code = 'config_invalid';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Values shipped for development only; production refuses to start with any of them. */
export const DEV_DEFAULTS = {
  gatewayApiKey: '_V87Qtb513Cd3vabM7RC0TbtJWeSo8p7',
  gatewayApiPin: '123456',
  jwtSecret: 'tokengate-dev-secret-do-not-use-in-production',
} as const;

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Folder with default.json and <NODE_ENV>.json. */
  dir?: string;
  /** Programmatic overrides (tests), applied after the environment, by setting path. */
  overrides?: Record<string, unknown>;
}

export const DEFAULT_CONFIG_DIR = path.resolve(__dirname, '..', '..', 'config');

type Json = Record<string, unknown>;

function readJson(file: string, problems: string[]): Json {
  if (!existsSync(file)) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Json;
    problems.push(`${path.basename(file)}: must hold a JSON object`);
  } catch {
    problems.push(`${path.basename(file)}: is not valid JSON`);
  }
  return {};
}

function flatten(obj: Json, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  for (const [key, value] of Object.entries(obj)) {
    const p = prefix ? `${prefix}.${key}` : key;
    if (value && typeof value === 'object' && !Array.isArray(value)) flatten(value as Json, p, out);
    else out.set(p, value);
  }
  return out;
}

function setPath(target: Json, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Json;
  node[parts[parts.length - 1] as string] = value;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Secret) && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The environment's value; a value given but unusable is named in `problems` and its path added to `invalid`. */
function rawFromEnv(setting: Setting, env: NodeJS.ProcessEnv, problems: string[], invalid: Set<string>): unknown {
  const direct = env[setting.env];
  const fileVar = `${setting.env}_FILE`;
  const file = setting.file ? env[fileVar] : undefined;
  if (direct !== undefined && direct !== '' && file) {
    problems.push(`${setting.env} and ${fileVar} are both set: keep one`);
    invalid.add(setting.path);
    return undefined;
  }
  if (file) {
    try {
      return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch {
      problems.push(`${fileVar} (${setting.path}): cannot read the file it names`);
      invalid.add(setting.path);
      return undefined;
    }
  }
  return direct === '' ? undefined : direct;
}

/**
 * Builds the one configuration object: config/default.json, then config/<NODE_ENV>.json, then the
 * environment, then `overrides`. Every problem is collected and thrown together, each naming its setting.
 */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const dir = options.dir ?? DEFAULT_CONFIG_DIR;
  const problems: string[] = [];

  const nodeEnv = (env.NODE_ENV || 'development') as NodeEnv;
  const layers = [readJson(path.join(dir, 'default.json'), problems)];
  if (['development', 'test', 'production'].includes(nodeEnv)) layers.push(readJson(path.join(dir, `${nodeEnv}.json`), problems));

  const known = new Set(SETTINGS.map((s) => s.path));
  const raw = new Map<string, unknown>();
  for (const layer of layers) {
    for (const [key, value] of flatten(layer)) {
      if (key.startsWith('$')) continue; // "$comment" keys document the files
      if (!known.has(key)) problems.push(`config key "${key}" is unknown`);
      else raw.set(key, value);
    }
  }

  const out: Json = {};
  // Settings given a value that was named as invalid: never named again as missing (one line per setting).
  const invalid = new Set<string>();
  for (const setting of SETTINGS) {
    const fromEnv = rawFromEnv(setting, env, problems, invalid);
    if (invalid.has(setting.path)) {
      setPath(out, setting.path, undefined);
      continue;
    }
    let value = options.overrides && setting.path in options.overrides ? options.overrides[setting.path] : fromEnv ?? raw.get(setting.path);
    if (setting.path === 'env') value = nodeEnv;
    if (value === undefined || value === null) {
      if (!OPTIONAL.has(setting.path)) problems.push(`${setting.env} (${setting.path}) is required`);
      setPath(out, setting.path, undefined);
      continue;
    }
    try {
      setPath(out, setting.path, setting.parse(value));
    } catch (err) {
      if (!(err instanceof InvalidSetting)) throw err;
      // The reason never repeats the value: it may be a credential.
      problems.push(`${setting.env} (${setting.path}) ${err.message}`);
      invalid.add(setting.path);
    }
  }
  const missing = nodeEnv === 'production' ? missingInProduction(out, invalid) : [];
  // The checks across settings run on whatever parsed, so one start names every problem (contract: one line
  // each), not the first pass's and then, once those are fixed, the rest.
  problems.push(...missing, ...crossChecks(out as PartialConfig, missing.length > 0, invalid));
  if (problems.length > 0) throw new ConfigError(problems);
  // Safe: every path of Config is in SETTINGS and was parsed above (test/unit/config.test.ts checks the shape).
  return deepFreeze(out as unknown as Config);
}

/** The config as far as it parsed: a setting that failed is undefined. */
type PartialConfig = { [K in keyof Config]?: Config[K] extends object ? Partial<Config[K]> : Config[K] };

/**
 * Settings optional elsewhere but required in production, named even when other settings are also bad; a group
 * with a member that was given but invalid is not missing (its own line already names it).
 */
function missingInProduction(out: Json, invalid: ReadonlySet<string>): string[] {
  const redis = (out.redis ?? {}) as Json;
  const gateway = (out.gateway ?? {}) as Json;
  const jwt = (out.jwt ?? {}) as Json;
  const problems: string[] = [];
  const listed = (v: unknown) => Array.isArray(v) && v.length > 0;
  const given = (...paths: string[]) => paths.some((p) => invalid.has(p));
  if (!redis.url && !listed(redis.clusterNodes) && !listed(redis.sentinels) && !given('redis.url', 'redis.clusterNodes', 'redis.sentinels')) problems.push('REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (redis.url) is required in production');
  if (!gateway.baseUrl && !given('gateway.baseUrl')) problems.push('GATEWAY_BASE_URL (gateway.baseUrl) is required in production');
  if (!jwt.secret && !jwt.publicKey && !jwt.jwksUrl && !given('jwt.secret', 'jwt.publicKey', 'jwt.jwksUrl')) problems.push('JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL is required in production');
  return problems;
}

/**
 * Checks across settings, each run when its settings parsed; `productionMissing`: missingInProduction spoke;
 * `invalid`: settings given but refused (a key named bad is not named again as required).
 */
function crossChecks(c: PartialConfig, productionMissing: boolean, invalid: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const jwt = c.jwt ?? {};
  const algorithms = jwt.algorithms ?? [];
  const hs = algorithms.filter((a) => a.startsWith('HS'));
  const asymmetric = algorithms.filter((a) => !a.startsWith('HS'));
  const noKey = !jwt.secret && !jwt.publicKey && !jwt.jwksUrl; // in production, missingInProduction names it
  // Mixing families invites HS/RS confusion (a public key used as an HMAC secret).
  if (hs.length > 0 && asymmetric.length > 0) problems.push('JWT_ALGORITHMS (jwt.algorithms) must not mix HS* with asymmetric algorithms');
  if (!(noKey && productionMissing)) {
    if (hs.length > 0 && !jwt.secret && !invalid.has('jwt.secret')) problems.push('JWT_SECRET (jwt.secret) is required for HS* algorithms');
    if (asymmetric.length > 0 && !jwt.publicKey && !jwt.jwksUrl && !invalid.has('jwt.publicKey') && !invalid.has('jwt.jwksUrl')) problems.push('JWT_PUBLIC_KEY or JWT_JWKS_URL (jwt.publicKey/jwt.jwksUrl) is required for asymmetric algorithms');
  }
  const mismatch = jwt.publicKey && !jwt.jwksUrl ? publicKeyMismatch(jwt.publicKey, algorithms) : undefined;
  if (mismatch) problems.push(mismatch);
  // Port 0 asks the OS for any free port, so two zeros never collide.
  if (c.port !== undefined && c.port !== 0 && c.port === c.adminPort) problems.push('ADMIN_PORT (adminPort) must differ from PORT');
  const reserved = c.limiter?.saleReservedSlots;
  const perMinute = c.gateway?.ratePerMinute;
  if (reserved !== undefined && perMinute !== undefined && reserved >= perMinute) problems.push('LIMITER_SALE_RESERVED_SLOTS (limiter.saleReservedSlots) must be below GATEWAY_RATE_PER_MINUTE');
  // Day pacing to less than one call a day would refuse reads or background work for ever.
  const perDay = c.gateway?.ratePerDay;
  for (const [key, env] of [['readDayShare', 'LIMITER_READ_DAY_SHARE'], ['backgroundDayShare', 'LIMITER_BACKGROUND_DAY_SHARE']] as const) {
    const dayShare = c.limiter?.[key];
    if (dayShare !== undefined && perDay !== undefined && Math.floor(dayShare * perDay) < 1) problems.push(`${env} (limiter.${key}) times GATEWAY_RATE_PER_DAY must allow at least one call a day`);
  }
  if (c.redis) problems.push(...redisChecks(c.redis));
  if ((c.events?.webhookUrls ?? []).length > 0 && !c.events?.webhookSecret && !invalid.has('events.webhookSecret')) problems.push('EVENTS_WEBHOOK_SECRET (events.webhookSecret) is required when EVENTS_WEBHOOK_URLS is set');

  if (c.env !== 'production') return problems;
  const gateway = c.gateway ?? {};
  // Plain http in production: the gateway only by GATEWAY_ALLOW_INSECURE (loopback tests, the sandbox overlay's
  // in-cluster emulator); a JWKS only on a loopback host, whatever that flag says (a key injected on the path
  // would sign any caller in).
  if (gateway.baseUrl && protocolOf(gateway.baseUrl) === 'http:' && !gateway.allowInsecure) problems.push('GATEWAY_BASE_URL (gateway.baseUrl) must use https: in production (GATEWAY_ALLOW_INSECURE=true for loopback tests only)');
  if (jwt.jwksUrl && plainHttp(jwt.jwksUrl)) problems.push(`JWT_JWKS_URL (jwt.jwksUrl) must use https: in production (${LOOPBACK_ONLY})`);
  // Issue 31: browsers load the card form's script from PAYJS_URL (swapped in transit, it reads every card typed
  // into it), and CORS_ORIGINS are the pages trusted to call the API with shoppers' tokens. No flag widens
  // either; unset, PAYJS_URL is the gateway's origin, which follows GATEWAY_BASE_URL's rule above.
  const payJsUrl = c.cards?.payJsUrl;
  if (payJsUrl && plainHttp(payJsUrl)) problems.push(`PAYJS_URL (cards.payJsUrl) must use https: in production, or be unset to load Pay.js from the gateway's host (${LOOPBACK_ONLY}): a card form's script fetched over http can be swapped in transit`);
  const httpOrigins = (c.http?.corsOrigins ?? []).flatMap((origin, i) => (plainHttp(origin) ? [i + 1] : []));
  if (httpOrigins.length > 0) problems.push(`CORS_ORIGINS (http.corsOrigins) ${entries(httpOrigins)} must use https: in production, or be removed (${LOOPBACK_ONLY}): a page served over http can be rewritten in transit to call the API with a shopper's token`);
  const deadline = deadlineProblem(c.reconcile);
  if (deadline) problems.push(deadline);
  if (gateway.apiKey?.reveal() === DEV_DEFAULTS.gatewayApiKey) problems.push('GATEWAY_API_KEY (gateway.apiKey) is the development default');
  if (gateway.apiPin?.reveal() === DEV_DEFAULTS.gatewayApiPin) problems.push('GATEWAY_API_PIN (gateway.apiPin) is the development default');
  if (jwt.secret?.reveal() === DEV_DEFAULTS.jwtSecret) problems.push('JWT_SECRET (jwt.secret) is the development default');
  if (jwt.secret && jwt.secret.length < 32) problems.push('JWT_SECRET (jwt.secret) must be at least 32 characters in production');
  return problems;
}

const LOOPBACK_ONLY = 'http: only on a loopback host: 127.0.0.0/8, ::1, localhost';

/** http: on a host other than loopback (the scheme as parsed: `HTTP://` too). */
const plainHttp = (url: string) => protocolOf(url) === 'http:' && !isLoopbackUrl(url);

/** "entry 2", "entries 1 and 3", "entries 1, 2 and 4": which items of a list, never their values. */
function entries(positions: readonly number[]): string {
  if (positions.length === 1) return `entry ${positions[0]}`;
  return `entries ${positions.slice(0, -1).join(', ')} and ${positions[positions.length - 1]}`;
}

/**
 * What a development or test start should still say: settings production would refuse because they cannot
 * both hold (the reconcile deadline). Logged as warnings; the service starts.
 */
export function configWarnings(c: Config): string[] {
  if (c.env === 'production') return [];
  const deadline = deadlineProblem(c.reconcile);
  return deadline ? [deadline] : [];
}

/** One topology at a time; the credentials and TLS of a single node live in its URL. */
function redisChecks(r: Partial<Config['redis']>): string[] {
  const problems: string[] = [];
  const clusterNodes = r.clusterNodes ?? [];
  const sentinels = r.sentinels ?? [];
  const topologies = [r.url && 'REDIS_URL', clusterNodes.length > 0 && 'REDIS_CLUSTER_NODES', sentinels.length > 0 && 'REDIS_SENTINELS'].filter(Boolean);
  if (topologies.length > 1) problems.push(`${topologies.join(' and ')} are ${topologies.length === 2 ? 'both' : 'all'} set: keep one`);
  if (sentinels.length > 0 && !r.sentinelName) problems.push('REDIS_SENTINEL_NAME (redis.sentinelName) is required with REDIS_SENTINELS');
  if (r.sentinelName && sentinels.length === 0) problems.push('REDIS_SENTINEL_NAME (redis.sentinelName) needs REDIS_SENTINELS');
  if (r.url && r.password) problems.push('REDIS_PASSWORD (redis.password) is for Cluster or Sentinel: put a single node\'s password in REDIS_URL');
  if (r.url && r.tls) problems.push('REDIS_TLS (redis.tls) is for Cluster or Sentinel: use a rediss:// REDIS_URL');
  return problems;
}
