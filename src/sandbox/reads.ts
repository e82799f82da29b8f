import { CARD_TYPE_CODE, brandOf } from './cards';
import { ERRORS, errorBody, type GatewayErrorBody } from './errors';
import type { FixtureCustomer, FixturePaymentMethod, FixtureStore } from './fixtures';

/** The read endpoints: customers list, payment-methods list, card reference token (spec §2.2, §2.5, §4). */

export interface Answer {
  status: number;
  body: unknown;
}

const fail = (e: (typeof ERRORS)[keyof typeof ERRORS], detail?: string): Answer => ({ status: e.status, body: errorBody(e, detail) satisfies GatewayErrorBody });

/** Default 20 (gateway-facts.md, Pagination); the maximum 1000 is the emulator's (docs' examples use 1000). */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 1000;

type Query = Record<string, unknown>;

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

function list<T>(items: readonly T[], query: Query, view: (item: T) => unknown): Answer {
  const paging = parsePaging(query);
  if (!paging) return fail(ERRORS.invalidListParam, `limit must be 0..${MAX_LIMIT}, offset a non-negative integer`);
  const data = items.slice(paging.offset, paging.offset + paging.limit).map(view);
  return { status: 200, body: { type: 'list', limit: paging.limit, offset: paging.offset, data, total: items.length } };
}

/** Spec names (firstname/lastname) plus the wire names seen at the real gateway (gateway-facts.md). */
export function customerView(c: FixtureCustomer): Record<string, unknown> {
  return {
    type: 'customer',
    key: c.key,
    custid: c.custid,
    customerid: c.customerid,
    firstname: c.firstname,
    lastname: c.lastname,
    first_name: c.firstname,
    last_name: c.lastname,
    company: c.company,
    email: c.email,
  };
}

/** Masked: never the full number (gateway-facts.md, Customers and payment methods). */
export function paymentMethodView(m: FixturePaymentMethod, expires: string): Record<string, unknown> {
  return {
    type: 'customerpaymentmethod',
    key: m.key,
    pmid: m.pmid,
    method_name: m.method_name,
    cardholder: m.cardholder,
    expires,
    card_type: brandOf(m.number),
    ccnum4last: m.number.slice(-4),
    pay_type: 'cc',
    added: m.added,
    updated: m.updated,
  };
}

export function listCustomers(store: FixtureStore, query: Query): Answer {
  return list(store.customers, query, customerView);
}

export function listPaymentMethods(store: FixtureStore, customerId: string, query: Query): Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  return list(customer.payment_methods, query, (m) => paymentMethodView(m, store.token(m).expires));
}

export function cardrefFor(store: FixtureStore, customerId: string, methodId: string): Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  const method = store.method(customer, methodId);
  if (!method) return fail(ERRORS.paymentMethodNotFound);
  const token = store.token(method);
  return {
    status: 200,
    body: { type: 'token', cardref: token.cardref, expires: token.expires, ccnumlast4: method.number.slice(-4), cardtype: CARD_TYPE_CODE[brandOf(method.number)], custkey: customer.key, pmkey: method.key },
  };
}
