import type { Request } from 'express';
import { classifyCommand } from './commands';
import type { SandboxCore } from './core';
import type { RouteKind } from './faults';
import { FOLLOW_UP_COMMANDS, parseFollowUp, runFollowUp } from './follow-ups';
import type { SaleOutcome } from './ledger';
import { closeCurrentBatch, getBatch, getTransaction, listBatches, listBatchTransactions, listCustomerTransactions } from './lookups';
import { fail } from './reads';
import { ERRORS } from './errors';
import type { Processed } from './respond';
import type { ApiRoute } from './routes';
import { isTruthyFlag } from './sale-request';
import { usePaymentKey, type PaymentKeyUse } from './payment-key-sale';

/**
 * The payment lifecycle's hooks into the API handler (api.ts): the fault match of a POST by its command, the
 * dispatch of follow-ups, authonly and a sale's `custkey`, and the lifecycle's read routes.
 */

const MATCH_OF: Readonly<Record<string, RouteKind>> = {
  'cc:sale': 'sale',
  authonly: 'authonly',
  'cc:capture': 'capture',
  void: 'void',
  'cc:void:release': 'void',
  refund: 'refund',
  creditvoid: 'refund',
  'refund:adjust': 'refund',
};

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function commandOf(json: unknown): string | undefined {
  if (!isRecord(json)) return undefined;
  const c = classifyCommand(json.command);
  return c.kind === 'known' ? c.name : undefined;
}

/** The fault `match` of a POST transactions body; anything unreadable or unknown matches as 'sale'. */
export function faultMatchOfBody(text: string | undefined): RouteKind {
  if (text === undefined) return 'sale';
  try {
    return MATCH_OF[commandOf(JSON.parse(text)) ?? ''] ?? 'sale';
  } catch {
    return 'sale';
  }
}

export interface TransactionHook {
  /** Set when the lifecycle answered (a follow-up, or a sale/authonly refused for its custkey). */
  answer?: Processed;
  /** What the sale parser reads: authonly arrives as cc:sale (same fields). */
  json: unknown;
  authOnly: boolean;
  custkey?: string;
  ignoreDuplicate: boolean;
  /** The card of a consumed Pay.js payment key (payment-key-sale.ts). */
  paymentKey?: PaymentKeyUse;
}

export function transactionHook(core: SandboxCore, json: unknown, now: number): TransactionHook {
  const command = commandOf(json);
  const plain: TransactionHook = { json, authOnly: false, ignoreDuplicate: false };
  if (!isRecord(json) || command === undefined) return plain;
  core.lifecycle.tick(now, core.settings);
  if (FOLLOW_UP_COMMANDS.has(command)) {
    const parsed = parseFollowUp(json, command);
    if (!parsed.ok) return { ...plain, answer: fail(parsed.reject, parsed.detail) };
    const out = runFollowUp(core.lifecycle, core.followUpDuplicates, parsed.input, {
      now,
      duplicateFolding: core.settings.duplicateFolding,
      nextRefnum: (t) => core.ledger.nextRefnum(t),
      refundWithoutAmount: core.settings.refundWithoutAmount,
      returnedCheckRefund: core.settings.returnedCheckRefund,
    });
    // A check's refund is a credit back to the account: a check of its own, on the ACH clock.
    const created = out.record.createdKey === undefined ? undefined : core.lifecycle.get(out.record.createdKey);
    const original = created?.original === undefined ? undefined : core.lifecycle.get(created.original);
    if (created && original?.check) {
      created.check = { ...original.check, status: 'P', trackingcode: `${original.check.trackingcode.slice(0, 8)}${created.refnum.slice(-4)}` };
      delete created.check.submittedAt;
      delete created.check.settledAt;
      // A credit to a return test account comes back only as SANDBOX_CREDIT_RETURNS says (undocumented: README.md).
      if (core.settings.creditReturns === 'never') delete created.check.returnsWith;
      else if (core.settings.creditReturns === 'failed' && created.check.returnsWith) created.check.failsInstead = true;
      delete created.creditcard;
      core.ach.track(created);
    }
    return { ...plain, answer: { status: 200, body: out.response, record: out.record } };
  }
  if (command !== 'cc:sale' && command !== 'authonly') return plain;
  const hook: TransactionHook = {
    json: command === 'authonly' ? { ...json, command: 'cc:sale' } : json,
    authOnly: command === 'authonly',
    ignoreDuplicate: isTruthyFlag(json.ignore_duplicate),
  };
  const raw = json.custkey;
  if (raw !== undefined && raw !== null && raw !== '') {
    // A sale names its customer by key (or the emulator's custid); an unknown one is a transaction error (README).
    const customer = typeof raw === 'string' ? core.fixtures.customer(raw) : undefined;
    if (!customer) {
      core.stats.saleErrors++;
      return { ...hook, answer: { status: 200, body: { type: 'transaction', is_duplicate: 'N', result_code: 'E', result: 'Error', authcode: '', error: 'Customer Not Found', error_code: '99999' } } };
    }
    hook.custkey = customer.key;
  }
  // Checked last: a refused customer leaves the single-use key unspent.
  const keyed = usePaymentKey(core, hook.json as Record<string, unknown>);
  if (!keyed) return hook;
  if ('answer' in keyed) return { ...hook, answer: keyed.answer };
  return { ...hook, json: keyed.json, paymentKey: keyed.use };
}

/** A processed (not folded) sale or authonly enters the lifecycle; its answer gets the lifecycle's batch. */
export function adoptSale(core: SandboxCore, outcome: SaleOutcome, hook: TransactionHook, now: number): void {
  if (!outcome.record || outcome.folded) return;
  core.lifecycle.adopt(outcome.record, outcome.response, { authOnly: hook.authOnly, now, ...(hook.custkey ? { custkey: hook.custkey } : {}) });
}

export type LifecycleRoute = Extract<ApiRoute, { kind: 'transaction' | 'customer_transactions' | 'batches' | 'batch' | 'batch_transactions' | 'batch_close' }>;

export function isLifecycleRoute(route: ApiRoute): route is LifecycleRoute {
  return ['transaction', 'customer_transactions', 'batches', 'batch', 'batch_transactions', 'batch_close'].includes(route.kind);
}

export function handleLifecycleRoute(core: SandboxCore, req: Request, route: LifecycleRoute): Processed {
  const now = core.clock.now();
  const life = core.lifecycle;
  life.tick(now, core.settings);
  core.ach.run(now);
  const query = req.query as Record<string, unknown>;
  const format = core.settings.wireFormat;
  const view = { lookupRefunds: core.settings.lookupRefunds, customFields: core.settings.customFields, lookupAuthAmount: core.settings.lookupAuthAmount };
  switch (route.kind) {
    case 'transaction':
      return getTransaction(life, route.key, view);
    case 'customer_transactions':
      return listCustomerTransactions(life, core.fixtures, route.customer, query, format, view);
    case 'batches':
      return listBatches(life, query, format);
    case 'batch':
      return getBatch(life, route.batch, now);
    case 'batch_transactions':
      return listBatchTransactions(life, route.batch, query, format, now, view);
    case 'batch_close':
      return closeCurrentBatch(life, now);
    default:
      return fail(ERRORS.pathNotFound);
  }
}
