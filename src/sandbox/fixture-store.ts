import { randomInt } from 'node:crypto';
import type { BankAccount } from './ach/bank';
import type { CustomerTextField, FixtureCustomer, FixturePaymentMethod } from './fixtures';

/**
 * The live customers and payment methods: the fixture file's, plus what the API created, changed or removed
 * (wallet-customers.ts, wallet-methods.ts, a sale's `save_customer_paymethod`), and the live token of each
 * payment method (rotations, expiry overrides). `resetTokens()` puts everything back as the file has it.
 */

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

/** "YYYY-MM-DD hh:mm:ss" (UTC), as `added` and `updated` are written on the wire. */
export function wireStamp(now: Date): string {
  return now.toISOString().slice(0, 19).replace('T', ' ');
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
  /** The token of a payment method since removed (or of a removed customer's): SANDBOX_DELETED_CARDREF decides. */
  removed?: true;
}

export interface ResolvedMethod {
  customer: FixtureCustomer;
  method: FixturePaymentMethod;
}

/** A card as a new payment method receives it (never leaves the sandbox whole). */
export interface NewMethodCard {
  number: string;
  expiration: string;
  cardholder?: string;
  avs_street?: string;
  avs_postalcode?: string;
  method_name?: string;
}

/** The fields of a new customer (the fixture shape without keys and methods). */
export type NewCustomer = Pick<FixtureCustomer, 'customerid' | 'firstname' | 'lastname' | 'company' | 'email'> & { text: Record<CustomerTextField, string> };

/** How long the card of an approved transaction is kept for `pay_type: transaction` (count, oldest dropped first). */
const MAX_TRANSACTION_CARDS = 100_000;

interface Pristine {
  customer: FixtureCustomer;
  fields: Omit<FixtureCustomer, 'key' | 'custid' | 'payment_methods'>;
  methods: { method: FixturePaymentMethod; fields: FixturePaymentMethod }[];
}

function snapshot(c: FixtureCustomer): Pristine {
  const { customerid, firstname, lastname, company, email } = c;
  return {
    customer: c,
    fields: { customerid, firstname, lastname, company, email, text: { ...c.text }, custom_fields: { ...c.custom_fields } },
    methods: c.payment_methods.map((m) => ({ method: m, fields: { ...m } })),
  };
}

export class FixtureStore {
  private readonly byCustomer = new Map<string, FixtureCustomer>();
  private readonly tokens = new Map<FixturePaymentMethod, TokenState>();
  private readonly byCardref = new Map<string, ResolvedMethod>();
  /** Cards tokenised by a sale's `save_card`: not attached to a customer. One token per card and expiration. */
  private readonly saved = new Map<string, { number: string; expiration: string }>();
  private readonly savedByCard = new Map<string, string>();
  /** Tokens of removed payment methods (and of removed customers' methods), by cardref. */
  private readonly removed = new Map<string, TokenTarget>();
  /** The card of each approved transaction, for `pay_type: transaction` (kept inside the sandbox). */
  private readonly transactionCards = new Map<string, { number: string; expiration: string }>();
  /** The bank account of each approved check, for `pay_type: transaction` (kept inside the sandbox). */
  private readonly transactionChecks = new Map<string, BankAccount>();
  /** Keys and custids ever handed out in this run, so a removed customer's key never names another one. */
  private readonly usedIds = new Set<string>();
  private readonly pristine: Pristine[];
  private readonly live: FixtureCustomer[];

  constructor(readonly customers: readonly FixtureCustomer[]) {
    // The same array stays the list (server.ts hands it out); the API's creations and removals edit it in place.
    this.live = customers as FixtureCustomer[];
    this.pristine = customers.map(snapshot);
    this.resetTokens();
  }

  /** Back to the fixture file: its customers, fields, payment methods and tokens; nothing created or removed. */
  resetTokens(): void {
    this.live.splice(0, this.live.length, ...this.pristine.map((p) => p.customer));
    for (const p of this.pristine) {
      Object.assign(p.customer, { ...p.fields, text: { ...p.fields.text }, custom_fields: { ...p.fields.custom_fields } });
      p.customer.payment_methods.splice(0, p.customer.payment_methods.length, ...p.methods.map((m) => Object.assign(m.method, m.fields)));
    }
    this.byCustomer.clear();
    this.usedIds.clear();
    this.tokens.clear();
    this.byCardref.clear();
    this.saved.clear();
    this.savedByCard.clear();
    this.removed.clear();
    this.transactionCards.clear();
    this.transactionChecks.clear();
    for (const customer of this.live) {
      this.index(customer);
      for (const method of customer.payment_methods) {
        if (method.check) continue;
        this.tokens.set(method, { cardref: method.cardref, expires: lastDayOfExpiry(method.expiration) });
        this.byCardref.set(method.cardref, { customer, method });
        this.usedIds.add(method.key);
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

  /** A payment method's token, a saved card's, or a removed method's (flagged `removed`), whichever `cardref` is. */
  lookupToken(cardref: string): TokenTarget | undefined {
    const found = this.byCardref.get(cardref);
    if (found) return { number: found.method.number, expiration: found.method.expiration, expires: this.token(found.method).expires, custkey: found.customer.key, pmkey: found.method.key };
    const card = this.saved.get(cardref);
    if (card) return { number: card.number, expiration: card.expiration, expires: lastDayOfExpiry(card.expiration) };
    return this.removed.get(cardref);
  }

  /** `save_card` on a sale: the card's token (the same one again for the same card and expiration). */
  saveCard(number: string, expiration: string): string {
    const id = `${number}|${expiration}`;
    const known = this.savedByCard.get(id);
    if (known) return known;
    const ref = this.freshCardref();
    this.saved.set(ref, { number, expiration });
    this.savedByCard.set(id, ref);
    return ref;
  }

  /** Keeps the card an approved transaction charged, so `pay_type: transaction` can store it later. */
  rememberTransactionCard(trankey: string, card: { number: string; expiration: string }): void {
    if (this.transactionCards.size >= MAX_TRANSACTION_CARDS) this.transactionCards.delete(this.transactionCards.keys().next().value as string);
    this.transactionCards.set(trankey, { ...card });
  }

  transactionCard(trankey: string): { number: string; expiration: string } | undefined {
    return this.transactionCards.get(trankey);
  }

  /** Keeps the account an approved check debited, so `pay_type: transaction` can store it later. */
  rememberTransactionCheck(trankey: string, account: BankAccount): void {
    if (this.transactionChecks.size >= MAX_TRANSACTION_CARDS) this.transactionChecks.delete(this.transactionChecks.keys().next().value as string);
    this.transactionChecks.set(trankey, { ...account });
  }

  transactionCheck(trankey: string): BankAccount | undefined {
    return this.transactionChecks.get(trankey);
  }

  /**
   * A saved bank method (`pay_type` check, gateway-facts.md, ACH): listed last (or first with `sortord` 0), with no
   * card reference token (a token is a card's); charged by `customer:sale` with its key.
   */
  addBankMethod(customer: FixtureCustomer, account: BankAccount, methodName: string, now: Date, sortord?: number): FixturePaymentMethod {
    const all = this.live.flatMap((c) => c.payment_methods);
    const pmid = String(Math.max(2000000, ...all.map((m) => Number(m.pmid))) + 1);
    let key = randomAlnum(17);
    while (this.usedIds.has(key)) key = randomAlnum(17);
    const order = sortord ?? customer.payment_methods.length + 1;
    if (order === 0) for (const m of customer.payment_methods) if (m.sortord === '0') m.sortord = '1';
    const stamp = wireStamp(now);
    const method: FixturePaymentMethod = {
      key, pmid, method_name: methodName, cardholder: account.accountholder, number: '', expiration: '', cardref: '',
      avs_street: '', avs_postalcode: '', sortord: String(order), added: stamp, updated: stamp, check: { ...account },
    };
    customer.payment_methods.push(method);
    this.usedIds.add(key);
    return method;
  }

  /** `POST /customers`: a new customer, listed last, with a fresh key (16 lowercase alphanumerics) and custid. */
  createCustomer(fields: NewCustomer): FixtureCustomer {
    let key = randomAlnum(16);
    while (this.usedIds.has(key)) key = randomAlnum(16);
    const custid = String(Math.max(1000000, ...[...this.usedIds].filter((id) => /^\d{1,12}$/.test(id)).map(Number)) + 1);
    const customer: FixtureCustomer = { key, custid, ...fields, text: { ...fields.text }, custom_fields: {}, payment_methods: [] };
    this.live.push(customer);
    this.index(customer);
    return customer;
  }

  /** `DELETE /customers/{c}`: gone from every lookup; its methods' tokens are removed ones from now on. */
  deleteCustomer(customer: FixtureCustomer): void {
    for (const method of [...customer.payment_methods]) this.deleteMethod(customer, method);
    const i = this.live.indexOf(customer);
    if (i >= 0) this.live.splice(i, 1);
    this.byCustomer.delete(customer.key);
    this.byCustomer.delete(customer.custid);
  }

  /**
   * A new payment method of the customer, listed last, with its own card reference token. `sortord` 0 makes it
   * the default: the former default moves to 1 (gateway-facts.md, the wallet). Without one it is listed after
   * the others (count + 1), as a sale's `save_customer_paymethod` always did here.
   */
  addMethod(customer: FixtureCustomer, card: NewMethodCard, now: Date, sortord?: number): FixturePaymentMethod {
    const all = this.live.flatMap((c) => c.payment_methods);
    const pmid = String(Math.max(2000000, ...all.map((m) => Number(m.pmid))) + 1);
    let key = randomAlnum(17);
    while (this.usedIds.has(key)) key = randomAlnum(17);
    const cardref = this.freshCardref();
    const stamp = wireStamp(now);
    const order = sortord ?? customer.payment_methods.length + 1;
    if (order === 0) for (const m of customer.payment_methods) if (m.sortord === '0') m.sortord = '1';
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
      sortord: String(order),
      added: stamp,
      updated: stamp,
    };
    customer.payment_methods.push(method);
    this.usedIds.add(key);
    this.tokens.set(method, { cardref, expires: lastDayOfExpiry(card.expiration) });
    this.byCardref.set(cardref, { customer, method });
    return method;
  }

  /** A renewed card (`PUT … expires`): the token lives until the new expiry month ends. */
  setExpiration(method: FixturePaymentMethod, mmyy: string): void {
    method.expiration = mmyy;
    this.token(method).expires = lastDayOfExpiry(mmyy);
  }

  /** `DELETE /customers/{c}/payment_methods/{pm}`: unlisted; its token is a removed one from now on. */
  deleteMethod(customer: FixtureCustomer, method: FixturePaymentMethod): void {
    const i = customer.payment_methods.indexOf(method);
    if (i >= 0) customer.payment_methods.splice(i, 1);
    const state = this.token(method);
    if (!state) return;
    this.byCardref.delete(state.cardref);
    this.removed.set(state.cardref, { number: method.number, expiration: method.expiration, expires: state.expires, custkey: customer.key, pmkey: method.key, removed: true });
    this.tokens.delete(method);
  }

  rotate(custkey: string, pmkey: string): string {
    const { customer, method } = this.resolve(custkey, pmkey);
    const state = this.token(method);
    this.byCardref.delete(state.cardref);
    const next = this.freshCardref();
    state.cardref = next;
    this.byCardref.set(next, { customer, method });
    return next;
  }

  setExpires(custkey: string, pmkey: string, expires: string): void {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(expires) || Number.isNaN(Date.parse(`${expires}T00:00:00Z`))) throw new Error('expires must be YYYY-MM-DD');
    this.token(this.resolve(custkey, pmkey).method).expires = expires;
  }

  private index(customer: FixtureCustomer): void {
    this.byCustomer.set(customer.key, customer);
    this.byCustomer.set(customer.custid, customer);
    this.usedIds.add(customer.key);
    this.usedIds.add(customer.custid);
  }

  private freshCardref(): string {
    let ref = newCardref();
    while (this.byCardref.has(ref) || this.saved.has(ref) || this.removed.has(ref)) ref = newCardref();
    return ref;
  }
}
