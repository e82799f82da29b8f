import { Secret } from './secret';

/**
 * What a parser accepts, in words, for the configuration reference (docs/configuration.md, written by
 * `npm run config:generate`): its bounds when it takes a number, and whether its value is a secret (the reference
 * then never prints a default).
 */
export interface Accepts {
  text: string;
  min?: number;
  max?: number;
  secret?: boolean;
}

/** A setting's parser: takes the raw value (JSON value or env string), returns the typed value or throws a reason. */
export type Parser<T> = ((raw: unknown) => T) & { readonly accepts: Accepts };

/** A parser with what it accepts written beside it, so the reference cannot describe other bounds than it checks. */
export const parser = <T>(accepts: Accepts, parse: (raw: unknown) => T): Parser<T> => Object.assign(parse, { accepts });

export class InvalidSetting extends Error {}

const fail = (reason: string): never => {
  throw new InvalidSetting(reason);
};

export const int = (min: number, max = Number.MAX_SAFE_INTEGER): Parser<number> =>
  parser({ text: 'a whole number', min, max }, (raw) => {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n)) return fail('must be a whole number');
    if (n < min || n > max) return fail(`must be between ${min} and ${max}`);
    return n;
  });

/** A share: a decimal number in (0, 1] (`0.5`, `.25`, `1`). */
export const share: Parser<number> = parser({ text: 'a share above 0 and at most 1 (`0.5`, `.25`, `1`)' }, (raw) => {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^(0|1)?(\.\d+)?$/.test(raw.trim()) && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n) || n <= 0 || n > 1) return fail('must be a share above 0 and at most 1 (e.g. 0.5)');
  return n;
});

export const bool: Parser<boolean> = parser({ text: '`true` or `false`' }, (raw) => {
  if (typeof raw === 'boolean') return raw;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  return fail('must be true or false');
});

/** `what`: the pattern in words, for the reference (a regular expression reads badly in a table). */
export const str = (pattern?: RegExp, what = 'non-empty text'): Parser<string> =>
  parser({ text: what }, (raw) => {
    if (typeof raw !== 'string' || raw.length === 0) return fail('must be a non-empty string');
    if (pattern && !pattern.test(raw)) return fail('has an invalid format');
    return raw;
  });

export const oneOf = <T extends string>(...values: T[]): Parser<T> =>
  parser({ text: `one of ${values.map((v) => `\`${v}\``).join(', ')}` }, (raw) => (values.includes(raw as T) ? (raw as T) : fail(`must be one of ${values.join(', ')}`)));

/** Comma-separated in the environment, an array in JSON. Empty items are dropped. */
export const list = (item: Parser<string> = str()): Parser<readonly string[]> =>
  parser({ text: `a comma-separated list, each ${item.accepts.text}` }, (raw) => {
    const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : fail('must be a list');
    return items.map((v) => (typeof v === 'string' ? v.trim() : v)).filter((v) => v !== '').map(item);
  });

/** Whole numbers, comma-separated in the environment, an array in JSON (a retry schedule). */
export const intList = (min: number, max: number): Parser<readonly number[]> =>
  parser({ text: 'a comma-separated list of whole numbers', min, max }, (raw) => {
    const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',').map((v) => v.trim()).filter((v) => v !== '') : fail('must be a list');
    return items.map((v: unknown) => int(min, max)(v));
  });

export const secret = (minLength = 1): Parser<Secret> =>
  parser({ text: `a secret of at least ${minLength} character${minLength === 1 ? '' : 's'}`, secret: true }, (raw) => {
    if (raw instanceof Secret) return raw;
    if (typeof raw !== 'string' || raw.length < minLength) return fail(`must be at least ${minLength} characters`);
    return new Secret(raw);
  });

export const url = (...protocols: string[]): Parser<string> =>
  parser({ text: `a URL (${protocols.map((p) => `\`${p}\``).join(' or ')})` }, (raw) => {
    if (typeof raw !== 'string') return fail('must be a URL');
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      return fail('must be a URL');
    }
    if (!protocols.includes(parsed.protocol)) return fail(`must use ${protocols.join(' or ')}`);
    return raw;
  });

export const secretUrl = (...protocols: string[]): Parser<Secret> => {
  const plain = url(...protocols);
  return parser({ text: `${plain.accepts.text}, a secret (it may hold a password)`, secret: true }, (raw) => new Secret(plain(raw instanceof Secret ? raw.reveal() : raw)));
};

/**
 * EVENTS_WEBHOOK_SECRET: one or more Standard Webhooks secrets separated by spaces (rotation), each `whsec_`
 * followed by base64 of 24 to 64 bytes. The reason names which entry, never its value.
 */
export const webhookSecrets: Parser<Secret> = parser({ text: 'one or more `whsec_` + base64 of 24 to 64 bytes, separated by spaces', secret: true }, (raw) => {
  const text = raw instanceof Secret ? raw.reveal() : raw;
  if (typeof text !== 'string' || text.trim() === '') return fail('must be one or more whsec_ secrets separated by spaces');
  text.trim().split(/\s+/).forEach((entry, i) => {
    const body = entry.startsWith('whsec_') ? entry.slice('whsec_'.length) : undefined;
    const bytes = body !== undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(body) && body.length % 4 === 0 ? Buffer.from(body, 'base64').length : 0;
    if (bytes < 24 || bytes > 64) fail(`entry ${i + 1} must be whsec_ followed by base64 of 24 to 64 bytes`);
  });
  return new Secret(text.trim());
});
