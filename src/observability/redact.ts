import { isBankLikeName, redactBankNumbers } from '../bank/bank-data';
import { MIN_PAN_DIGITS, redactPans } from '../card/pan';
import { Secret } from '../config/secret';

export const REDACTED = '[redacted]';

/** Field names whose values never reach output, whatever they hold (compared lowercased, without - and _). */
const SENSITIVE_KEYS = new Set([
  'authorization', 'proxyauthorization', 'cookie', 'setcookie',
  'cvc', 'cvv', 'cvv2', 'cvc2', 'cid', 'pin', 'apipin', 'apihash', 'hash', 'password', 'passwd',
  'secret', 'jwtsecret', 'clientsecret', 'token', 'accesstoken', 'refreshtoken', 'idtoken', 'jwt', 'apikey',
  'creditcard', 'cardnumber', 'ccnum', 'pan', 'expiration', 'magstripe', 'track1', 'track2',
]);

// Credentials recognisable by shape wherever they appear inside a string.
const SHAPES: readonly RegExp[] = [
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, // Authorization header values
  /s2\/[^\s"']*\/[0-9a-f]{64}/gi, // gateway API hash
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, // JWTs (header.payload.signature)
];

export function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

/** Credentials and card fields by name, and bank fields (`routing`, `account_number`, `check`, …: src/bank/bank-data.ts). */
export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEYS.has(normaliseKey(key)) || isBankLikeName(key);
}

/**
 * Scrubs one string: card numbers (src/card/pan.ts: a network's range and Luhn, any separator form), a routing
 * number beside an account number (src/bank/bank-data.ts), credential shapes, and the literal values of registered secrets (the PIN, API key and JWT secret of this
 * process).
 */
export function redactString(text: string, literals: readonly string[] = []): string {
  let out = redactBankNumbers(redactPans(text));
  for (const shape of SHAPES) out = out.replace(shape, REDACTED);
  for (const literal of literals) if (literal && out.includes(literal)) out = out.split(literal).join(REDACTED);
  return out;
}

/** Deep copy of a log payload with every sensitive field and value scrubbed. Cycles and depth are bounded. */
export function redactValue(value: unknown, literals: readonly string[] = [], depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactString(value, literals);
  if (typeof value === 'number' || typeof value === 'bigint') {
    const s = String(value);
    return s.length >= MIN_PAN_DIGITS && redactString(s, literals) !== s ? REDACTED : value;
  }
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Secret) return REDACTED;
  if (depth > 8) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (value instanceof Error) {
    return { name: value.name, message: redactString(value.message, literals), code: (value as { code?: unknown }).code, stack: value.stack ? redactString(value.stack, literals) : undefined };
  }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, literals, depth + 1, seen));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const safeKey = redactString(key, literals);
    out[safeKey] = isSensitiveKey(key) && v !== undefined && v !== null && v !== '' ? REDACTED : redactValue(v, literals, depth + 1, seen);
  }
  return out;
}
