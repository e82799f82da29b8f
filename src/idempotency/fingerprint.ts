import { hash } from 'node:crypto';

/**
 * JSON (of a parsed JSON body) with object keys sorted at every depth and no whitespace, so that two bodies that mean the same
 * thing fingerprint the same whatever their key order or spacing. Values JSON.stringify would drop
 * (undefined, functions) are dropped; array order is significant.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(obj).sort()) {
    const v = obj[k];
    if (v === undefined || typeof v === 'function') continue;
    parts.push(`${JSON.stringify(k)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/** sha256 (hex) of `METHOD\npath\ncanonical body`: what "the same request" means for an idempotency key. */
export function fingerprintRequest(method: string, path: string, body: unknown): string {
  return hash('sha256', `${method.toUpperCase()}\n${path}\n${canonicalJson(body)}`, 'hex');
}
