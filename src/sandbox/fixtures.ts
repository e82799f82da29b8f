import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { CARDREF_SHAPE, isCardNumber } from './cards';

/** Customers and payment methods of config/sandbox-fixtures.json (test cards only), plus live token state. */

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

/** `YYYY-MM-DD` of the last day of the card's expiry month: a token lives as long as its payment method. */
export function lastDayOfExpiry(mmyy: string): string {
  const month = Number(mmyy.slice(0, 2));
  const year = 2000 + Number(mmyy.slice(2));
  const last = new Date(Date.UTC(year, month, 0));
  return last.toISOString().slice(0, 10);
}

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
export function randomAlnum(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALNUM[randomInt(ALNUM.length)];
  return out;
}

export function newCardref(): string {
  return [randomAlnum(4), randomAlnum(4), randomAlnum(4), randomAlnum(4)].join('-');
}

export interface TokenState {
  cardref: string;
  expires: string;
}

/** What a token charges, and the last day (YYYY-MM-DD) it works. */
export interface TokenTarget {
  number: string;
  /** The card's MMYY. */
  expiration: string;
  expires: string;
  custkey?: string;
  pmkey?: string;
}

export interface ResolvedMethod {
  customer: FixtureCustomer;
  method: FixturePaymentMethod;
}

/** Lookups by key or legacy ID, and the live token of each payment method (rotations, expiry overrides). */
export class FixtureStore {
  private readonly byCustomer = new Map<string, FixtureCustomer>();
  private readonly tokens = new Map<FixturePaymentMethod, TokenState>();
  private readonly byCardref = new Map<string, ResolvedMethod>();
  /** Cards tokenised by a sale's `save_card`: not attached to a customer. One token per card and expiration. */
  private readonly saved = new Map<string, { number: string; expiration: string }>();
  private readonly savedByCard = new Map<string, string>();
  /** Payment methods added by a sale's `save_customer_paymethod` (removed again by a reset). */
  private readonly added = new Set<FixturePaymentMethod>();

  constructor(readonly customers: readonly FixtureCustomer[]) {
    for (const c of customers) {
      this.byCustomer.set(c.key, c);
      this.byCustomer.set(c.custid, c);
    }
    this.resetTokens();
  }

  /** Back to the tokens (and payment methods) of the fixture file. */
  resetTokens(): void {
    for (const c of this.customers) {
      const kept = c.payment_methods.filter((m) => !this.added.has(m));
      c.payment_methods.splice(0, c.payment_methods.length, ...kept);
    }
    this.added.clear();
    this.tokens.clear();
    this.byCardref.clear();
    this.saved.clear();
    this.savedByCard.clear();
    for (const customer of this.customers) {
      for (const method of customer.payment_methods) {
        this.tokens.set(method, { cardref: method.cardref, expires: lastDayOfExpiry(method.expiration) });
        this.byCardref.set(method.cardref, { customer, method });
      }
    }
  }

  customer(keyOrId: string): FixtureCustomer | undefined {
    return this.byCustomer.get(keyOrId);
  }

  method(customer: FixtureCustomer, keyOrId: string): FixturePaymentMethod | undefined {
    return customer.payment_methods.find((m) => m.key === keyOrId || m.pmid === keyOrId);
  }

  resolve(custkey: string, pmkey: string): ResolvedMethod {
    const customer = this.customer(custkey);
    const method = customer && this.method(customer, pmkey);
    if (!customer || !method) throw new Error(`sandbox fixtures: no payment method ${pmkey} for customer ${custkey}`);
    return { customer, method };
  }

  token(method: FixturePaymentMethod): TokenState {
    return this.tokens.get(method) as TokenState;
  }

  byToken(cardref: string): ResolvedMethod | undefined {
    return this.byCardref.get(cardref);
  }

  /** A fixture payment method's token or a saved card's, whichever `cardref` is. */
  lookupToken(cardref: string): TokenTarget | undefined {
    const found = this.byCardref.get(cardref);
    if (found) return { number: found.method.number, expiration: found.method.expiration, expires: this.token(found.method).expires, custkey: found.customer.key, pmkey: found.method.key };
    const card = this.saved.get(cardref);
    return card && { number: card.number, expiration: card.expiration, expires: lastDayOfExpiry(card.expiration) };
  }

  /** `save_card` on a sale: the card's token (the same one again for the same card and expiration). */
  saveCard(number: string, expiration: string): string {
    const id = `${number}|${expiration}`;
    const known = this.savedByCard.get(id);
    if (known) return known;
    let ref = newCardref();
    while (this.byCardref.has(ref) || this.saved.has(ref)) ref = newCardref();
    this.saved.set(ref, { number, expiration });
    this.savedByCard.set(id, ref);
    return ref;
  }

  /**
   * `save_customer_paymethod` on a sale or authonly: the card becomes a new payment method of the customer,
   * listed last, with its own card reference token (returned as `savedcard.key` when `save_card` is asked).
   */
  addMethod(customer: FixtureCustomer, card: { number: string; expiration: string; cardholder?: string; avs_street?: string; avs_postalcode?: string; method_name?: string }, now: Date): FixturePaymentMethod {
    const all = this.customers.flatMap((c) => c.payment_methods);
    const pmid = String(Math.max(2000000, ...all.map((m) => Number(m.pmid))) + 1);
    let key = randomAlnum(17);
    while (all.some((m) => m.key === key)) key = randomAlnum(17);
    let cardref = newCardref();
    while (this.byCardref.has(cardref) || this.saved.has(cardref)) cardref = newCardref();
    const stamp = now.toISOString().slice(0, 19).replace('T', ' ');
    const method: FixturePaymentMethod = {
      key,
      pmid,
      method_name: card.method_name ?? '',
      cardholder: card.cardholder ?? '',
      number: card.number,
      expiration: card.expiration,
      cardref,
      avs_street: card.avs_street ?? '',
      avs_postalcode: card.avs_postalcode ?? '',
      sortord: String(customer.payment_methods.length + 1),
      added: stamp,
      updated: stamp,
    };
    customer.payment_methods.push(method);
    this.added.add(method);
    this.tokens.set(method, { cardref, expires: lastDayOfExpiry(card.expiration) });
    this.byCardref.set(cardref, { customer, method });
    return method;
  }

  rotate(custkey: string, pmkey: string): string {
    const { customer, method } = this.resolve(custkey, pmkey);
    const state = this.token(method);
    this.byCardref.delete(state.cardref);
    let next = newCardref();
    while (this.byCardref.has(next) || this.saved.has(next)) next = newCardref();
    state.cardref = next;
    this.byCardref.set(next, { customer, method });
    return next;
  }

  setExpires(custkey: string, pmkey: string, expires: string): void {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(expires) || Number.isNaN(Date.parse(`${expires}T00:00:00Z`))) throw new Error('expires must be YYYY-MM-DD');
    this.token(this.resolve(custkey, pmkey).method).expires = expires;
  }
}
