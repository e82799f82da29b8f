import { ERRORS, type ErrorSpec } from './errors';
import type { FollowUpRecord, Lifecycle, LifecycleTx } from './lifecycle';
import type { TransactionResponse } from './ledger';
import { randomAlnum } from './fixtures';
import { DUPLICATE_WINDOW_MS } from './ledger';
import { amountCents, formatCents, isTruthyFlag } from './sale-request';

/**
 * The follow-up commands of POST /transactions (gateway-facts.md, The payment lifecycle): cc:capture, void,
 * cc:void:release, refund, creditvoid, refund:adjust. Each names its original by `trankey` or `refnum` (exactly
 * one). A refusal is HTTP 200 with result_code "E", `error` and a string `error_code` (README, Payment lifecycle,
 * lists which code answers which state).
 */

export const FOLLOW_UP_COMMANDS = new Set(['cc:capture', 'void', 'cc:void:release', 'refund', 'creditvoid', 'refund:adjust', 'cc:adjust', 'unvoid']);

/** Transaction-level refusals. Codes from gateway-facts.md; where it gives none for a state, README says which we chose. */
export const LIFECYCLE_ERRORS = {
  alreadyVoided: { error_code: '24', error: 'Transaction already voided' },
  batchClosed: { error_code: '26', error: 'Batch already closed, apply a credit instead' },
  voidNotFound: { error_code: '35', error: 'Transaction to void not found' },
  voidNotApproved: { error_code: '83', error: 'Only approved transactions may be voided' },
  refundNotFound: { error_code: '113', error: 'Refund not permitted: original transaction not found' },
  refundExceeds: { error_code: '114', error: 'Refund not permitted: amount exceeds the original' },
  refundNotSettled: { error_code: '115', error: 'Refund not permitted: original not settled' },
  originalNotFound: { error_code: '10105', error: 'Original transaction not found' },
  notApproved: { error_code: '10125', error: 'Original transaction not approved' },
  notOpenAuth: { error_code: '10125', error: 'Original transaction is not an open authorization' },
  alreadySettled: { error_code: '10126', error: 'Transaction already settled' },
  creditExceeds: { error_code: '10133', error: 'Amount exceeds the original transaction' },
  // gateway-facts.md, ACH: once submitted "a refund must be issued instead".
  checkNotVoidable: { error_code: '82', error: 'Check transactions can not be voided' },
} as const;

type Refusal = (typeof LIFECYCLE_ERRORS)[keyof typeof LIFECYCLE_ERRORS];

export interface FollowUpInput {
  command: string;
  trankey?: string;
  refnum?: string;
  amountCents?: number;
  ignoreDuplicate: boolean;
  /** `custom_fields` ("1".."20" → text), kept on a refund's own transaction (README, Payment lifecycle). */
  customFields?: Record<string, string>;
}

export type FollowUpParse = { ok: true; input: FollowUpInput } | { ok: false; reject: ErrorSpec; detail?: string };

const REF = /^[A-Za-z0-9]{1,64}$/;

export function parseFollowUp(body: Record<string, unknown>, command: string): FollowUpParse {
  const has = (v: unknown) => v !== undefined && v !== null && v !== '';
  const refnum = typeof body.refnum === 'number' && Number.isSafeInteger(body.refnum) ? String(body.refnum) : body.refnum;
  if (has(body.trankey) === has(refnum)) return { ok: false, reject: ERRORS.followUpTarget };
  if (has(body.trankey) && (typeof body.trankey !== 'string' || !REF.test(body.trankey))) return { ok: false, reject: ERRORS.invalidField, detail: 'trankey' };
  if (has(refnum) && (typeof refnum !== 'string' || !/^\d{1,20}$/.test(refnum))) return { ok: false, reject: ERRORS.invalidField, detail: 'refnum' };
  let cents: number | undefined;
  if (has(body.amount)) {
    cents = amountCents(body.amount, false);
    if (cents === undefined) return { ok: false, reject: ERRORS.invalidAmount, detail: 'a decimal > 0 with at most 2 decimals' };
  } else if (command === 'refund:adjust' || command === 'cc:adjust') {
    return { ok: false, reject: ERRORS.missingAmount };
  }
  let customFields: Record<string, string> | undefined;
  if (has(body.custom_fields)) {
    customFields = parseCustomFields(body.custom_fields);
    if (!customFields) return { ok: false, reject: ERRORS.invalidField, detail: 'custom_fields' };
  }
  return {
    ok: true,
    input: {
      command,
      ...(has(body.trankey) ? { trankey: body.trankey as string } : { refnum: refnum as string }),
      ...(cents !== undefined ? { amountCents: cents } : {}),
      ignoreDuplicate: isTruthyFlag(body.ignore_duplicate),
      ...(customFields ? { customFields } : {}),
    },
  };
}

/** The reference's custom fields: an object of up to 20, keyed "1".."20", each text (≤ 255 here, our bound). */
function parseCustomFields(raw: unknown): Record<string, string> | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!/^(?:[1-9]|1\d|20)$/.test(k) || typeof v !== 'string' || v.length > 255) return undefined;
    out[k] = v;
  }
  return out;
}

export interface FollowUpOutcome {
  response: TransactionResponse;
  record: FollowUpRecord;
}

export interface FollowUpContext {
  now: number;
  duplicateFolding: boolean;
  nextRefnum: (now: number) => string;
  /** SANDBOX_REFUND_WITHOUT_AMOUNT (README.md, Payment lifecycle): a refund without amount after a partial one. */
  refundWithoutAmount?: 'left' | 'original';
  /** SANDBOX_RETURNED_CHECK_REFUND (README.md, ACH): a refund of a returned check refused (default) or approved. */
  returnedCheckRefund?: 'refused' | 'approved';
}

/** Folding memory of approved follow-ups: same command, original and amount within the window. */
export class FollowUpDuplicates {
  private memory = new Map<string, { time: number; response: TransactionResponse }>();

  find(key: string, now: number): TransactionResponse | undefined {
    const prior = this.memory.get(key);
    return prior && now - prior.time <= DUPLICATE_WINDOW_MS ? prior.response : undefined;
  }

  remember(key: string, now: number, response: TransactionResponse): void {
    this.memory.delete(key);
    this.memory.set(key, { time: now, response });
    for (const [k, v] of this.memory) {
      if (now - v.time <= DUPLICATE_WINDOW_MS) break;
      this.memory.delete(k);
    }
  }

  clear(): void {
    this.memory.clear();
  }
}

export function runFollowUp(life: Lifecycle, dups: FollowUpDuplicates, input: FollowUpInput, ctx: FollowUpContext): FollowUpOutcome {
  const tx = input.trankey !== undefined ? life.get(input.trankey) : life.byRef(input.refnum as string);
  const named = tx?.key ?? input.trankey ?? `refnum:${input.refnum}`;
  const base = { command: input.command, trankey: named, time: ctx.now, delivery: 'pending' as const, delivered: false, ...(input.amountCents !== undefined ? { amount: formatCents(input.amountCents) } : {}) };

  const dupKey = `${input.command}|${named}|${input.amountCents ?? ''}`;
  if (ctx.duplicateFolding && !input.ignoreDuplicate) {
    const prior = dups.find(dupKey, ctx.now);
    if (prior) return { response: { ...prior, is_duplicate: 'Y' }, record: life.record({ ...base, result_code: 'A', folded: true }) };
  }

  const result = apply(life, tx, input, ctx);
  if ('refusal' in result) {
    const r = result.refusal;
    // Nothing was processed, so no key or refnum (as the unknown-command answer, commands.ts).
    const response = { type: 'transaction', is_duplicate: 'N', result_code: 'E', result: 'Error', authcode: '', error: r.error, error_code: r.error_code } as unknown as TransactionResponse;
    return { response, record: life.record({ ...base, result_code: 'E', error_code: r.error_code, folded: false }) };
  }
  dups.remember(dupKey, ctx.now, result.response);
  return { response: result.response, record: life.record({ ...base, result_code: 'A', folded: false, ...(result.created ? { createdKey: result.created } : {}) }) };
}

type Applied = { refusal: Refusal } | { response: TransactionResponse; created?: string };

function apply(life: Lifecycle, tx: LifecycleTx | undefined, input: FollowUpInput, ctx: FollowUpContext): Applied {
  const E = LIFECYCLE_ERRORS;
  switch (input.command) {
    case 'cc:capture': {
      if (!tx) return { refusal: E.originalNotFound };
      if (tx.state === 'voided') return { refusal: E.alreadyVoided };
      if (tx.state === 'declined') return { refusal: E.notApproved };
      if (tx.state === 'settled') return { refusal: E.alreadySettled };
      if (tx.state !== 'authorized') return { refusal: E.notOpenAuth };
      const cents = input.amountCents ?? tx.authCents;
      if (cents > tx.authCents) return { refusal: E.creditExceeds };
      tx.authCents = cents;
      tx.capturedCents = cents;
      const batch = life.joinBatch(tx, ctx.now);
      return { response: { ...minimal(tx), auth_amount: formatCents(cents), batch } };
    }
    case 'void':
    case 'cc:void:release': {
      if (!tx) return { refusal: E.voidNotFound };
      const voided = voidIt(life, tx, ctx.now);
      // Funds released: an unvoid can no longer restore it (gateway-facts.md, Money webhooks in detail).
      if (input.command === 'cc:void:release' && 'response' in voided) delete tx.voidedAuthCents;
      return voided;
    }
    case 'refund': {
      if (!tx) return { refusal: E.refundNotFound };
      if (tx.check) return checkCredit(life, tx, input, ctx, E.refundExceeds);
      if (tx.state === 'voided') return { refusal: E.alreadyVoided };
      if (tx.state === 'declined' || tx.kind === 'refund') return { refusal: E.notApproved };
      if (tx.state !== 'settled') return { refusal: E.refundNotSettled };
      // No amount: "a full refund on the transaction" (the reference). After a partial refund that is either
      // what is left or the original amount (then refused as exceeding it): a knob, as the gateway does not say.
      if (input.amountCents === undefined && ctx.refundWithoutAmount === 'original') return credit(life, tx, tx.capturedCents, E.refundExceeds, ctx, input.customFields);
      return credit(life, tx, input.amountCents, E.refundExceeds, ctx, input.customFields);
    }
    case 'creditvoid': {
      if (!tx) return { refusal: E.originalNotFound };
      if (tx.check) return tx.check.status === 'P' || tx.check.status === 'M' ? voidIt(life, tx, ctx.now) : checkCredit(life, tx, input, ctx, E.creditExceeds);
      if (tx.state !== 'settled') return voidIt(life, tx, ctx.now);
      if (tx.kind === 'refund') return { refusal: E.notApproved };
      return credit(life, tx, input.amountCents, E.creditExceeds, ctx);
    }
    case 'refund:adjust': {
      if (!tx) return { refusal: E.originalNotFound };
      if (tx.check) return checkCredit(life, tx, input, ctx, E.creditExceeds);
      if (tx.state === 'voided') return { refusal: E.alreadyVoided };
      if (tx.state === 'declined' || tx.kind === 'refund') return { refusal: E.notApproved };
      if (tx.state === 'settled') return credit(life, tx, input.amountCents, E.creditExceeds, ctx, input.customFields);
      // Unsettled: lower what is held; lowering it to nothing is a void, not an adjustment.
      const cents = input.amountCents as number;
      if (cents >= tx.authCents) return { refusal: E.creditExceeds };
      tx.authCents -= cents;
      if (tx.state === 'unsettled') {
        tx.capturedCents = tx.authCents;
        tx.adjustedCents += cents;
      }
      return { response: { ...minimal(tx), auth_amount: formatCents(tx.authCents) } };
    }
    case 'cc:adjust': {
      // The authorized amount changed (up: an incremental authorization; down: a partial reversal), only while
      // the batch is open (gateway-facts.md, Money webhooks in detail). The emulator's choice: any amount > 0.
      if (!tx) return { refusal: E.originalNotFound };
      if (tx.state === 'voided') return { refusal: E.alreadyVoided };
      if (tx.state === 'declined' || tx.kind === 'refund') return { refusal: E.notApproved };
      if (tx.state === 'settled') return { refusal: E.alreadySettled };
      tx.authCents = input.amountCents as number;
      if (tx.state === 'unsettled') tx.capturedCents = tx.authCents;
      return { response: { ...minimal(tx), auth_amount: formatCents(tx.authCents) } };
    }
    case 'unvoid': {
      // A voided sale restored: only in the open batch (gateway-facts.md, Money webhooks in detail); its hold
      // comes back as it was before the void. A voided refund is not unvoided here (no document shows it).
      if (!tx) return { refusal: E.originalNotFound };
      if (tx.state !== 'voided' || tx.kind === 'refund' || tx.voidedAuthCents === undefined) return { refusal: E.notApproved };
      if (tx.batchKey !== undefined && life.batches.get(tx.batchKey, 0)?.closed !== undefined) return { refusal: E.alreadySettled };
      tx.state = tx.kind === 'authonly' && tx.capturedAt === undefined ? 'authorized' : 'unsettled';
      tx.authCents = tx.voidedAuthCents;
      delete tx.voidedAuthCents;
      delete tx.voidedAt;
      return { response: minimal(tx) }; // the reference's unvoid example: minimal, no auth_amount
    }
    default:
      throw new Error(`not a follow-up: ${input.command}`);
  }
}

/**
 * A refund of a check (emulator choices, README.md "ACH"): a credit back once submitted or settled; pending, it is
 * voided instead (115, as an unsettled card sale); voided or in error there is nothing to give back (10125);
 * returned, the gateway is silent: refused as those (10125) or, SANDBOX_RETURNED_CHECK_REFUND `approved`, credited.
 */
function checkCredit(life: Lifecycle, tx: LifecycleTx, input: FollowUpInput, ctx: FollowUpContext, exceeds: Refusal): Applied {
  const status = tx.check?.status;
  if (status === 'P' || status === 'M') return { refusal: LIFECYCLE_ERRORS.refundNotSettled };
  const creditable = status === 'B' || status === 'S' || (status === 'R' && ctx.returnedCheckRefund === 'approved');
  if (!creditable) return { refusal: LIFECYCLE_ERRORS.notApproved };
  return credit(life, tx, input.amountCents, exceeds, ctx, input.customFields);
}

function voidIt(life: Lifecycle, tx: LifecycleTx, now: number): Applied {
  const E = LIFECYCLE_ERRORS;
  if (tx.check && tx.state !== 'voided' && tx.state !== 'declined') {
    if (tx.check.status !== 'P' && tx.check.status !== 'M') return { refusal: E.checkNotVoidable };
    tx.check.status = 'V';
  }
  if (tx.state === 'voided') return { refusal: E.alreadyVoided };
  if (tx.state === 'declined') return { refusal: E.voidNotApproved };
  if (tx.state === 'settled') return { refusal: E.batchClosed };
  tx.state = 'voided';
  tx.voidedAt = now;
  tx.voidedAuthCents = tx.authCents;
  tx.authCents = 0;
  if (tx.original) {
    // A voided refund gives its amount back to what the original can still refund.
    const original = life.get(tx.original);
    if (original) original.refundedCents -= tx.amountCents;
  }
  return { response: minimal(tx) };
}

/** A refund of a settled transaction: a new transaction in the open batch, never more than captured minus refunded. */
function credit(life: Lifecycle, tx: LifecycleTx, requested: number | undefined, exceeds: Refusal, ctx: FollowUpContext, customFields?: Record<string, string>): Applied {
  const left = tx.capturedCents - tx.refundedCents;
  const cents = requested ?? left;
  if (cents <= 0 || cents > left) return { refusal: exceeds };
  const refund: LifecycleTx = {
    key: `d${randomAlnum(14)}`,
    refnum: ctx.nextRefnum(ctx.now),
    kind: 'refund',
    resultCode: 'A',
    state: 'unsettled',
    created: ctx.now,
    amountCents: cents,
    authCents: cents,
    capturedCents: cents,
    refundedCents: 0,
    adjustedCents: 0,
    refunds: [],
    original: tx.key,
    invoice: tx.invoice,
    authcode: String(100000 + Math.floor(Math.random() * 900000)),
    ...(tx.custkey ? { custkey: tx.custkey } : {}),
    ...(tx.creditcard ? { creditcard: tx.creditcard } : {}),
    ...(customFields ? { customFields } : {}),
  };
  life.add(refund);
  tx.refunds.push(refund.key);
  tx.refundedCents += cents;
  const batch = life.joinBatch(refund, ctx.now);
  // The reference's refund and creditvoid examples: minimal, `creditcard`, `batch`, `trantype` (no `invoice`, no
  // `auth_amount`: the amount refunded is the one asked, or the refund's look-up's `amount`). README, Sources.
  const response: TransactionResponse = {
    ...minimal(refund),
    ...(refund.creditcard ? { creditcard: refund.creditcard } : {}),
    batch,
    trantype: 'Credit Card Refund (Credit)',
  };
  return { response, created: refund.key };
}

/** The minimal follow-up answer (gateway-facts.md: type, key, refnum, is_duplicate, result_code, result, authcode). */
function minimal(tx: LifecycleTx): TransactionResponse {
  return { type: 'transaction', key: tx.key, refnum: tx.refnum, is_duplicate: 'N', result_code: 'A', result: 'Approved', authcode: tx.authcode };
}
