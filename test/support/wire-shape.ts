import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { authorizationHeader } from '../../src/sandbox/auth';
import { DEFAULT_SETTINGS } from '../../src/sandbox';

/**
 * Comparing answers with JSON captured from the real gateway: same field names, JSON types and string
 * formats (a decimal stays a decimal, a 17-character key a 17-character key), not the same values.
 */

/** The format class of a string, so "29.99" and "10.00" match but "29.99" and "29.9" or "abc" do not. */
export function formatOf(s: string): string {
  if (s === '') return 'empty';
  if (/^\d+\.\d{2}$/.test(s)) return 'decimal';
  if (/^\d{4}$/.test(s)) return 'digits4'; // MMYY, last four
  if (/^\d+$/.test(s)) return 'digits';
  if (/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(s)) return 'datetime';
  if (/^\d{4}-\d\d-\d\d$/.test(s)) return 'date';
  if (/^\d{4}x+\d{4}$/.test(s)) return 'masked-pan';
  if (/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/.test(s)) return 'cardref';
  if (/^[a-z0-9]{12,20}$/.test(s)) return `key${s.length}`;
  return 'text';
}

export interface ShapeOptions {
  /** true: the answer must have exactly the capture's fields; false: at least them (extra fields allowed). */
  exact: boolean;
}

/**
 * Differences between an answer and a capture, as readable lines (empty = same shape). A null in the capture
 * says the field is nullable: the answer may hold null or a string there. Arrays compare their first items.
 */
export function shapeDiff(actual: unknown, capture: unknown, opts: ShapeOptions, path = '$'): string[] {
  if (capture === null) return actual === null || typeof actual === 'string' ? [] : [`${path}: ${JSON.stringify(actual)} where the capture has null`];
  if (Array.isArray(capture)) {
    if (!Array.isArray(actual)) return [`${path}: not an array`];
    if (capture.length === 0 || actual.length === 0) return [];
    return shapeDiff(actual[0], capture[0], opts, `${path}[0]`);
  }
  if (typeof capture === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: not an object`];
    const a = actual as Record<string, unknown>;
    const c = capture as Record<string, unknown>;
    const out: string[] = [];
    for (const k of Object.keys(c)) {
      if (!(k in a)) out.push(`${path}.${k}: missing`);
      else out.push(...shapeDiff(a[k], c[k], opts, `${path}.${k}`));
    }
    if (opts.exact) for (const k of Object.keys(a)) if (!(k in c)) out.push(`${path}.${k}: not in the capture`);
    return out;
  }
  if (typeof actual !== typeof capture) return [`${path}: ${typeof actual} where the capture has ${typeof capture}`];
  if (typeof capture === 'string' && formatOf(actual as string) !== formatOf(capture)) {
    return [`${path}: "${actual as string}" (${formatOf(actual as string)}) where the capture has "${capture}" (${formatOf(capture)})`];
  }
  return [];
}

export interface RawReply {
  status: number;
  text: string;
  json: unknown;
}

/**
 * One signed call with the body sent exactly as given, GETs included (fetch refuses a GET body; the .NET
 * client's RestSharp sends `{}` with every GET).
 */
export function rawCall(baseUrl: string, method: string, path: string, body?: string): Promise<RawReply> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Authorization: authorizationHeader(DEFAULT_SETTINGS.apiKey, DEFAULT_SETTINGS.apiPin, randomBytes(8).toString('hex')),
  };
  if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}
