/**
 * The card- and bank-data guard (contract.md guarantees 1 and 14, the 422 `card_data_forbidden` and
 * `bank_data_forbidden` rows). One walk over the request applies both rules at each name and value (the card
 * rule first): src/card/pan.ts for card numbers, src/bank/bank-data.ts for a routing number beside an account
 * number and for bank field names (`routing`, `account_number`, `check`, …). Mount after
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
import { containsBankNumbers, isBankLikeNormalised } from '../bank/bank-data';
import { containsPan as hasPan, lastScanMayHoldRouting } from '../card/pan';
import { normaliseKey } from '../observability/redact';
import { BankDataForbidden, CardDataForbidden } from './errors';
import './types';

export type CardDataLocation = 'header' | 'path' | 'query' | 'body';
/** Which rule a request broke. */
export type PaymentDataKind = 'card' | 'bank';
export interface PaymentDataFound {
  location: CardDataLocation;
  kind: PaymentDataKind;
}

/** The rules one walk applies: both for the guard; the card rule alone where only card numbers matter. */
interface Rules {
  bank: boolean;
}
const CARD_ONLY: Rules = { bank: false };
const BOTH: Rules = { bank: true };

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

/** What a string holds, card data first. */
function inText(text: string, rules: Rules): PaymentDataKind | undefined {
  if (hasPan(text)) return 'card';
  // The card scan noted whether a routing number could be there at all: nearly every value is passed once.
  return rules.bank && lastScanMayHoldRouting() && containsBankNumbers(text) ? 'bank' : undefined;
}

/**
 * What a name alone says, computed once per distinct name: the same header names and body keys come with nearly
 * every request (`authorization`, `content-type`, `customer`, `amount`, …), and their normalising, set lookups and
 * scans were most of the guard's cost on a sale (issue 40, item 1: 6 of its 8 µs went to seven header names). A
 * pure function of the name, so a remembered verdict is the one the walk would reach again. At most NAMES_KEPT
 * names per table, each at most NAME_KEPT_CHARS long; past that, a name is worked out each time (a caller sending
 * ever-new or huge names cannot grow it past ~64 KB a table).
 */
const NAMES_KEPT = 512;
const NAME_KEPT_CHARS = 64;

function remembered<T extends { card: boolean; bank: boolean }>(table: Map<string, T>, name: string, work: (name: string) => T): T {
  const known = table.get(name);
  if (known !== undefined) return known;
  const verdict = work(name);
  // Only a clean name is kept: a name that is or holds card or bank data must not stay in the process's memory
  // (it is refused anyway, and the request with it; no caller sends it twice in normal use).
  if (!verdict.card && !verdict.bank && table.size < NAMES_KEPT && name.length <= NAME_KEPT_CHARS) table.set(name, verdict);
  return verdict;
}

/** An object key's verdict: card or bank data by itself, and whether its value is a card's context. */
interface KeyVerdict {
  /** Card data whatever the context (a card field name, or a card number in the key). */
  card: boolean;
  /** `number`: card data inside a card's context only. */
  isNumber: boolean;
  /** A bank field name, or bank numbers in the key (the bank rule only). */
  bank: boolean;
  /** Its value is reached through a card-like key (`payment_card.number`). */
  cardContext: boolean;
}

const keyVerdicts = new Map<string, KeyVerdict>();

function keyVerdictOf(key: string): KeyVerdict {
  const norm = normaliseKey(key);
  return {
    card: CARD_NAMES.has(norm) || hasPan(key),
    isNumber: norm === 'number',
    bank: isBankLikeNormalised(norm) || containsBankNumbers(key),
    cardContext: isCardContext(norm),
  };
}

/**
 * Which raw payment data a parsed JSON value or query object holds anywhere (names, string and number values,
 * arrays). Iterative, so deeply nested input cannot overflow the stack.
 */
function findIn(root: unknown, rules: Rules): PaymentDataKind | undefined {
  // The values still to read, each beside whether it was reached through a card-like key (two arrays, no object per value).
  const values: unknown[] = [root];
  const contexts: boolean[] = [false];
  while (values.length > 0) {
    const value = values.pop();
    const cardContext = contexts.pop() as boolean;
    if (typeof value === 'string') {
      const kind = inText(value, rules);
      if (kind) return kind;
    } else if (typeof value === 'number' || typeof value === 'bigint') {
      if (hasPan(String(value))) return 'card';
    } else if (Array.isArray(value)) {
      for (const item of value) {
        values.push(item);
        contexts.push(cardContext);
      }
    } else if (value !== null && typeof value === 'object') {
      for (const key of Object.keys(value)) {
        const verdict = remembered(keyVerdicts, key, keyVerdictOf);
        if (verdict.card || (cardContext && verdict.isNumber)) return 'card';
        if (rules.bank && verdict.bank) return 'bank';
        values.push((value as Record<string, unknown>)[key]);
        contexts.push(verdict.cardContext);
      }
    }
  }
  return undefined;
}

/** True when a parsed JSON value or query object holds card data anywhere. */
export function containsCardData(root: unknown): boolean {
  return findIn(root, CARD_ONLY) !== undefined;
}

/** Which raw card or bank data a parsed JSON value or query object holds anywhere, card first. */
export function findPaymentDataIn(root: unknown): PaymentDataKind | undefined {
  return findIn(root, BOTH);
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

/** A header name's verdict (Node hands names lowercased): card or bank data in the name, and its trace format. */
interface HeaderNameVerdict {
  card: boolean;
  bank: boolean;
  format: RegExp | undefined;
}

const headerNameVerdicts = new Map<string, HeaderNameVerdict>();

function headerNameVerdictOf(name: string): HeaderNameVerdict {
  // A header NAME can carry a number too (X-Card-4000-1000-1111-2224).
  const norm = normaliseKey(name.replace(/^x-/i, ''));
  const lower = name.toLowerCase();
  // Own formats only: a header named `constructor` or `toString` must not find Object.prototype's function (it threw: 500).
  return { card: CARD_NAMES.has(norm) || headerValueHoldsPan(name), bank: isBankLikeNormalised(norm), format: Object.hasOwn(TRACE_FORMATS, lower) ? TRACE_FORMATS[lower] : undefined };
}

/** One header value: card data first, then (the bank rule) bank numbers. */
function inHeaderValue(v: string, format: RegExp | undefined, rules: Rules): PaymentDataKind | undefined {
  if (format?.test(v) ?? false) return undefined;
  if (headerValueHoldsPan(v)) return 'card';
  // A routing number glued to letters (a hex or base64 id) is never one (bank-data.ts): no delimited mode needed.
  if (rules.bank && lastScanMayHoldRouting() && containsBankNumbers(v)) return 'bank';
  return undefined;
}

function inHeaders(headers: NodeJS.Dict<string | string[]>, rules: Rules): PaymentDataKind | undefined {
  for (const name of Object.keys(headers)) {
    const verdict = remembered(headerNameVerdicts, name, headerNameVerdictOf);
    if (verdict.card) return 'card';
    if (rules.bank && verdict.bank) return 'bank';
    const value = headers[name];
    if (Array.isArray(value)) {
      for (const v of value) {
        const kind = inHeaderValue(v, verdict.format, rules);
        if (kind) return kind;
      }
    } else {
      const kind = inHeaderValue(value ?? '', verdict.format, rules);
      if (kind) return kind;
    }
  }
  return undefined;
}

/** What the guard reads of a request. */
interface ScannedRequest {
  headers: NodeJS.Dict<string | string[]>;
  originalUrl: string;
  query: unknown;
  body?: unknown;
}

function find(req: ScannedRequest, rules: Rules): PaymentDataFound | undefined {
  const header = inHeaders(req.headers, rules);
  if (header) return { location: 'header', kind: header };
  const at = req.originalUrl.indexOf('?');
  const rawPath = at < 0 ? req.originalUrl : req.originalUrl.slice(0, at);
  const rawQuery = at < 0 ? '' : req.originalUrl.slice(at + 1);
  // decodeURIComponent leaves a text with no `%` as it is: that text is scanned once, not twice.
  const decodedPath = rawPath.includes('%') ? safeDecode(rawPath) : rawPath;
  // Bank numbers per segment: `/v1/sales/` would make the segment's numbers part of an identifier (bank-data.ts).
  const path =
    inText(rawPath, CARD_ONLY) ??
    (decodedPath !== rawPath ? inText(decodedPath, CARD_ONLY) : undefined) ??
    (rules.bank && lastScanMayHoldRouting() && decodedPath.split('/').some(containsBankNumbers) ? 'bank' : undefined);
  if (path) return { location: 'path', kind: path };
  const query = (rawQuery === '' ? undefined : inText(rawQuery, CARD_ONLY) ?? inText(safeDecode(rawQuery.replace(/\+/g, ' ')), CARD_ONLY)) ?? findIn(req.query, rules);
  // Bank numbers are looked for in each parameter's value only: the query's text joins parameters (`a=…&b=…`).
  if (query) return { location: 'query', kind: query };
  const body = req.body !== undefined ? findIn(req.body, rules) : undefined;
  if (body) return { location: 'body', kind: body };
  return undefined;
}

/** Where raw card data sits in this request, or undefined. The body is scanned in its parsed form. */
export function findCardData(req: ScannedRequest): CardDataLocation | undefined {
  return find(req, CARD_ONLY)?.location;
}

/** Where raw card or bank data sits in this request and which, or undefined: the guard's one walk. */
export function findRawPaymentData(req: ScannedRequest): PaymentDataFound | undefined {
  return find(req, BOTH);
}

export function cardGuard(): RequestHandler {
  return (req, _res, next) => {
    const found = findRawPaymentData(req);
    if (found === undefined) return next();
    // Only the location and the rule are logged, never the value.
    req.log?.warn(found.kind === 'card' ? 'card data rejected' : 'bank data rejected', { location: found.location });
    next(found.kind === 'card' ? new CardDataForbidden() : new BankDataForbidden());
  };
}
