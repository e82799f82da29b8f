import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { CHECKS, DEV_DEFAULTS, REQUIRED_IN_PRODUCTION, runChecks, type PartialConfig } from './checks';
import { InvalidSetting } from './parse';
import { deadlineProblem } from './reconcile-deadline';
import { OPTIONAL, SETTINGS, type Setting } from './schema';
import { Secret } from './secret';
import type { Config, NodeEnv } from './types';

/** Boot-time configuration failure; `problems` holds one line per bad setting, each naming it. */
export class ConfigError extends Error {
  readonly code = 'config_invalid';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export { DEV_DEFAULTS };

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
  // Production's required settings first; then the checks across settings, run on whatever parsed, so one start
  // names every problem (contract: one line each), not the first pass's and then, once those are fixed, the rest.
  const c = out as PartialConfig;
  const missing = runChecks(REQUIRED_IN_PRODUCTION, nodeEnv, { c, invalid, productionMissing: false });
  problems.push(...missing, ...runChecks(CHECKS, c.env, { c, invalid, productionMissing: missing.length > 0 }));
  if (problems.length > 0) throw new ConfigError(problems);
  // Safe: every path of Config is in SETTINGS and was parsed above (test/unit/config.test.ts checks the shape).
  return deepFreeze(out as unknown as Config);
}

/**
 * What a development or test start should still say: settings production would refuse because they cannot
 * both hold (the reconcile deadline). Logged as warnings; the service starts.
 */
export function configWarnings(c: Config): string[] {
  // Production: webhooks on with no merchant named take any signed event as this merchant's (issue 36, item 3).
  const merchant = c.gateway.webhookSecret && !c.gateway.merchantKey
    ? ['GATEWAY_WEBHOOK_SECRET is set without GATEWAY_MERCHANT_KEY: a signed webhook of any merchant account is applied as this one\'s']
    : [];
  if (c.env === 'production') return merchant;
  const deadline = deadlineProblem(c.reconcile);
  return deadline ? [deadline, ...merchant] : merchant;
}
