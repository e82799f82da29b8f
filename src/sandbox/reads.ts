import { last4, type BankAccount } from './ach/bank';
import { CARD_TYPE_CODE, brandOf } from './cards';
import { ERRORS, errorBody, type GatewayErrorBody } from './errors';
import { CUSTOMER_TEXT_FIELDS, type FixtureCustomer, type FixturePaymentMethod, type FixtureStore } from './fixtures';
import type { SandboxWireFormat } from './settings';

/** The read endpoints: customers list, payment-methods list, card reference token (spec §2.2, §2.5, §4). */

export interface Answer {
  status: number;
  body: unknown;
}

export const fail = (e: (typeof ERRORS)[keyof typeof ERRORS], detail?: string): Answer => ({ status: e.status, body: errorBody(e, detail) satisfies GatewayErrorBody });

/** Default 20 (gateway-facts.md, Pagination); the maximum 1000 is the emulator's (docs' examples use 1000). */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 1000;

export type Query = Record<string, unknown>;

function parsePaging(query: Query): { limit: number; offset: number } | undefined {
  const read = (name: string, fallback: number, max: number): number | undefined => {
    const v = query[name];
    if (v === undefined) return fallback;
    if (typeof v !== 'string' || !/^\d{1,9}$/.test(v)) return undefined;
    const n = Number(v);
    return n <= max ? n : undefined;
  };
  const limit = read('limit', DEFAULT_LIMIT, MAX_LIMIT);
  const offset = read('offset', 0, 999_999_999);
  return limit === undefined || offset === undefined ? undefined : { limit, offset };
}

/** `total` is an integer in the spec and a string on the wire (UsaEPay.NET WireFormatDeserializationTests, CustomerList). */
export function list<T>(items: readonly T[], query: Query, view: (item: T) => unknown, format: SandboxWireFormat): Answer {
  const paging = parsePaging(query);
  if (!paging) return fail(ERRORS.invalidListParam, `limit must be 0..${MAX_LIMIT}, offset a non-negative integer`);
  const data = items.slice(paging.offset, paging.offset + paging.limit).map(view);
  return { status: 200, body: { type: 'list', limit: paging.limit, offset: paging.offset, data, total: format === 'wire' ? String(items.length) : items.length } };
}

const CUSTOM_FIELD_NAMES = Array.from({ length: 20 }, (_, i) => String(i + 1));

/**
 * Field set and order of the captured customer (UsaEPay.NET WireFormatDeserializationTests, CustomerGet /
 * CustomerList): `custom_fields` "1".."20", null when unset. The spec's `firstname`/`lastname` ride beside the
 * wire's names unless the wire format is asked for.
 */
export function customerView(c: FixtureCustomer, format: SandboxWireFormat = 'spec'): Record<string, unknown> {
  const t = c.text;
  return {
    key: c.key,
    type: 'customer',
    customerid: c.customerid,
    custid: c.custid,
    company: c.company,
    ...(format === 'spec' ? { firstname: c.firstname, lastname: c.lastname } : {}),
    first_name: c.firstname,
    last_name: c.lastname,
    ...Object.fromEntries(CUSTOMER_TEXT_FIELDS.slice(0, 8).map((f) => [f, t[f]])), // street … fax
    email: c.email,
    url: t.url,
    notes: t.notes,
    description: t.description,
    custom_fields: Object.fromEntries(CUSTOM_FIELD_NAMES.map((n) => [n, c.custom_fields[n] ?? null])),
  };
}

/**
 * Masked: never the full number. Field set and order of the captured card method (UsaEPay.NET
 * WireFormatDeserializationTests, PaymentMethodList): `expires` is the card's MMYY, `sortord` a string.
 */
export function paymentMethodView(m: FixturePaymentMethod, format: SandboxWireFormat = 'spec'): Record<string, unknown> {
  if (m.check) return bankMethodView(m, m.check, format);
  return {
    key: m.key,
    type: 'customerpaymentmethod',
    ...(format === 'spec' ? { pmid: m.pmid } : {}),
    method_name: m.method_name,
    expires: m.expiration,
    cardholder: m.cardholder,
    card_type: brandOf(m.number),
    ccnum4last: m.number.slice(-4),
    avs_street: m.avs_street,
    avs_postalcode: m.avs_postalcode,
    sortord: m.sortord,
    added: m.added,
    updated: m.updated,
    pay_type: 'cc',
  };
}

/**
 * A saved bank method as the gateway lists one (gateway-facts.md, ACH: `{"method_name","account_number":"3210",
 * "routing_number":"6789","pay_type":"check"}`, last four only), with the other fields of the captured list's check
 * item (key, type, sortord, added, updated) and, in the spec form only, `account_type` (a field of a saved check
 * method's request; absent from the capture).
 */
function bankMethodView(m: FixturePaymentMethod, account: BankAccount, format: SandboxWireFormat): Record<string, unknown> {
  return {
    key: m.key,
    type: 'customerpaymentmethod',
    ...(format === 'spec' ? { pmid: m.pmid } : {}),
    method_name: m.method_name,
    account_number: last4(account.account),
    routing_number: last4(account.routing),
    // Not in the captured list item (test/fixtures/wire/payment-method-list.json): the spec form adds it, the wire form does not.
    ...(format === 'spec' ? { account_type: account.account_type } : {}),
    sortord: m.sortord,
    added: m.added,
    updated: m.updated,
    pay_type: 'check',
  };
}

export function listCustomers(store: FixtureStore, query: Query, format: SandboxWireFormat = 'spec'): Answer {
  return list(store.customers, query, (c) => customerView(c, format), format);
}

/** One customer with its payment methods and (none emulated) billing schedules, as the captured GET. */
export function getCustomer(store: FixtureStore, customerId: string, format: SandboxWireFormat = 'spec'): Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  return { status: 200, body: { ...customerView(customer, format), billing_schedules: [], payment_methods: customer.payment_methods.map((m) => paymentMethodView(m, format)) } };
}

export function listPaymentMethods(store: FixtureStore, customerId: string, query: Query, format: SandboxWireFormat = 'spec'): Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  return list(customer.payment_methods, query, (m) => paymentMethodView(m, format), format);
}

export function getPaymentMethod(store: FixtureStore, customerId: string, methodId: string, format: SandboxWireFormat = 'spec'): Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  const method = store.method(customer, methodId);
  if (!method) return fail(ERRORS.paymentMethodNotFound);
  return { status: 200, body: paymentMethodView(method, format) };
}

export function cardrefFor(store: FixtureStore, customerId: string, methodId: string): Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  const method = store.method(customer, methodId);
  if (!method) return fail(ERRORS.paymentMethodNotFound);
  // A bank method has no card reference token (a token is a card's): as a method the token call cannot serve.
  if (method.check) return fail(ERRORS.paymentMethodNotFound);
  const token = store.token(method);
  return {
    status: 200,
    body: { type: 'token', cardref: token.cardref, expires: token.expires, ccnumlast4: method.number.slice(-4), cardtype: CARD_TYPE_CODE[brandOf(method.number)], custkey: customer.key, pmkey: method.key },
  };
}
