/**
 * The card-data guard (contract.md guarantee 1 and the 422 `card_data_forbidden` row). Mount after
 * `jsonBody(config)` and before any route:
 *   app.use(jsonBody(config)); app.use(cardGuard());
 * Routers mounted before it (docs, demo: GET only, no body) put it on each of their own routes instead: a
 * request they answer is scanned there, once, and one they do not match (every sale) never meets that copy.
 * It scans headers (names, and values for delimited PAN runs, as sent and read as UTF-8), the raw and decoded URL path and query, and the parsed body deeply
 * (keys, string and number values, arrays). A hit answers 422 with a fixed message; only the location kind
 * (`header`, `path`, `query`, `body`) is logged, never the value. The raw body text is scanned separately
 * by jsonBody, because JSON.parse rounds numbers beyond 2^53 (a 19-digit PAN as a JSON number).
 */
import type { RequestHandler } from 'express';
import { containsPan as hasPan } from '../card/pan';
import { normaliseKey } from '../observability/redact';
import { CardDataForbidden } from './errors';
import './types';

export type CardDataLocation = 'header' | 'path' | 'query' | 'body';

/** Field names that only ever hold card data (compared lowercased without - and _). */
const CARD_NAMES = new Set([
  'creditcard', 'debitcard', 'card', 'cardnumber', 'cardnum', 'cardno', 'ccnum', 'ccnumber', 'ccno', 'pan', 'primaryaccountnumber',
  'cvc', 'cvc2', 'cvv', 'cvv2', 'cid', 'csc', 'cvn', 'securitycode', 'cardsecuritycode', 'cardcode', 'cardcvv', 'cardcvc',
  'expiration', 'expirationdate', 'exp', 'expiry', 'expirydate', 'expdate', 'expmonth', 'expyear', 'expirationmonth', 'expirationyear',
  'expirymonth', 'expiryyear', 'ccexp', 'ccexpiration', 'cardexp', 'cardexpiration', 'cardexpiry',
  'track1', 'track2', 'trackdata', 'magstripe', 'magneticstripe',
  // the gateway's legacy form fields
  'umcard', 'umexpir', 'umcvv2', 'umtrack', 'ummagstripe',
]);

/** `number` is card data only inside an object reached through a card-like key (`payment_card.number`). */
function isCardContext(normalisedKey: string): boolean {
  return normalisedKey.includes('card') || normalisedKey === 'cc';
}

export function isCardLikeName(name: string): boolean {
  return CARD_NAMES.has(normaliseKey(name));
}

/**
 * True when a parsed JSON value or query object holds card data anywhere. Iterative, so deeply nested
 * input cannot overflow the stack.
 */
export function containsCardData(root: unknown): boolean {
  const stack: { value: unknown; cardContext: boolean }[] = [{ value: root, cardContext: false }];
  while (stack.length > 0) {
    const { value, cardContext } = stack.pop() as { value: unknown; cardContext: boolean };
    if (typeof value === 'string') {
      if (hasPan(value)) return true;
    } else if (typeof value === 'number' || typeof value === 'bigint') {
      if (hasPan(String(value))) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, cardContext });
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const norm = normaliseKey(key);
        if (CARD_NAMES.has(norm) || (cardContext && norm === 'number') || hasPan(key)) return true;
        stack.push({ value: child, cardContext: isCardContext(norm) });
      }
    }
  }
  return false;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

// Header values hold opaque ids (trace ids, JWTs, cookies) more often than prose: a digit stretch inside a
// hex or base64 id is not a card number (else about 1 in 500 W3C-traced requests would be refused). Node hands
// them over as latin1 bytes: the scan reads UTF-8 in them too (other scripts' digits, zero-width separators).
const headerValueHoldsPan = (value: string): boolean => hasPan(value, { delimited: true, headerBytes: true });

/**
 * Trace headers that proxies add on their own, skipped only when they match their exact format:
 * Google's load balancer sends a 64-bit DECIMAL span id (`<32 hex>/<decimal>;o=1`), which would pass Luhn
 * for roughly one request in twenty.
 */
const TRACE_FORMATS: Readonly<Record<string, RegExp>> = {
  'x-cloud-trace-context': /^[0-9a-f]{32}(\/\d{1,20})?(;o=\d)?$/i,
  traceparent: /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/i,
};

function headersHoldCardData(headers: NodeJS.Dict<string | string[]>): boolean {
  for (const [name, value] of Object.entries(headers)) {
    // A header NAME can carry a number too (X-Card-4000-1000-1111-2224).
    if (isCardLikeName(name.replace(/^x-/i, '')) || headerValueHoldsPan(name)) return true;
    const values = Array.isArray(value) ? value : [value ?? ''];
    const format = TRACE_FORMATS[name.toLowerCase()];
    if (values.some((v) => !(format?.test(v) ?? false) && headerValueHoldsPan(v))) return true;
  }
  return false;
}

/** Where raw card data sits in this request, or undefined. The body is scanned in its parsed form. */
export function findCardData(req: {
  headers: NodeJS.Dict<string | string[]>;
  originalUrl: string;
  query: unknown;
  body?: unknown;
}): CardDataLocation | undefined {
  if (headersHoldCardData(req.headers)) return 'header';
  const at = req.originalUrl.indexOf('?');
  const rawPath = at < 0 ? req.originalUrl : req.originalUrl.slice(0, at);
  const rawQuery = at < 0 ? '' : req.originalUrl.slice(at + 1);
  if (hasPan(rawPath) || hasPan(safeDecode(rawPath))) return 'path';
  if (hasPan(rawQuery) || hasPan(safeDecode(rawQuery.replace(/\+/g, ' '))) || containsCardData(req.query)) return 'query';
  if (req.body !== undefined && containsCardData(req.body)) return 'body';
  return undefined;
}

export function cardGuard(): RequestHandler {
  return (req, _res, next) => {
    const location = findCardData(req);
    if (location === undefined) return next();
    req.log?.warn('card data rejected', { location });
    next(new CardDataForbidden());
  };
}
