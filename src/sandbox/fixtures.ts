import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BankAccount } from './ach/bank';
import { CARDREF_SHAPE, isCardNumber } from './cards';

/**
 * Customers and payment methods of config/sandbox-fixtures.json (test cards only): the file's format and its
 * checks. The live state (tokens, customers and methods created or removed through the API) is FixtureStore,
 * fixture-store.ts.
 */

export interface FixturePaymentMethod {
  key: string;
  /** Legacy numeric ID, accepted in paths in place of the key (spec §4). */
  pmid: string;
  method_name: string;
  cardholder: string;
  /** Full test card number: test data, never sent over the wire. */
  number: string;
  /** MMYY */
  expiration: string;
  /** The card reference token as first issued (see FixtureStore.cardrefFor for the live one). */
  cardref: string;
  avs_street: string;
  avs_postalcode: string;
  /** Display order among the customer's methods; a string on GET at the real gateway. */
  sortord: string;
  added: string;
  updated: string;
  /** A saved bank method (`pay_type` check; ach/bank.ts): `number`, `expiration` and `cardref` are then ''. */
  check?: BankAccount;
}

/** Address and contact fields a real customer object carries (UsaEPay.NET WireFormatDeserializationTests, CustomerGet). */
export const CUSTOMER_TEXT_FIELDS = ['street', 'street2', 'city', 'state', 'postalcode', 'country', 'phone', 'fax', 'url', 'notes', 'description'] as const;
export type CustomerTextField = (typeof CUSTOMER_TEXT_FIELDS)[number];

export interface FixtureCustomer {
  key: string;
  /** Legacy numeric ID. */
  custid: string;
  customerid: string;
  firstname: string;
  lastname: string;
  company: string;
  email: string;
  text: Record<CustomerTextField, string>;
  /** Custom fields "1".."20" that have a value; the others are null on the wire. */
  custom_fields: Record<string, string>;
  payment_methods: FixturePaymentMethod[];
}

export const DEFAULT_FIXTURES_FILE = path.resolve(__dirname, '..', '..', 'config', 'sandbox-fixtures.json');

const KEY = /^[a-z0-9]{8,32}$/;
const NUMERIC = /^\d{1,12}$/;

function fail(where: string, what: string): never {
  throw new Error(`sandbox fixtures: ${where} ${what}`);
}

function str(obj: Record<string, unknown>, name: string, where: string, pattern?: RegExp): string {
  const v = obj[name];
  if (typeof v !== 'string' || v.length === 0 || (pattern && !pattern.test(v))) fail(where, `.${name} is missing or malformed`);
  return v;
}

/** Optional text: absent means empty, as the real gateway sends "" for unset fields. */
function text(obj: Record<string, unknown>, name: string, where: string): string {
  const v = obj[name];
  if (v === undefined) return '';
  if (typeof v !== 'string') fail(where, `.${name} must be a string`);
  return v;
}

function customFields(raw: unknown, where: string): Record<string, string> {
  if (raw === undefined) return {};
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail(where, '.custom_fields must be an object');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!/^([1-9]|1\d|20)$/.test(k) || typeof v !== 'string') fail(where, '.custom_fields must map "1".."20" to strings');
    out[k] = v;
  }
  return out;
}

/** Parses and checks the fixture file once at start, so a bad edit fails loudly instead of answering oddly. */
export function parseFixtures(raw: unknown): FixtureCustomer[] {
  const list = (raw as { customers?: unknown } | null)?.customers;
  if (!Array.isArray(list) || list.length === 0) fail('file', 'must hold a non-empty "customers" array');
  const keys = new Set<string>();
  const unique = (k: string, where: string) => {
    if (keys.has(k)) fail(where, `repeats the key or id ${k}`);
    keys.add(k);
  };
  return list.map((c: Record<string, unknown>, i) => {
    const w = `customers[${i}]`;
    const pms = c.payment_methods;
    if (!Array.isArray(pms)) fail(w, '.payment_methods must be an array');
    const customer: FixtureCustomer = {
      key: str(c, 'key', w, KEY),
      custid: str(c, 'custid', w, NUMERIC),
      customerid: str(c, 'customerid', w),
      firstname: str(c, 'firstname', w),
      lastname: str(c, 'lastname', w),
      company: str(c, 'company', w),
      email: str(c, 'email', w),
      text: Object.fromEntries(CUSTOMER_TEXT_FIELDS.map((f) => [f, text(c, f, w)])) as Record<CustomerTextField, string>,
      custom_fields: customFields(c.custom_fields, w),
      payment_methods: pms.map((p: Record<string, unknown>, j) => {
        const pw = `${w}.payment_methods[${j}]`;
        const number = str(p, 'number', pw);
        if (!isCardNumber(number)) fail(pw, '.number is not a Luhn-valid card number');
        const pm: FixturePaymentMethod = {
          key: str(p, 'key', pw, KEY),
          pmid: str(p, 'pmid', pw, NUMERIC),
          method_name: str(p, 'method_name', pw),
          cardholder: str(p, 'cardholder', pw),
          number,
          expiration: str(p, 'expiration', pw, /^(0[1-9]|1[0-2])\d\d$/),
          cardref: str(p, 'cardref', pw, CARDREF_SHAPE),
          avs_street: text(p, 'avs_street', pw),
          avs_postalcode: text(p, 'avs_postalcode', pw),
          sortord: str(p, 'sortord', pw, NUMERIC),
          added: str(p, 'added', pw),
          updated: str(p, 'updated', pw),
        };
        for (const k of [pm.key, `pm:${pm.pmid}`, `ref:${pm.cardref}`]) unique(k, pw);
        return pm;
      }),
    };
    for (const k of [customer.key, `c:${customer.custid}`]) unique(k, w);
    return customer;
  });
}

export function loadFixtures(file = DEFAULT_FIXTURES_FILE): FixtureCustomer[] {
  return parseFixtures(JSON.parse(readFileSync(file, 'utf8')));
}

// The live store and its helpers, re-exported so the emulator's modules import one place for fixture data.
export { FixtureStore, lastDayOfExpiry, newCardref, randomAlnum } from './fixture-store';
export type { ResolvedMethod, TokenState, TokenTarget } from './fixture-store';
