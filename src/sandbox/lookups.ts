import type { BatchRecord } from './batches';
import { ERRORS } from './errors';
import type { FixtureStore } from './fixtures';
import type { CheckStatus, Lifecycle, LifecycleTx } from './lifecycle';
import { fail, list, type Answer, type Query } from './reads';
import { formatCents } from './sale-request';
import type { SandboxCustomFields, SandboxLookupAuthAmount, SandboxLookupRefunds, SandboxWireFormat } from './settings';

/** What a transaction's look-up and list items carry beyond the documented fields (issue 42; README, Payment lifecycle). */
export interface ViewOptions {
  /** `listed`: a sale's `refunds` and a refund's `original` (the emulator's additions); `none`: neither. */
  lookupRefunds: SandboxLookupRefunds;
  /** `echoed`: a refund's `custom_fields` as its request sent them; `dropped`: none. */
  customFields: SandboxCustomFields;
  /** `omitted`: `GET /transactions/{key}` carries no `auth_amount` (as the reference's example); list items keep it. */
  lookupAuthAmount?: SandboxLookupAuthAmount;
}

export const DOCUMENTED_VIEW: ViewOptions = { lookupRefunds: 'none', customFields: 'echoed' };

/**
 * Looking transactions and batches up (gateway-facts.md, Looking transactions up): GET transactions/{key},
 * customers/{c}/transactions, batches, batches/{key|current}, batches/{key|current}/transactions, and
 * POST batches/current/close. Shapes and status choices in README.md, "Payment lifecycle".
 */

/** "YYYY-MM-DD hh:mm:ss" (UTC). */
export function gatewayTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

const STATUS: Record<LifecycleTx['state'], [string, string]> = {
  authorized: ['P', 'Authorized (Pending Settlement)'],
  unsettled: ['P', 'Authorized (Pending Settlement)'],
  settled: ['S', 'Settled'],
  voided: ['V', 'Voided'],
  declined: ['E', 'Error'],
};

/** A check's status (gateway-facts.md, ACH, the status codes; texts are the facts' names). */
const CHECK_STATUS: Record<CheckStatus, string> = { P: 'Pending', B: 'Submitted', S: 'Settled', R: 'Returned', E: 'Error', V: 'Voided', M: 'Manager Approval Required' };

/** S sale, A auth only (until captured: then it is a sale), C credit/refund. */
function trantype(tx: LifecycleTx): [string, string] {
  if (tx.check) return tx.kind === 'refund' ? ['C', 'Check Credit'] : ['S', 'Check Sale'];
  if (tx.kind === 'refund') return ['C', 'Credit Card Refund (Credit)'];
  if (tx.kind === 'authonly' && tx.capturedAt === undefined) return ['A', 'Credit Card Auth Only'];
  return ['S', 'Credit Card Sale'];
}

export function transactionView(life: Lifecycle, tx: LifecycleTx, options: ViewOptions = DOCUMENTED_VIEW): Record<string, unknown> {
  const [status_code, status] = tx.check ? [tx.check.status, CHECK_STATUS[tx.check.status]] : STATUS[tx.state];
  const [trantype_code, trantypeText] = trantype(tx);
  const batch = life.batchRefOf(tx);
  const listed = options.lookupRefunds === 'listed';
  const original = listed && tx.original ? life.get(tx.original) : undefined;
  // Field order of the captured lookup (test/fixtures/wire/transaction-get.json); auth_amount and custkey are the
  // emulator's additions, and with lookupRefunds `listed` refunds and original (README, Payment lifecycle).
  return {
    type: 'transaction',
    key: tx.key,
    refnum: tx.refnum,
    created: gatewayTime(tx.created),
    trantype_code,
    trantype: trantypeText,
    result_code: tx.resultCode,
    result: { A: 'Approved', P: 'Partially Approved', D: 'Declined' }[tx.resultCode],
    authcode: tx.authcode,
    status_code,
    status,
    ...(tx.creditcard ? { creditcard: tx.creditcard } : {}),
    // A check's look-up (undocumented: README.md, "ACH"): the account masked as the lists mask it, the tracking code.
    ...(tx.check ? { check: { trackingcode: tx.check.trackingcode, account_number: tx.check.accountLast4, routing_number: tx.check.routingLast4, account_type: tx.check.accountType } } : {}),
    ...(tx.avs ? { avs: tx.avs } : {}),
    ...(tx.cvc ? { cvc: tx.cvc } : {}),
    // Lookups send batchrefnum as a string (captured; gateway-facts.md: real answers send many numbers as strings).
    ...(batch ? { batch: { ...batch, batchrefnum: String(batch.batchrefnum) } } : {}),
    amount: formatCents(tx.amountCents),
    auth_amount: formatCents(tx.authCents),
    ...(tx.amountDetail ? { amount_detail: tx.amountDetail } : {}),
    invoice: tx.invoice,
    ...(tx.custkey ? { custkey: tx.custkey } : {}),
    // Where the captured look-up has them (after the order fields), when the request set some and kept.
    ...(tx.customFields && options.customFields === 'echoed' ? { custom_fields: { ...tx.customFields } } : {}),
    ...(tx.kind === 'refund' || !listed ? {} : { refunds: tx.refunds.map((k) => refundView(life.get(k) as LifecycleTx)) }),
    ...(original ? { original: { key: original.key, refnum: original.refnum } } : {}),
  };
}

function refundView(r: LifecycleTx): Record<string, unknown> {
  const [status_code, status] = STATUS[r.state];
  return { type: 'transaction', key: r.key, refnum: r.refnum, amount: formatCents(r.amountCents), created: gatewayTime(r.created), status_code, status };
}

export function getTransaction(life: Lifecycle, key: string, options: ViewOptions = DOCUMENTED_VIEW): Answer {
  const tx = life.get(key);
  if (!tx) return fail(ERRORS.transactionNotFound);
  const body = transactionView(life, tx, options);
  if (options.lookupAuthAmount === 'omitted') delete body.auth_amount;
  return { status: 200, body };
}

export function listCustomerTransactions(life: Lifecycle, store: FixtureStore, customerId: string, query: Query, format: SandboxWireFormat, options: ViewOptions = DOCUMENTED_VIEW): Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  const txs = life.all().filter((t) => t.custkey === customer.key);
  return list(txs, query, (t) => transactionView(life, t, options), format);
}

/**
 * One batch, as the reference's "Retrieve Specific Batch": `status`, `opened`, `closed` once closed, and a count
 * and amount pair per kind "only … when batch contains this transaction type", amounts as JSON numbers (its
 * "double"). `sequence` is the list items' (the reference's single batch shows none; tokengate keeps it).
 */
export function batchView(life: Lifecycle, b: BatchRecord, status?: 'closing'): Record<string, unknown> {
  const sum = { sales: [0, 0], voids: [0, 0], refunds: [0, 0] };
  for (const key of b.members) {
    const tx = life.get(key);
    if (!tx) continue;
    const bucket = tx.state === 'voided' ? sum.voids : tx.kind === 'refund' ? sum.refunds : sum.sales;
    bucket[0] = (bucket[0] as number) + 1;
    bucket[1] = (bucket[1] as number) + tx.capturedCents;
  }
  const [sc, sa] = sum.sales as [number, number];
  const [vc, va] = sum.voids as [number, number];
  const [rc, ra] = sum.refunds as [number, number];
  const pair = (kind: string, count: number, cents: number) => (count > 0 ? { [`${kind}_amount`]: cents / 100, [`${kind}_count`]: count } : {});
  return {
    ...batchListItem(b),
    status: status ?? (b.closed === undefined ? 'open' : 'closed'),
    // The reference: total_count "includes sales, voids, and refunds"; total_amount is sales less refunds (its example).
    total_amount: (sa - ra) / 100,
    total_count: sc + vc + rc,
    ...pair('sales', sc, sa),
    ...pair('voids', vc, va),
    ...pair('refunds', rc, ra),
  };
}

/** A batch in `GET batches`, exactly the reference's list items: no status, no counts. */
function batchListItem(b: BatchRecord): Record<string, unknown> {
  return {
    type: 'batch',
    key: b.key,
    batchrefnum: String(b.batchrefnum),
    sequence: String(b.sequence),
    opened: gatewayTime(b.opened),
    ...(b.closed !== undefined ? { closed: gatewayTime(b.closed) } : {}),
  };
}

export function listBatches(life: Lifecycle, query: Query, format: SandboxWireFormat): Answer {
  return list(life.batches.list(), query, batchListItem, format);
}

export function getBatch(life: Lifecycle, key: string, now: number): Answer {
  const b = life.batches.get(key, now);
  if (!b) return fail(ERRORS.batchNotFound);
  return { status: 200, body: batchView(life, b) };
}

/** The batch's transactions in the order they joined (a voided one stays listed, as a void). */
export function listBatchTransactions(life: Lifecycle, key: string, query: Query, format: SandboxWireFormat, now: number, options: ViewOptions = DOCUMENTED_VIEW): Answer {
  const b = life.batches.get(key, now);
  if (!b) return fail(ERRORS.batchNotFound);
  const txs = b.members.map((k) => life.get(k)).filter((t): t is LifecycleTx => t !== undefined);
  return list(txs, query, (t) => transactionView(life, t, options), format);
}

/** Settles at once; answers `status: "closing"` as the gateway does (gateway-facts.md). */
export function closeCurrentBatch(life: Lifecycle, now: number): Answer {
  return { status: 200, body: batchView(life, life.closeBatch(now), 'closing') };
}
