import { containsPan, redactPans } from '../card/pan';
import { ShapeError, obj, str, type Obj } from './parse-fields';
import { CUSTOMER_FIELDS, type Customer, type PaymentMethod } from './types';

/**
 * The wallet's answers (gateway-facts.md, "Managing customers and payment methods" and the real wire shapes),
 * parsed once into typed values. Fields tokengate does not use (`custom_fields`, `billing_schedules`, the
 * emulator's `pmid`, a check's account digits) are not carried on. A card-shaped number (the one detector,
 * src/card) in a field is redacted before anything is read, and the answer kept: most of these fields are
 * text a merchant or a clerk typed (phone, fax, notes, description, customerid, method_name, cardholder), where
 * such a number may stand by chance; refusing the answer made the shopper's whole wallet unreadable (a 5xx per
 * read), as refusing a signed webhook lost it (src/webhooks/intake.ts). Card data still never leaves the gateway
 * client. What is structurally wrong (type, key, expires, sortord, the lists) is still refused.
 */

/** Told which field of which answer had a card-shaped number redacted: never the number itself. */
export type OnRedacted = (answer: 'customer' | 'payment method', field: string) => void;

/** What stands in a field's text where a card-shaped number was (the webhook intake's replacement). */
export const REDACTED = '[redacted]';

/**
 * The answer's own fields (text, and numbers: the gateway sends some as JSON numbers) with every card-shaped
 * number replaced, each field reported. A card-shaped `key` is refused instead: it names the record every
 * later call addresses, and a redacted one would name another.
 */
function withoutCardData(o: Obj, what: 'customer' | 'payment method', onRedacted: OnRedacted | undefined): Obj {
  let out: Obj | undefined;
  for (const [field, v] of Object.entries(o)) {
    if (typeof v !== 'string' && !(typeof v === 'number' && Number.isFinite(v))) continue;
    const text = String(v);
    if (!containsPan(text)) continue;
    if (field === 'key') throw new ShapeError(`${what} key is card-shaped`);
    out ??= { ...o };
    out[field] = redactPans(text, REDACTED);
    onRedacted?.(what, field);
  }
  return out ?? o;
}

function typed(o: Obj, type: string): void {
  if (o.type !== undefined && o.type !== type) throw new ShapeError(`type is not ${type}`);
}

function key(o: Obj): string {
  const k = str(o, 'key') as string;
  if (k === '') throw new ShapeError('key is empty');
  return k;
}

/** MMYY as on the wire; the reference's examples write `YYYY-MM-DD` (a check's `0000-00-00` has none). */
function expires(o: Obj): string {
  const v = str(o, 'expires', false) ?? '';
  if (v === '' || v === '0000-00-00') return '';
  if (/^(0[1-9]|1[0-2])\d\d$/.test(v)) return v;
  const m = /^\d\d(\d\d)-(0[1-9]|1[0-2])-\d\d$/.exec(v);
  if (m) return `${m[2]}${m[1]}`;
  throw new ShapeError('expires is neither MMYY nor a date');
}

/** A number in add answers, a string on reads (gateway-facts.md); absent in some of the reference's examples. */
function sortord(o: Obj): number | undefined {
  const v = str(o, 'sortord', false);
  if (v === undefined) return undefined;
  if (!/^\d{1,6}$/.test(v)) throw new ShapeError('sortord is not a whole number');
  return Number(v);
}

export function parsePaymentMethod(value: unknown, onRedacted?: OnRedacted): PaymentMethod {
  const o = withoutCardData(obj(value, 'payment method'), 'payment method', onRedacted);
  typed(o, 'customerpaymentmethod');
  const order = sortord(o);
  const text = (f: string) => str(o, f, false) ?? '';
  return {
    type: 'customerpaymentmethod',
    key: key(o),
    pay_type: str(o, 'pay_type', false) || 'cc',
    method_name: text('method_name'),
    cardholder: text('cardholder'),
    expires: expires(o),
    card_type: text('card_type'),
    ccnum4last: text('ccnum4last'),
    avs_street: text('avs_street'),
    avs_postalcode: text('avs_postalcode'),
    ...(order !== undefined ? { sortord: order } : {}),
    // The gateway's default is the method at sortord 0; it never names one otherwise (gateway-facts.md).
    default: order === 0,
    added: text('added'),
    updated: text('updated'),
    ...(str(o, 'pay_type', false) === 'check' ? bankOf(o) : {}),
  };
}

/**
 * A saved bank method's masks (gateway-facts.md, ACH: `account_number` and `routing_number`, last four only). Only
 * the last four digits are ever kept, whatever the answer holds; `account_type` where the answer has one.
 */
function bankOf(o: Record<string, unknown>): Pick<PaymentMethod, 'account_last4' | 'routing_last4' | 'account_type'> {
  const last4 = (f: string) => (str(o, f, false) ?? '').replace(/\D/g, '').slice(-4);
  const type = str(o, 'account_type', false);
  return { account_last4: last4('account_number'), routing_last4: last4('routing_number'), ...(type === 'checking' || type === 'savings' ? { account_type: type } : {}) };
}

/** `POST /customers/{c}/payment_methods`: an ARRAY, in request order, even for one method. */
export function parsePaymentMethods(body: unknown, onRedacted?: OnRedacted): PaymentMethod[] {
  if (!Array.isArray(body)) throw new ShapeError('payment methods are not an array');
  return body.map((m: unknown) => parsePaymentMethod(m, onRedacted));
}

/** A customer: create and update answers (`payment_methods` null), `GET /customers/{c}` (with them), list items. */
export function parseCustomer(value: unknown, onRedacted?: OnRedacted): Customer {
  const o = withoutCardData(obj(value, 'customer'), 'customer', onRedacted);
  typed(o, 'customer');
  const fields = Object.fromEntries(CUSTOMER_FIELDS.map((f) => [f, str(o, f, false) ?? ''])) as Record<(typeof CUSTOMER_FIELDS)[number], string>;
  // The spec's example names them firstname/lastname (gateway-api-v2.md §2.1); the wire first_name/last_name.
  fields.first_name ||= str(o, 'firstname', false) ?? '';
  fields.last_name ||= str(o, 'lastname', false) ?? '';
  const methods = o.payment_methods;
  if (methods !== undefined && methods !== null && !Array.isArray(methods)) throw new ShapeError('payment_methods is not an array');
  return {
    type: 'customer',
    key: key(o),
    custid: str(o, 'custid', false) ?? '',
    ...fields,
    ...(Array.isArray(methods) ? { payment_methods: methods.map((m: unknown) => parsePaymentMethod(m, onRedacted)) } : {}),
  };
}

/** The answer of a DELETE: `{"status":"success"}`; anything else is not proof that it was removed. */
export function parseDeleted(body: unknown): void {
  const o = obj(body, 'delete answer');
  if (o.status !== 'success') throw new ShapeError('status is not success');
}
