import { randomInt } from 'node:crypto';
import { classifyCommand } from '../commands';
import type { SandboxCore } from '../core';
import { ERRORS, SALE_ERRORS } from '../errors';
import type { FixtureCustomer } from '../fixtures';
import { randomAlnum } from '../fixture-store';
import type { CheckState, LifecycleTx } from '../lifecycle';
import { fail } from '../reads';
import type { Processed } from '../respond';
import { amountCents, formatCents, isTruthyFlag } from '../sale-request';
import { passesAba, readBankAccount, returnReasonOf, type BankAccount } from './bank';

/**
 * `check:sale` and `check:credit` (gateway-facts.md, ACH), and `customer:sale` (the wallet: "charges a stored
 * method directly") for a saved bank method. The account comes from a `check` object, from a check form's
 * `payment_key` (SANDBOX_CHECK_PAYMENT_KEY `accepted`), or from a saved bank method. Outcomes by the gateway's test
 * data: a routing number failing the ABA check (987654321 among them) is error 38; an account that is no account
 * number error 39; 5.99 declines; 9999.99 waits for manager approval (status M); anything else is approved and
 * pending (P) until the ACH clock moves it (ach-clock.ts). An approved check joins the open batch.
 */

export const CHECK_ERRORS = {
  invalidRouting: { error: 'Invalid routing number', error_code: '38' },
  invalidAccount: { error: 'Invalid checking account number', error_code: '39' },
  /** Emulator choice (the test data says only that 5.99 "declines"). */
  declined: { error: 'Check Declined', error_code: '10127' },
  /** SANDBOX_CHECK_PAYMENT_KEY=refused (emulator choice of code). */
  paymentKeyRefused: { error: 'Payment key not accepted for check transactions', error_code: '10213' },
  methodNotFound: { error: 'Payment Method Not Found', error_code: '40453' },
  customerNotFound: { error: 'Customer Not Found', error_code: '99999' },
} as const;

const DECLINE_CENTS = 599;
const MANAGER_CENTS = 999_999;
const SEC = /^[A-Z]{3}$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
const present = (v: unknown) => v !== undefined && v !== null && v !== '';

export interface CheckContext {
  now: number;
}

type Answer = { answer: Processed } | { json: Record<string, unknown> } | undefined;

/** The transaction-shaped error answer (HTTP 200, result E): nothing processed. */
function errorAnswer(core: SandboxCore, e: { error: string; error_code: string }, invoice: string, now: number): { answer: Processed } {
  core.stats.saleErrors++;
  return { answer: { status: 200, body: { type: 'transaction', key: `d${randomAlnum(14)}`, refnum: core.ledger.nextRefnum(now), is_duplicate: 'N', result_code: 'E', result: 'Error', authcode: '', error: e.error, error_code: e.error_code, invoice, auth_amount: '0.00' } } };
}

/**
 * Undefined when `json` is no check command; `{json}` when it is a `customer:sale` of a saved card (answered as the
 * `cc:sale` with its token it stands for); else the answer.
 */
export function handleCheckCommand(core: SandboxCore, json: unknown, ctx: CheckContext): Answer {
  if (!isRecord(json)) return undefined;
  const command = classifyCommand(json.command);
  if (command.kind !== 'known') return undefined;
  // SANDBOX_CARD_SALE_CHECK_KEY `charged` (undocumented, README "ACH"): a card command naming a check form's key
  // debits the account as `check:sale` would, with no SEC code and no authorization. Under `refused` the card path
  // answers the key as unknown (payment-key-sale.ts), unspent.
  const checkKeyOnCard = (command.name === 'cc:sale' || command.name === 'authonly') && core.settings.cardSaleCheckKey === 'charged'
    && typeof json.payment_key === 'string' && core.paymentKeys.isCheck(json.payment_key, core.publicKey);
  if (!checkKeyOnCard && !['check:sale', 'check:credit', 'customer:sale'].includes(command.name)) return undefined;
  const { now } = ctx;
  core.lifecycle.tick(now, core.settings);
  if (!present(json.amount)) return { answer: fail(ERRORS.missingAmount) };
  const cents = amountCents(json.amount, false);
  if (cents === undefined) return { answer: fail(ERRORS.invalidAmount, 'a decimal > 0 with at most 2 decimals') };
  if (json.invoice !== undefined && (typeof json.invoice !== 'string' || json.invoice.length > 255)) return { answer: fail(ERRORS.invalidField, 'invoice must be a string of at most 255 characters') };
  const invoice = typeof json.invoice === 'string' ? json.invoice : '';
  const check = isRecord(json.check) ? json.check : {};
  const format = typeof check.format === 'string' && SEC.test(check.format) ? check.format : '';
  if (present(check.format) && !format) return { answer: fail(ERRORS.invalidField, 'check.format must be an SEC code') };

  let customer: FixtureCustomer | undefined;
  if (present(json.custkey)) {
    customer = typeof json.custkey === 'string' ? core.fixtures.customer(json.custkey) : undefined;
    if (!customer) return errorAnswer(core, CHECK_ERRORS.customerNotFound, invoice, now);
  }

  let account: BankAccount;
  let pmkey: string | undefined;
  let fromKey = false;
  if (command.name === 'customer:sale') {
    if (!customer || typeof json.paymethod_key !== 'string') return { answer: fail(ERRORS.invalidField, 'customer:sale needs custkey and paymethod_key') };
    const method = core.fixtures.method(customer, json.paymethod_key);
    if (!method) return errorAnswer(core, CHECK_ERRORS.methodNotFound, invoice, now);
    if (!method.check) {
      // A saved card: the sale its token stands for.
      const rest = Object.fromEntries(Object.entries(json).filter(([k]) => k !== 'paymethod_key' && k !== 'check'));
      return { json: { ...rest, command: 'cc:sale', UMCardRef: core.fixtures.token(method).cardref } };
    }
    account = method.check;
    pmkey = method.key;
  } else if (present(json.payment_key)) {
    if (typeof json.payment_key !== 'string' || json.payment_key.length > 255) return { answer: fail(ERRORS.invalidField, 'payment_key must be a string') };
    if (core.settings.checkPaymentKey === 'refused' && !checkKeyOnCard) return errorAnswer(core, CHECK_ERRORS.paymentKeyRefused, invoice, now);
    const taken = core.paymentKeys.consumeCheck(json.payment_key, core.publicKey);
    if (!taken.ok) return errorAnswer(core, SALE_ERRORS[taken.reason === 'unknown' ? 'paymentKeyUnknown' : taken.reason === 'used' ? 'paymentKeyUsed' : 'paymentKeyExpired'], invoice, now);
    account = taken.account;
    fromKey = true;
  } else {
    const read = readBankAccount(check);
    if ('problem' in read) {
      if (read.problem === 'routing') return errorAnswer(core, CHECK_ERRORS.invalidRouting, invoice, now);
      if (read.problem === 'account') return errorAnswer(core, CHECK_ERRORS.invalidAccount, invoice, now);
      return { answer: fail(ERRORS.invalidField, `check.${read.problem}`) };
    }
    account = read.account;
  }
  if (!passesAba(account.routing)) return errorAnswer(core, CHECK_ERRORS.invalidRouting, invoice, now);
  const credit = command.name === 'check:credit';
  const tx = processCheck(core, { account, cents, invoice, format, credit, now, ...(customer ? { custkey: customer.key } : {}), ...(pmkey ? { pmkey } : {}) });
  const approved = tx.resultCode === 'A';
  const response: Record<string, unknown> = {
    type: 'transaction',
    key: tx.key,
    refnum: tx.refnum,
    is_duplicate: 'N',
    result_code: tx.resultCode,
    result: approved ? 'Approved' : 'Declined',
    authcode: tx.authcode,
    invoice,
    ...(approved ? { batch: core.lifecycle.batchRefOf(tx) } : { error: CHECK_ERRORS.declined.error, error_code: CHECK_ERRORS.declined.error_code }),
    auth_amount: formatCents(tx.authCents),
    trantype: credit ? 'Check Credit' : 'Check Sale',
  };
  // As a card sale's `save_customer_paymethod` (payment-key-sale.ts): the account becomes a bank method.
  if (approved && customer && !pmkey && isTruthyFlag(json.save_customer_paymethod) && (fromKey || present(json.check))) {
    const name = typeof json.method_name === 'string' && json.method_name !== '' ? json.method_name : `${account.account_type === 'savings' ? 'Savings' : 'Checking'} ${account.account.slice(-4)}`;
    core.fixtures.addBankMethod(customer, account, name, new Date(now));
    response.customer = { custkey: customer.key, custid: customer.custid };
  }
  const record = { delivery: 'pending' as const, delivered: false };
  return { answer: { status: 200, body: response, record } };
}

interface CheckRequest {
  account: BankAccount;
  cents: number;
  invoice: string;
  format: string;
  credit: boolean;
  now: number;
  custkey?: string;
  pmkey?: string;
}

/** The check's transaction: into the lifecycle, the open batch (approved) and the ACH clock (pending). */
function processCheck(core: SandboxCore, r: CheckRequest): LifecycleTx {
  const declined = !r.credit && r.cents === DECLINE_CENTS;
  const manager = !r.credit && r.cents === MANAGER_CENTS;
  const returnsWith = returnReasonOf(r.account.account);
  const check: CheckState = {
    accountholder: r.account.accountholder,
    accountLast4: r.account.account.slice(-4),
    routingLast4: r.account.routing.slice(-4),
    accountType: r.account.account_type,
    format: r.format,
    trackingcode: `${randomInt(10_000_000, 100_000_000)}${randomAlnum(4)}`,
    status: declined ? 'E' : manager ? 'M' : 'P',
    ...(returnsWith ? { returnsWith } : {}),
    ...(r.pmkey ? { pmkey: r.pmkey } : {}),
  };
  const tx: LifecycleTx = {
    key: `d${randomAlnum(14)}`,
    refnum: core.ledger.nextRefnum(r.now),
    kind: r.credit ? 'refund' : 'sale',
    resultCode: declined ? 'D' : 'A',
    state: declined ? 'declined' : 'unsettled',
    created: r.now,
    amountCents: r.cents,
    authCents: declined ? 0 : r.cents,
    capturedCents: declined ? 0 : r.cents,
    refundedCents: 0,
    adjustedCents: 0,
    refunds: [],
    invoice: r.invoice,
    authcode: declined ? '' : String(randomInt(100000, 1000000)),
    ...(r.custkey ? { custkey: r.custkey } : {}),
    check,
  };
  core.lifecycle.add(tx);
  if (!declined) {
    core.lifecycle.joinBatch(tx, r.now);
    core.fixtures.rememberTransactionCheck(tx.key, r.account);
  }
  if (!r.credit) core.lifecycle.observer?.adopted(tx, r.now);
  core.ach.track(tx);
  return tx;
}
