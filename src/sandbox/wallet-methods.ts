import { passesAba, readBankAccount, type BankAccount } from './ach/bank';
import { isCardNumber, maskCardNumber } from './cards';
import type { SandboxCore } from './core';
import { ERRORS } from './errors';
import type { FixtureCustomer, FixturePaymentMethod } from './fixtures';
import { wireStamp, type FixtureStore, type NewMethodCard } from './fixture-store';
import { fail, paymentMethodView, type Answer } from './reads';
import { expirationState, isTruthyFlag } from './sale-request';

/**
 * A customer's payment methods (gateway-facts.md, the wallet):
 *   POST   a JSON array, even for one method: card items (`pay_type` "cc") or `{"pay_type":"transaction",
 *          "transaction_key"}` (the card of an approved transaction). All are checked before any is added (a
 *          failure is one error object, nothing added); the answer is an array in request order.
 *   PUT    only `method_name`, `expires` (MMYY), `avs_street`, `avs_postalcode`; any other field is refused
 *          (emulator choice: "to change other fields, delete and add a new one"); `updated` is bumped.
 *   DELETE `{"status":"success"}`; the method's card reference is a removed one from then on
 *          (SANDBOX_DELETED_CARDREF).
 * The default is `sortord` 0 (`default: true`, or `sortord: 0`); making one the default moves the former one to 1.
 * Answers carry no `pmid` and no field naming the default; `sortord` is a number in the POST answer.
 */

const MAX_METHODS_PER_CALL = 100;
const TEXT_FIELDS = ['method_name', 'cardholder', 'avs_street', 'avs_postalcode'] as const;
const UPDATABLE = new Set(['method_name', 'expires', 'avs_street', 'avs_postalcode']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A text field: a string (or a number, as the reference sends postal codes), null or absent. */
function text(o: Record<string, unknown>, name: string): { value: string | undefined } | { answer: Answer } {
  const v = o[name];
  if (v === undefined) return { value: undefined };
  const value = v === null ? '' : typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
  if (typeof value !== 'string' || value.length > 255) return { answer: fail(ERRORS.invalidField, `${name} must be a string of at most 255 characters`) };
  return { value };
}

/** Where the new method sorts: 0 when it is to be the default, else the `sortord` asked, else after the others. */
function sortordOf(item: Record<string, unknown>): { value: number | undefined } | { answer: Answer } {
  if (isTruthyFlag(item.default)) return { value: 0 };
  const v = item.sortord;
  if (v === undefined || v === null || v === '') return { value: undefined };
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,3}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0 || n > 999) return { answer: fail(ERRORS.invalidField, 'sortord must be a whole number in 0..999') };
  return { value: n };
}

interface Pending {
  card?: NewMethodCard;
  /** A bank method (`pay_type` check, or the account of a check transaction). */
  bank?: { account: BankAccount; name: string };
  sortord: number | undefined;
}

const holderOf = (c: FixtureCustomer) => `${c.firstname} ${c.lastname}`.trim() || c.company;

function readItem(core: SandboxCore, customer: FixtureCustomer, item: unknown, now: Date): Pending | Answer {
  if (!isRecord(item)) return fail(ERRORS.invalidField, 'each payment method must be an object');
  const given: Partial<Record<(typeof TEXT_FIELDS)[number], string>> = {};
  for (const f of TEXT_FIELDS) {
    const t = text(item, f);
    if ('answer' in t) return t.answer;
    if (t.value !== undefined) given[f] = t.value;
  }
  const order = sortordOf(item);
  if ('answer' in order) return order.answer;
  let card: { number: string; expiration: string };
  const bankName = (a: BankAccount) => given.method_name || `${a.account_type === 'savings' ? 'Savings' : 'Checking'} ${a.account.slice(-4)}`;
  if (item.pay_type === 'transaction' && typeof item.transaction_key === 'string' && core.fixtures.transactionCheck(item.transaction_key)) {
    // The account of an approved check (gateway-facts.md, ACH: a bank method "is saved from a transaction").
    const account = core.fixtures.transactionCheck(item.transaction_key) as BankAccount;
    return { bank: { account, name: bankName(account) }, sortord: order.value };
  }
  if (item.pay_type === 'check') {
    const bank = readBank(core, item);
    if ('status' in bank) return bank;
    return { bank: { account: bank, name: bankName(bank) }, sortord: order.value };
  }
  if (item.pay_type === 'transaction') {
    if (typeof item.transaction_key !== 'string' || item.transaction_key === '') return fail(ERRORS.invalidField, 'transaction_key must be a string');
    const charged = core.fixtures.transactionCard(item.transaction_key);
    // Known but without a card to keep (a decline, a refund): nothing to save. Unknown: the lookup's 20001.
    if (!charged) return fail(core.lifecycle.get(item.transaction_key) ? ERRORS.noPaymentMethods : ERRORS.savedTransactionNotFound);
    card = charged;
  } else if (item.pay_type === 'cc') {
    if (typeof item.number !== 'string' || !isCardNumber(item.number)) return fail(ERRORS.invalidCardNumber);
    // `expiration` in the reference's single-card example, `expires` in its several-methods one.
    const exp = item.expiration ?? item.expires;
    if (typeof exp !== 'string' || expirationState(exp, now) !== 'ok') return fail(ERRORS.invalidExpiration);
    card = { number: item.number, expiration: exp };
  } else if (item.pay_type === 'giftcard') {
    return fail(ERRORS.invalidField, 'pay_type giftcard is not emulated by the sandbox');
  } else {
    return fail(ERRORS.invalidField, 'pay_type must be cc, check or transaction');
  }
  // Unnamed, a method is named by its masked number (as a sale's save_customer_paymethod names it here); the
  // cardholder defaults to the customer's name (the reference: "Will default to customer name").
  return {
    card: { ...card, ...given, method_name: given.method_name || maskCardNumber(card.number), cardholder: given.cardholder || holderOf(customer) },
    sortord: order.value,
  };
}

/**
 * A bank method's account: the documented fields (`account`, `routing`, `account_type`, gateway-facts.md, ACH) or a
 * check form's `payment_key` (the sandbox's choice of how a bank method is saved from one: README.md, "ACH").
 */
function readBank(core: SandboxCore, item: Record<string, unknown>): BankAccount | Answer {
  if (typeof item.payment_key === 'string' && item.payment_key !== '') {
    const taken = core.paymentKeys.consumeCheck(item.payment_key, core.publicKey);
    if (!taken.ok) return fail(ERRORS.invalidField, `payment_key ${taken.reason === 'unknown' ? 'is unknown' : taken.reason === 'used' ? 'was already used' : 'has expired'}`);
    if (!passesAba(taken.account.routing)) return fail(ERRORS.invalidRouting);
    return taken.account;
  }
  const read = readBankAccount({ accountholder: item.accountholder ?? item.account_holder ?? 'Account holder', routing: item.routing, account: item.account, account_type: item.account_type });
  if ('problem' in read) return read.problem === 'routing' ? fail(ERRORS.invalidRouting) : read.problem === 'account' ? fail(ERRORS.invalidAccount) : fail(ERRORS.invalidField, read.problem);
  if (!passesAba(read.account.routing)) return fail(ERRORS.invalidRouting);
  return read.account;
}

/** A payment method as a write answers it: no `pmid`; `sortord` a number in the POST answer, a string otherwise. */
function writtenView(m: FixturePaymentMethod, sortordAsNumber: boolean): Record<string, unknown> {
  const view = paymentMethodView(m, 'wire');
  return sortordAsNumber ? { ...view, sortord: Number(m.sortord) } : view;
}

export function addPaymentMethods(core: SandboxCore, customerId: string, body: unknown, now: Date): Answer {
  const customer = core.fixtures.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  if (!Array.isArray(body)) return fail(ERRORS.bodyNotArray);
  if (body.length === 0) return fail(ERRORS.noPaymentMethods);
  if (body.length > MAX_METHODS_PER_CALL) return fail(ERRORS.invalidField, `at most ${MAX_METHODS_PER_CALL} payment methods per call`);
  const pending: Pending[] = [];
  for (const item of body) {
    const read = readItem(core, customer, item, now);
    if ('status' in read) return read;
    pending.push(read);
  }
  const added = pending.map((p) => (p.bank ? core.fixtures.addBankMethod(customer, p.bank.account, p.bank.name, now, p.sortord) : core.fixtures.addMethod(customer, p.card as NewMethodCard, now, p.sortord)));
  return { status: 200, body: added.map((m) => writtenView(m, true)) };
}

function find(store: FixtureStore, customerId: string, methodId: string): { customer: FixtureCustomer; method: FixturePaymentMethod } | Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  const method = store.method(customer, methodId);
  if (!method) return fail(ERRORS.paymentMethodNotFound);
  return { customer, method };
}

export function updatePaymentMethod(store: FixtureStore, customerId: string, methodId: string, body: unknown, now: Date): Answer {
  const found = find(store, customerId, methodId);
  if ('status' in found) return found;
  if (!isRecord(body)) return fail(ERRORS.bodyNotObject);
  // The field's name is not echoed: it came from the caller.
  if (Object.keys(body).some((k) => !UPDATABLE.has(k))) {
    return fail(ERRORS.invalidField, 'only method_name, expires, avs_street and avs_postalcode can be updated (to change others, delete the payment method and add a new one)');
  }
  const changes: Partial<Record<'method_name' | 'avs_street' | 'avs_postalcode', string>> = {};
  for (const f of ['method_name', 'avs_street', 'avs_postalcode'] as const) {
    const t = text(body, f);
    if ('answer' in t) return t.answer;
    if (t.value !== undefined) changes[f] = t.value;
  }
  const expires = body.expires;
  if (expires !== undefined && found.method.check) return fail(ERRORS.invalidField, 'a bank method has no expiry');
  if (expires !== undefined && (typeof expires !== 'string' || expirationState(expires, now) !== 'ok')) return fail(ERRORS.invalidExpiration);
  const { method } = found;
  Object.assign(method, changes);
  if (typeof expires === 'string') store.setExpiration(method, expires);
  method.updated = wireStamp(now);
  return { status: 200, body: writtenView(method, false) };
}

export function deletePaymentMethod(store: FixtureStore, customerId: string, methodId: string): Answer {
  const found = find(store, customerId, methodId);
  if ('status' in found) return found;
  store.deleteMethod(found.customer, found.method);
  return { status: 200, body: { status: 'success' } };
}
