/**
 * Request parsing compiled FROM openapi.json (ajv, JSON Schema 2020-12), so the docs and the checks cannot
 * drift. Each parser returns a typed value or throws InvalidRequest whose `details` name field paths and
 * rules, never values:
 *   parseSaleRequest(body): SaleInput          body of POST /v1/sales
 *   parseListQuery(query): ListQuery           ?limit (1..100, default 20) &offset (≥ 0, default 0)
 *   parsePathKey(value, name?): string         custkey / pmkey path parameters
 *   parseIdempotencyKey(header): string        Idempotency-Key (required, 1–255 printable ASCII)
 *   parseAmountBody(body, kind): AmountInput    body of a capture or a refund ({} or {amount})
 *   parseAddPaymentMethod(body): AddPaymentMethodInput   body of POST /v1/customers/{custkey}/payment_methods
 *   parseCreateCustomer, parseUpdateCustomer, parseUpdatePaymentMethod   the wallet's bodies
 *   parseOptionalIdempotencyKey(header, fallback)   a removal's Idempotency-Key
 * Rules JSON Schema cannot say (amount > 0, tax + tip ≤ amount in integer cents) are checked here.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import openapi from './openapi.json';
import { InvalidRequest, type ErrorDetail } from './errors';
import { hasForbiddenKey } from './json-body';
import { canonicalAmount, toCents } from '../gateway/money';

export interface SaleInput {
  customer: string;
  /** Exactly one of `paymentMethod` (a stored method) and `paymentKey` (a card just collected by Pay.js). */
  paymentMethod?: string;
  paymentKey?: string;
  /** With `paymentKey`: keep the card on the customer (`save_payment_method`). */
  save?: boolean;
  /**
   * Canonical ("10.50" for "10.5"), so every answer, the sale's record and the gateway get one spelling; the
   * idempotency fingerprint hashes the raw body. `amountCents` is the same value in integer cents.
   */
  amount: string;
  amountCents: number;
  amountDetail?: { tax?: string; tip?: string };
  invoice?: string;
  /** false: authorize only (`authonly`). */
  capture: boolean;
  /** An internal service's own billing (`customers:any` only): sent with the gateway's recurring indicator. */
  recurring?: boolean;
  /** A bank payment: the shopper's authorization (contract, "Bank payments"). */
  authorization?: { text: string };
}

/** The body of a capture or a refund: all (absent) or part of the sale. */
export interface AmountInput {
  /** Canonical, as SaleInput's. */
  amount?: string;
  amountCents?: number;
}

export interface ListQuery {
  limit: number;
  offset: number;
}

type Schema = Record<string, unknown>;

/** Rewrites `#/components/schemas/X` to `#/$defs/X` so component schemas compile as one 2020-12 schema. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Schema = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', '#/$defs/') : rewriteRefs(v);
  }
  return out;
}

const defs = rewriteRefs(openapi.components.schemas) as Schema;
const ajv = new Ajv2020({ allErrors: true, strict: true, useDefaults: true });
addFormats(ajv);

export function compile(schema: unknown): ValidateFunction {
  return ajv.compile({ $defs: defs, ...(rewriteRefs(schema) as Schema) });
}

const params = openapi.components.parameters;
const validateSale = compile({ $ref: '#/$defs/SaleRequest' });
const validateCapture = compile({ $ref: '#/$defs/CaptureRequest' });
const validateRefund = compile({ $ref: '#/$defs/RefundRequest' });
const validateAddPaymentMethod = compile({ $ref: '#/$defs/AddPaymentMethodRequest' });
const validateCreateCustomer = compile({ $ref: '#/$defs/CreateCustomerRequest' });
const validateUpdateCustomer = compile({ $ref: '#/$defs/UpdateCustomerRequest' });
const validateUpdatePaymentMethod = compile({ $ref: '#/$defs/UpdatePaymentMethodRequest' });
const validateListQuery = compile({
  type: 'object',
  additionalProperties: false,
  properties: { limit: params.Limit.schema, offset: params.Offset.schema },
});
const validateKey = compile(params.CustKey.schema);
const validateEventsQuery = compile({
  type: 'object',
  additionalProperties: false,
  properties: { after: params.EventsAfter.schema, limit: params.EventsLimit.schema },
});
const validateIdempotencyKey = compile(params.IdempotencyKey.schema);

const RULES: Record<string, string> = {
  additionalProperties: 'unknown_field', minimum: 'too_small', maximum: 'too_large', minLength: 'too_short', maxLength: 'too_long',
  // POST /v1/sales: exactly one of payment_method and payment_key; POST /v1/customers: a company or both names.
  anyOf: 'one_required', not: 'exclusive', dependentRequired: 'requires',
};

/**
 * A field name the caller sent that the schema does not know, when it is safe to say back: a plain identifier
 * (letters, digits, `_`, `-`; at most 64 characters) with fewer than six digits, so it can never carry a card
 * number or most of one (issue 41: `path: "body"` did not say which field was wrong). Anything else is
 * reported at its parent's path, as before: the name is caller input.
 */
const SAFE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
export function sayableFieldName(name: unknown): string | undefined {
  if (typeof name !== 'string' || !SAFE_NAME.test(name)) return undefined;
  return (name.match(/[0-9]/g)?.length ?? 0) < 6 ? name : undefined;
}

/**
 * ajv errors as details. An unknown field is named when sayableFieldName allows it, else reported at its
 * parent's path. `instancePath` is a JSON pointer over property names the schema declares, so it is safe to show.
 */
export function toDetails(prefix: string, errors: readonly ErrorObject[] | null | undefined): ErrorDetail[] {
  const seen = new Set<string>();
  const out: ErrorDetail[] = [];
  for (const e of errors ?? []) {
    let path = prefix + e.instancePath.replace(/\//g, '.');
    if (e.keyword === 'required') path += `.${String(e.params.missingProperty)}`;
    if (e.keyword === 'additionalProperties') {
      const name = sayableFieldName(e.params.additionalProperty);
      if (name !== undefined) path += `.${name}`;
    }
    const detail = { path, rule: RULES[e.keyword] ?? e.keyword };
    const id = `${detail.path} ${detail.rule}`;
    if (!seen.has(id)) {
      seen.add(id);
      out.push(detail);
    }
  }
  return out;
}

/** "12.3" → 1230: one money conversion for the API and the sale records (only on strings of the money pattern). */
export { toCents };

function isPlainObject(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function parseSaleRequest(body: unknown): SaleInput {
  if (!isPlainObject(body)) throw new InvalidRequest([{ path: 'body', rule: 'type' }]);
  if (hasForbiddenKey(body)) throw new InvalidRequest([{ path: 'body', rule: 'forbidden_key' }]);
  if (!validateSale(body)) throw new InvalidRequest(toDetails('body', validateSale.errors));
  // Safe after validation: the schema fixes every field's type and forbids others.
  const raw = body as {
    customer: string; payment_method?: string; payment_key?: string; save_payment_method?: boolean; amount: string; amount_detail?: { tax?: string; tip?: string };
    invoice?: string; capture?: boolean; recurring?: boolean; authorization?: { text: string };
  };
  const amountCents = toCents(raw.amount);
  const details: ErrorDetail[] = [];
  if (amountCents <= 0) details.push({ path: 'body.amount', rule: 'positive' });
  const detail = raw.amount_detail;
  if (detail && toCents(detail.tax ?? '0') + toCents(detail.tip ?? '0') > amountCents) details.push({ path: 'body.amount_detail', rule: 'exceeds_amount' });
  // A bank payment debits or not: there is no authorization only of a check (gateway-facts.md, ACH).
  if (raw.authorization !== undefined && raw.capture === false) details.push({ path: 'body.capture', rule: 'bank_payment_captures' });
  if (details.length > 0) throw new InvalidRequest(details);

  const input: SaleInput = { customer: raw.customer, amount: canonicalAmount(raw.amount), amountCents, capture: raw.capture !== false };
  if (raw.payment_method !== undefined) input.paymentMethod = raw.payment_method;
  if (raw.payment_key !== undefined) Object.assign(input, { paymentKey: raw.payment_key, save: raw.save_payment_method === true });
  if (detail) {
    input.amountDetail = {};
    if (detail.tax !== undefined) input.amountDetail.tax = canonicalAmount(detail.tax);
    if (detail.tip !== undefined) input.amountDetail.tip = canonicalAmount(detail.tip);
  }
  if (raw.invoice !== undefined) input.invoice = raw.invoice;
  if (raw.recurring === true) input.recurring = true;
  if (raw.authorization !== undefined) input.authorization = { text: raw.authorization.text };
  return input;
}

/**
 * The body of `POST /v1/sales/{key}/capture` or `/refunds`: none (all) or `{amount}` (part). An empty body is
 * the same request as `{}`.
 */
export function parseAmountBody(body: unknown, kind: 'capture' | 'refund'): AmountInput {
  const value = body === undefined ? {} : body;
  if (!isPlainObject(value)) throw new InvalidRequest([{ path: 'body', rule: 'type' }]);
  if (hasForbiddenKey(value)) throw new InvalidRequest([{ path: 'body', rule: 'forbidden_key' }]);
  const validate = kind === 'capture' ? validateCapture : validateRefund;
  if (!validate(value)) throw new InvalidRequest(toDetails('body', validate.errors));
  const amount = (value as { amount?: string }).amount;
  if (amount === undefined) return {};
  const amountCents = toCents(amount);
  if (amountCents <= 0) throw new InvalidRequest([{ path: 'body.amount', rule: 'positive' }]);
  return { amount: canonicalAmount(amount), amountCents };
}

/** The body of `POST /v1/customers/{custkey}/payment_methods`: a Pay.js payment key and optional labels. */
export interface AddPaymentMethodInput {
  paymentKey: string;
  cardholder?: string;
  methodName?: string;
  avsStreet?: string;
  avsPostalcode?: string;
}

export function parseAddPaymentMethod(body: unknown): AddPaymentMethodInput {
  if (!isPlainObject(body)) throw new InvalidRequest([{ path: 'body', rule: 'type' }]);
  if (hasForbiddenKey(body)) throw new InvalidRequest([{ path: 'body', rule: 'forbidden_key' }]);
  if (!validateAddPaymentMethod(body)) throw new InvalidRequest(toDetails('body', validateAddPaymentMethod.errors));
  const raw = body as { payment_key: string; cardholder?: string; method_name?: string; avs_street?: string; avs_postalcode?: string };
  return {
    paymentKey: raw.payment_key,
    ...(raw.cardholder !== undefined ? { cardholder: raw.cardholder } : {}),
    ...(raw.method_name !== undefined ? { methodName: raw.method_name } : {}),
    ...(raw.avs_street !== undefined ? { avsStreet: raw.avs_street } : {}),
    ...(raw.avs_postalcode !== undefined ? { avsPostalcode: raw.avs_postalcode } : {}),
  };
}

/** A body checked against one of openapi.json's request schemas, then read as `T` (the schema fixes its fields). */
export function parseBody<T>(body: unknown, validate: ValidateFunction): T {
  if (!isPlainObject(body)) throw new InvalidRequest([{ path: 'body', rule: 'type' }]);
  if (hasForbiddenKey(body)) throw new InvalidRequest([{ path: 'body', rule: 'forbidden_key' }]);
  if (!validate(body)) throw new InvalidRequest(toDetails('body', validate.errors));
  return body as T;
}

/** The customer fields of a create or an update, as the gateway names them. */
export type CustomerFieldsInput = Partial<Record<'first_name' | 'last_name' | 'company' | 'email' | 'phone' | 'street' | 'street2' | 'city' | 'state' | 'postalcode' | 'country' | 'description', string>>;

/** `POST /v1/customers`: `customerid` and a company or both names. */
export function parseCreateCustomer(body: unknown): CustomerFieldsInput & { customerid: string } {
  return { ...parseBody<CustomerFieldsInput & { customerid: string }>(body, validateCreateCustomer) };
}

/** `PATCH /v1/customers/{custkey}`: the fields to change (at least one). */
export function parseUpdateCustomer(body: unknown): CustomerFieldsInput {
  return { ...parseBody<CustomerFieldsInput>(body, validateUpdateCustomer) };
}

/** `PATCH /v1/customers/{custkey}/payment_methods/{pmkey}`: at least one change. */
export function parseUpdatePaymentMethod(body: unknown): { method_name?: string; default?: true; expires?: string; avs_street?: string; avs_postalcode?: string } {
  return { ...parseBody<{ method_name?: string; default?: true; expires?: string; avs_street?: string; avs_postalcode?: string }>(body, validateUpdatePaymentMethod) };
}

/** A body where none is taken (void): absent, or an empty object. */
export function parseEmptyBody(body: unknown): void {
  if (body === undefined) return;
  if (!isPlainObject(body)) throw new InvalidRequest([{ path: 'body', rule: 'type' }]);
  const extra = Object.keys(body);
  if (extra.length > 0) {
    throw new InvalidRequest(extra.slice(0, 10).map((k) => ({ path: sayableFieldName(k) === undefined ? 'body' : `body.${k}`, rule: 'unknown_field' })).filter((d, i, all) => all.findIndex((o) => o.path === d.path) === i));
  }
}

const WHOLE = /^(0|[1-9][0-9]{0,9})$/;

/** `query` as Express parses it (values may be strings, arrays or objects). */
export function parseListQuery(query: unknown): ListQuery {
  const source = isPlainObject(query) ? query : {};
  const numbers: Schema = {};
  const details: ErrorDetail[] = [];
  for (const [name, value] of Object.entries(source)) {
    // Digits only: Number() would accept "1e2", " 5", "0x10".
    if (typeof value === 'string' && WHOLE.test(value)) numbers[name] = Number(value);
    else if (name === 'limit' || name === 'offset') details.push({ path: `query.${name}`, rule: 'integer' });
    else numbers[name] = value; // reported as unknown_field by the schema, without its name
  }
  if (!validateListQuery(numbers)) details.push(...toDetails('query', validateListQuery.errors));
  if (details.length > 0) throw new InvalidRequest(details);
  return { limit: numbers.limit as number, offset: numbers.offset as number };
}

/** A `custkey`/`pmkey` path parameter: nothing that could reach another gateway path (`/`, `.`, `%`, `?`). */
export function parsePathKey(value: unknown, name = 'key'): string {
  if (typeof value !== 'string' || !validateKey(value)) throw new InvalidRequest([{ path: `path.${name}`, rule: 'pattern' }]);
  return value;
}

/** An Idempotency-Key where one is optional (a removal, idempotent by its path): `fallback` when none is sent. */
export function parseOptionalIdempotencyKey(header: unknown, fallback: string): string {
  return header === undefined ? fallback : parseIdempotencyKey(header);
}

export function parseIdempotencyKey(header: unknown): string {
  const path = 'header.idempotency-key';
  if (header === undefined || header === '') throw new InvalidRequest([{ path, rule: 'required' }]);
  if (typeof header !== 'string' || !validateIdempotencyKey(header)) throw new InvalidRequest([{ path, rule: 'format' }]);
  return header;
}

/**
 * A paged list's query (`after`, `limit`), checked by `validate`: `limit` must be a whole number; any other name is
 * reported without echoing it (its value could be anything).
 */
export function parsePagedQuery(query: unknown, validate: ValidateFunction): { after: string | undefined; limit: number | undefined } {
  const source = isPlainObject(query) ? query : {};
  const values: Schema = {};
  const details: ErrorDetail[] = [];
  for (const [name, value] of Object.entries(source)) {
    if (name === 'limit') {
      if (typeof value === 'string' && WHOLE.test(value)) values.limit = Number(value);
      else details.push({ path: 'query.limit', rule: 'integer' });
    } else values[name] = value; // `after` checked by its pattern; anything else is reported without its name
  }
  if (!validate(values)) details.push(...toDetails('query', validate.errors));
  if (details.length > 0) throw new InvalidRequest(details);
  return { after: values.after as string | undefined, limit: values.limit as number | undefined };
}

/** `GET /v1/events` query: `after` (an event id, `evt_…`) and `limit` (1..1000, default 100). */
export function parseEventsQuery(query: unknown): { after: string | undefined; limit: number } {
  return parsePagedQuery(query, validateEventsQuery) as { after: string | undefined; limit: number };
}
