/**
 * `jsonBody(config)`: the only body parser of the public app, `app.use(jsonBody(config))` before cardGuard.
 * - `application/json` only (with no charset or UTF-8): another content type on a request with a body is
 *   400 invalid_request (rule `unsupported_media_type`); compressed bodies are refused (inflate off).
 * - `http.bodyLimitBytes` (16 KiB by default) → 413 payload_too_large; strict JSON (object or array).
 * - The raw text is scanned for card numbers BEFORE JSON.parse, which rounds numbers beyond 2^53, so a
 *   19-digit PAN sent as a JSON number is still caught (422 card_data_forbidden, even if the JSON is malformed).
 * - Keys `__proto__`, `constructor` and `prototype` anywhere in the body are 400 (rule `forbidden_key`).
 * - An object that repeats a key, at any depth, is 400 (rule `duplicate_key`): JSON.parse keeps the last
 *   value, while a WAF, an audit log or a frontend reading the first would see another request than the one
 *   charged. Names are compared decoded (`"a"` and `"\u0061"` are the same key).
 */
import express, { type RequestHandler } from 'express';
import type { IncomingMessage } from 'node:http';
import { containsPan as hasPan } from '../card/pan';
import type { HttpConfig } from '../config/types';
import { CardDataForbidden, InvalidRequest } from './errors';
import './types';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** True when an own key anywhere in the parsed value could pollute prototypes downstream. */
export function hasForbiddenKey(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) stack.push(...value);
    else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (FORBIDDEN_KEYS.has(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/**
 * True when any object in the JSON text repeats a key. Meant for text JSON.parse accepted (it reads strings,
 * braces, brackets and commas, nothing else). Iterative, so a body nested thousands deep cannot overflow the
 * stack (jsonc-parser's visitor, tried first, is recursive and did); names with escapes are compared decoded.
 */
export function hasDuplicateKey(text: string): boolean {
  const open: (string[] | Set<string> | undefined)[] = []; // per open object its names so far; undefined for an array
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = i + 1;
      let escaped = false;
      for (let d = text.charCodeAt(end); d !== 0x22 && end < text.length; d = text.charCodeAt(end)) {
        if (d === 0x5c) {
          escaped = true;
          end++;
        }
        end++;
      }
      const keys = open[open.length - 1];
      if (expectKey && keys !== undefined) {
        const name = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        // Sale bodies hold a handful of names per object, where an array beats a Set; past 16 names a Set
        // keeps an object of thousands of keys linear.
        if (Array.isArray(keys)) {
          if (keys.includes(name)) return true;
          keys.push(name);
          if (keys.length > 16) open[open.length - 1] = new Set(keys);
        } else {
          if (keys.has(name)) return true;
          keys.add(name);
        }
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b) {
      open.push([]);
      expectKey = true;
    } else if (c === 0x5b) open.push(undefined);
    else if (c === 0x7d || c === 0x5d) open.pop();
    else if (c === 0x2c) expectKey = open[open.length - 1] !== undefined;
  }
  return false;
}

/** The raw text of each parsed body, kept until the key check after JSON.parse (which must accept it first). */
const rawBodies = new WeakMap<IncomingMessage, string>();

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
}

const contentTypeGate: RequestHandler = (req, _res, next) => {
  if (!BODY_METHODS.has(req.method) || !hasBody(req)) return next();
  const type = req.headers['content-type'] ?? '';
  if (type === 'application/json') return next(); // what nearly every caller sends: no parsing needed
  const [media = '', ...params] = type.split(';').map((p) => p.trim().toLowerCase());
  if (media !== 'application/json') return next(new InvalidRequest([{ path: 'header.content-type', rule: 'unsupported_media_type' }]));
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return next(new InvalidRequest([{ path: 'header.content-type', rule: 'unsupported_charset' }]));
  }
  next();
};

const keyGuard: RequestHandler = (req, _res, next) => {
  if (req.body !== undefined && hasForbiddenKey(req.body)) return next(new InvalidRequest([{ path: 'body', rule: 'forbidden_key' }]));
  const raw = rawBodies.get(req);
  if (raw !== undefined && hasDuplicateKey(raw)) return next(new InvalidRequest([{ path: 'body', rule: 'duplicate_key' }]));
  next();
};

export function jsonBody(config: { http: Pick<HttpConfig, 'bodyLimitBytes'> }): RequestHandler[] {
  const parse = express.json({
    limit: config.http.bodyLimitBytes,
    strict: true,
    type: 'application/json',
    inflate: false,
    verify: (req, _res, buf) => {
      const text = buf.toString('utf8');
      if (hasPan(text)) {
        (req as express.Request).log?.warn('card data rejected', { location: 'body' });
        throw new CardDataForbidden();
      }
      rawBodies.set(req, text);
    },
  });
  return [contentTypeGate, parse, keyGuard];
}
