import type { GatewayClient } from '../gateway/client';
import type { GatewayResult, TransactionDetail } from '../gateway/types';
import { fromCents } from '../gateway/money';
import type { StoredResponse, UnknownRecord, WriteContext } from '../idempotency';
import type { UpstreamScheduler } from '../limiter';
import type { OwnRefund, Reservation, SaleFields, SaleMoves, SaleRecord, SaleRecords } from '../sale-records';
import { achStatusOfCode, fieldsOfDetail, recordFromDetail, shownCapturedCents, statusOf } from '../sales/sale-view';
import { writeReference } from '../writes/protocol';
import type { AddCardResult, CardService } from '../payment-methods/add-card';
import type { WalletCustomers } from '../wallet/customers';
import type { CustomerObject } from '../wallet/objects';
import type { WalletRemovals } from '../wallet/removals';
import type { PendingWrite } from './pending-write';
import type { EventDraft } from '../events/types';
import { isWriteOp, paymentMethodAdded, type WriteOp } from '../events/write-events';
import { GatewayNotFoundError } from '../gateway/errors';
import type { WalletStore } from '../wallet/types';
import type { FindResult, Finder } from './reconciler';
import { createSaleFinder, matches, type SaleLookup as SaleSearch } from './find-sale';
import { parseTransactionDetail } from '../gateway/parse';
import { createCreditScan } from './find-refund';
import { decideRefund } from './refund-decision';
import { chargedAsCheck } from '../sales/check-on-card';
import type { CheckKeys } from '../payment-methods/check-key';

export { canonicalExplanation, explanations } from './refund-decision';

/**
 * What the reconciler found a write to have done, for the HTTP edge to render as the write would have.
 * `kept`: the sale's fields its record keeps (follow-ups), for what a lookup does not say (the payment method).
 */
export type Found =
  | { op: 'sale' | 'authorize' | 'capture' | 'void'; detail: TransactionDetail; kept?: SaleFields }
  /**
   * A card-path sale (a payment key, no authorization) the gateway debited as a check (src/sales/check-on-card.ts):
   * voided now, answered as the refusal the caller gets when the gateway refuses such a key.
   */
  | { op: 'check_voided'; detail: TransactionDetail }
  /** A card added from a Pay.js payment key: its verification found, voided and the method named. */
  | { op: 'payment_method'; transaction: string; result: AddCardResult }
  | { op: 'refund'; detail: TransactionDetail; refund: { key: string; refnum: string; amountCents: number; method: 'refund' | 'void' } }
  /** A customer created through tokengate, found by its customerid. */
  | { op: 'customer_create'; customer: CustomerObject }
  /** A removal finished (issue 26): deleting again is harmless, "already gone" is done. */
  | { op: 'payment_method_remove' }
  | { op: 'customer_delete' };

/** Renders a found write's answer (the HTTP edge's shapes) from its record and what was found. */
export type AnswerOf = (record: UnknownRecord, found: Found) => FindResult & { kind: 'found' };

export interface WriteFinderDeps {
  gateway: GatewayClient;
  budget: Pick<UpstreamScheduler, 'run'>;
  records: SaleRecords;
  answer: AnswerOf;
  lookbackMarginMs: number;
  /** The gateway's longest processing time: a write unknown for longer can no longer land (RECONCILE_MAX_PROCESSING_MS). */
  maxProcessingMs: number;
  /** Finishes a card verification found open (void, then the new payment method). */
  cards: Pick<CardService, 'complete'>;
  /**
   * Voids a check debited on the card path with no authorization (a check form's key sent as a card's) and, for a
   * sale that kept its key (`save_payment_method`), removes the bank method it saved.
   */
  checkKeys: CheckKeys;
  /**
   * The sales the gateway's webhooks told of under an invoice (src/webhooks): a sale or authorization found there
   * is resolved with no gateway read (the webhook usually arrives before tokengate's own attempt is known to
   * have failed). Its record is made from the webhook's subset and filled by the first read of its view.
   */
  told?: (invoice: string) => Promise<Record<string, unknown>[]>;
  /** The wallet's writes: a customer create looked up by its customerid, a removal finished. */
  wallet: { customers: Pick<WalletCustomers, 'findCreated' | 'releaseClaim'>; removals: Pick<WalletRemovals, 'finish'> };
}

/**
 * The record of a sale the gateway holds for a write (found by the reconciler, or re-applied to a completed key):
 * its customer, its fields, the payment method charged and a bank payment's authorization (what only the write
 * knew, from its context), and the write that made it.
 */
function saleRecordFound(tx: TransactionDetail, context: WriteContext | undefined, customer: string, writer: string): SaleRecord {
  const { seeded: _seed, ...seeded } = recordFromDetail(tx);
  const paymentMethod = context?.payment_method;
  // A bank payment keeps what only its write knew (the authorization, the SEC code), and where its debit stands.
  const bank = context?.bank;
  const fields = seeded.fields && {
    ...seeded.fields,
    ...(paymentMethod ? { payment_method: paymentMethod } : {}),
    ...(bank && tx.result_code === 'A' ? { bank: { ...bank, ach_status: achStatusOfCode(tx.status_code) ?? 'P' } } : bank ? { bank } : {}),
  };
  return { ...seeded, customer, ...(fields ? { fields } : {}), writer };
}

/**
 * What a completed write records beside its answer, re-applied by the reconciler when its follow-through is marked
 * pending (IdempotencyStore.markFollowing: the answer was kept, the rest refused, and the replica may have died
 * before keeping it). One row per write operation (WriteOp: a new operation does not type-check without its row),
 * each re-deriving from the stored answer, the write's context or the gateway what the write kept beside its answer,
 * each safe to repeat (the replica that answered may keep it still). The map: src/reconcile/README.md.
 *   sale / authorize  the sale's record (its customer's from then on, in its batch's index), made from the gateway's
 *                     look-up of the sale its answer names, unless it exists (created only when absent, or claimed
 *                     when a read seeded it meanwhile); a card it stored (`save_payment_method`): the customer's view
 *                     re-reads the gateway at its next read, and the card's `payment_method.added`, from the gateway;
 *   payment_method    the card added: the customer's view re-reads the gateway at its next read (without it, a view
 *                     loaded before the add listed the customer's cards without the one answered 201 until its
 *                     freshness bound, a day by default);
 *   others            nothing beside the answer to re-apply (a follow-up's settlement and a removal's tombstone are
 *                     kept before the answer; a created customer's view, absent, reads the gateway when first asked).
 * Answers the events the write handed over itself (Written.events) that its answer alone cannot make (the derived
 * ones the reconciler appends: eventsOfWrite). The payment events are appended once per change. Throws when it
 * could not read the gateway or keep a record (tried again later).
 */
export type FollowThrough = (write: PendingWrite, context: WriteContext | undefined, response: StoredResponse) => Promise<readonly EventDraft[]>;

export interface FollowThroughDeps {
  gateway: Pick<GatewayClient, 'getTransaction' | 'getPaymentMethod'>;
  budget: Pick<UpstreamScheduler, 'run'>;
  records: SaleRecords;
  /** The customers' views: forgotten, a view reads the gateway's word (which has the write) at its next read. */
  wallet: Pick<WalletStore, 'forget'>;
}

type Body = { key?: unknown; payment_method?: unknown; error?: { transaction?: { key?: unknown; payment_method?: unknown } } } | null;
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function createFollowThrough(deps: FollowThroughDeps): FollowThrough {
  const { gateway, budget, records, wallet } = deps;
  const read = async <T>(call: () => Promise<GatewayResult<T>>): Promise<T> => (await budget.run('read', call, { maxWaitMs: 0 })).value;

  /** The sale's or authorization's record, made as this write's unless it exists (or claimed when seeded). */
  async function saleRecord(write: PendingWrite, context: WriteContext, key: string, paymentMethod: string | undefined): Promise<void> {
    // Absent, or seeded by a read meanwhile (no writer): made, or claimed, as this write's.
    const kept = await records.get(key);
    if (kept !== undefined && !unclaimed(kept)) return;
    const tx = await read(() => gateway.getTransaction(key));
    // A card the sale stored is the method it charged (the answer names it; the context, sent with a payment key, does not).
    const ctx = paymentMethod && !context.payment_method ? { ...context, payment_method: paymentMethod } : context;
    await records.create(key, saleRecordFound(tx, ctx, context.customer, writeReference(write.scope, write.key)));
  }

  /** A card the write stored: the customer's view re-reads the gateway; its event, as the write made it (the gateway's object). */
  async function cardStored(custkey: string, pmkey: string): Promise<EventDraft> {
    await wallet.forget(custkey);
    let data: unknown;
    try {
      data = await read(() => gateway.getPaymentMethod(custkey, pmkey));
    } catch (err) {
      // Removed since (its removal's event follows this one): what the answer knows of it.
      if (!(err instanceof GatewayNotFoundError)) throw err;
      data = { type: 'customerpaymentmethod', key: pmkey, customer: custkey };
    }
    return paymentMethodAdded(pmkey, data);
  }

  const charge = async (write: PendingWrite, context: WriteContext, response: StoredResponse): Promise<readonly EventDraft[]> => {
    const body = response.body as Body;
    const sale = response.status === 201 ? body : response.status === 402 ? body?.error?.transaction : undefined;
    const key = text(sale?.key);
    if (!key) return [];
    // A payment key kept on the customer (`save_payment_method`): the card it stored, named by the answer.
    const stored = context.save === true && !context.payment_method && response.status === 201 ? text(body?.payment_method) : undefined;
    await saleRecord(write, context, key, stored);
    return stored ? [await cardStored(context.customer, stored)] : [];
  };

  const none = async (): Promise<readonly EventDraft[]> => [];
  const FOLLOW: { readonly [op in WriteOp]: (write: PendingWrite, context: WriteContext, response: StoredResponse) => Promise<readonly EventDraft[]> } = {
    sale: charge,
    authorize: charge,
    // The settlement of the sale's reservation (and a void's mark) is kept before the answer (Written.before).
    capture: none,
    void: none,
    refund: none,
    payment_method: async (_write, context, response) => {
      if (response.status !== 201) return [];
      // The event the answer makes (the method it answers) is the reconciler's: eventsOfWrite.
      await wallet.forget(context.customer);
      return [];
    },
    // The customerid claim is settled before the answer; the view, never loaded, reads the gateway when first asked.
    customer_create: none,
    // The tombstone, the wait, the gateway's delete and the evictions all come before the answer (wallet/removals.ts).
    payment_method_remove: none,
    customer_delete: none,
  };

  return async (write, context, response) => (context && isWriteOp(context.op) ? FOLLOW[context.op](write, context, response) : []);
}

/** A record made by no write (seeded from a read of the sale) and claimed by none yet. */
const unclaimed = (record: SaleRecord): boolean => record.writer === undefined && record.seeded === true;

/** The look could not decide yet (another reservation on the sale is still in flight): try again later. */
export class NotYetError extends Error {}

/**
 * The reconciler's Finder for every write of the write protocol, by the operation its record names:
 *   sale / authorize  by invoice, amount and customer in the gateway's lists (find-sale.ts);
 *   payment_method  the card verification (an authonly) likewise; found, it is voided if still open and the
 *            new payment method named (CardService.complete), so the void always follows the authorization;
 *   customer_create  by its customerid in the gateway's customer list (the newest holding it);
 *   payment_method_remove, customer_delete  finished (deleting again is harmless: already gone is done);
 *   capture, void, refund  on the original (`GET /transactions/{key}`), against what the sale's record knew:
 *     capture  the authorization is captured now;
 *     void     the sale is voided now;
 *     refund   its tagged credit in the batch lists, or the sale's look-up (voided, capture lowered) needing it;
 *              absent only when nothing documented could be it (refund-decision.ts, find-refund.ts, issue 42).
 * Found or proven absent, the sale's record is settled too (the refund or capture reservation applied or
 * released), so money bounds stay exact. Gateway reads take a read slot only when one is free at once
 * (maxWaitMs 0: never a slot kept for sales, never a wait in front of a checkout).
 */
export function createWriteFinder(deps: WriteFinderDeps): Finder {
  const { gateway, budget, records, answer } = deps;
  const read = async <T>(call: () => Promise<GatewayResult<T>>): Promise<T> => (await budget.run('read', call, { maxWaitMs: 0 })).value;
  const findSale = createSaleFinder({
    gateway,
    read,
    isTaken: taken,
    lookbackMarginMs: deps.lookbackMarginMs,
  });
  const creditsSince = createCreditScan({ gateway, read });

  /**
   * A transaction with a sale record belongs to another key (or was already resolved): never claim it twice. Unless
   * the record names this write (`writer`): its replica kept the record and died before keeping the answer, and
   * calling the sale absent would free the key for a second charge. Nor is a seeded record another's (made by no
   * write: an internal read or action on a sale tokengate had no record of): it may be this write's sale, read before
   * its answer was found; the write takes it by claiming it when the record is kept (`sale`, below), in one atomic
   * step, so two writes never both do. A record with neither mark (kept before `writer` was) stays another's.
   */
  async function taken(key: string, writer: string | undefined): Promise<boolean> {
    const kept = await records.get(key);
    return kept !== undefined && (writer === undefined || (kept.writer !== writer && !unclaimed(kept)));
  }

  /** The newest transaction the webhooks told of that matches the attempt and no other key accounts for. */
  async function toldOf(search: Omit<SaleSearch, 'startedMs'>): Promise<TransactionDetail | undefined> {
    const told = deps.told ? await deps.told(search.invoice) : [];
    for (const object of told.reverse()) {
      let tx: TransactionDetail;
      try {
        tx = parseTransactionDetail({ created: '', ...object });
      } catch {
        continue;
      }
      if (matches(tx, search) && !(await taken(tx.key, search.writer))) return tx;
    }
    return undefined;
  }

  /**
   * A card-path authonly naming a check form's key, debited as a check sale instead (S, not A;
   * src/sales/check-on-card.ts): the sale of the same search, when it reads as a check.
   */
  async function checkSaleOf(search: Omit<SaleSearch, 'startedMs'>, startedMs: number): Promise<TransactionDetail | undefined> {
    const sale = await findSale({ ...search, command: 'sale', startedMs });
    return sale && chargedAsCheck(sale) ? sale : undefined;
  }

  async function sale(write: PendingWrite, record: UnknownRecord, op: 'sale' | 'authorize', customer: string, amount: string): Promise<FindResult> {
    if (!record.invoice) throw new Error('the record keeps no invoice');
    const writer = writeReference(write.scope, write.key);
    const search = { command: op === 'sale' ? 'sale' as const : 'authonly' as const, customer, invoice: record.invoice, amount, writer };
    const told = await toldOf(search);
    const keyAsCard = !record.context?.bank && !record.context?.payment_method;
    let tx = told ?? await findSale({ ...search, startedMs: record.startedMs });
    if (!tx && op === 'authorize' && keyAsCard) tx = await checkSaleOf(search, record.startedMs);
    if (!tx) return { kind: 'absent' };
    // Sent as a card's (a payment key without authorization) and debited as a check: no debit may stand without
    // the shopper's authorization, so it is voided (again harmless) before the key answers the refusal; nor may a
    // bank account it saved stay kept (save_payment_method: removed, as the write itself does).
    // A webhook's object is a subset (it may lack the card): the look-up decides then.
    const check = keyAsCard && chargedAsCheck(tx) ? (told ? await read(() => gateway.getTransaction(tx.key)) : tx) : undefined;
    if (check && chargedAsCheck(check)) {
      await deps.checkKeys.undo(customer, { key: check.key, voided: statusOf(check) === 'voided', created: check.created }, record.context?.save === true);
      return answer(record, { op: 'check_voided', detail: check });
    }
    // The sale is tokengate's from now on: its customer owns it, refunds are bounded by it, and its captures
    // and voids answer with its fields (the payment method charged included). A seeded record is claimed here (the
    // writer set only while none is): refused, another write claimed it since the search, which looks again.
    if (!(await records.create(tx.key, saleRecordFound(tx, record.context, customer, writer), { stale: told !== undefined }))) {
      throw new NotYetError('the sale found was claimed by another write meanwhile');
    }
    return answer(record, { op, detail: tx });
  }

  /** A card verification: found, it is finished (voided if open) and answered as the route would have. */
  async function paymentMethod(record: UnknownRecord, customer: string, amount: string): Promise<FindResult> {
    if (!record.invoice) throw new Error('the record keeps no invoice');
    const search = { command: 'authonly' as const, customer, invoice: record.invoice, amount };
    // Found as the check sale it became, it is voided as a verification is (complete), so no debit stands.
    const tx = (await toldOf(search)) ?? (await findSale({ ...search, startedMs: record.startedMs })) ?? (await checkSaleOf(search, record.startedMs));
    if (!tx) return { kind: 'absent' };
    const result = await deps.cards.complete(customer, {
      key: tx.key,
      refnum: tx.refnum,
      result_code: tx.result_code ?? 'E',
      result: tx.result ?? '',
      ...(tx.auth_amount !== undefined ? { auth_amount: tx.auth_amount } : {}),
      voided: statusOf(tx) === 'voided',
      last4: tx.creditcard?.number.match(/(\d{4})\s*$/)?.[1],
      // A check form's key debited as a check: voided and its bank method removed (src/payment-methods/check-key.ts).
      ...(chargedAsCheck(tx) ? { check: { created: tx.created } } : {}),
    });
    return answer(record, { op: 'payment_method', transaction: tx.key, result });
  }

  /** Settles this write's reservation when the look decided (found: applied; absent and proven: released). */
  const settle = (saleKey: string, op: Reservation['op'], id: string, how: 'applied' | 'released', cents?: number, refundKey?: string, listed?: OwnRefund) =>
    records.settle(saleKey, op, id, how, cents, refundKey, listed);

  /** The sale's record and moves, refused (NotYetError) while another capture or refund on it is in flight. */
  async function quietRecord(saleKey: string, id: string): Promise<{ known: SaleRecord | undefined; moves: SaleMoves }> {
    const [known, moves] = await Promise.all([records.get(saleKey), records.moves(saleKey)]);
    // Another capture or refund on this sale still in flight (not yet known or unknown) blurs the comparison.
    if (moves.reservations.some((r) => r.id !== id && !r.unknown)) throw new NotYetError('another write on this sale is in flight');
    return { known, moves };
  }

  /** The sale's settled refund:adjusts (listed on its record with the sale's own key): what they took off it. */
  async function settledAdjustCents(saleKey: string): Promise<number> {
    const view = await records.view(saleKey);
    return (view?.refunds ?? []).filter((r) => r.key === saleKey && r.method === 'refund').reduce((sum, r) => sum + r.cents, 0);
  }

  async function followUp(write: PendingWrite, record: UnknownRecord, op: 'capture' | 'void' | 'refund', saleKey: string): Promise<FindResult> {
    const id = writeReference(write.scope, write.key);
    const { known, moves } = await quietRecord(saleKey, id);
    const tx = await read(() => gateway.getTransaction(saleKey));
    const { reservations, creditedRefunds } = moves;
    const mine = reservations.find((r) => r.id === id);
    const others = reservations.filter((r) => r.id !== id && r.op === 'refund' && r.unknown);
    // A refund's own transaction is found in the batch lists (find-refund.ts), back to before any of the sale's
    // unknown refunds began. A credit needs the sale settled (settling never reverses): an unsettled or voided
    // sale at this look has none, and a settled one's are in batches after its own.
    const refunding = op === 'refund' && known !== undefined && mine !== undefined;
    const sinceMs = Math.min(record.startedMs, ...others.map((r) => r.unknownSinceMs ?? record.startedMs)) - deps.lookbackMarginMs;
    const credits = refunding && statusOf(tx) === 'settled' ? await creditsSince(sinceMs, tx.batch?.key) : [];
    const adjusts = refunding ? await settledAdjustCents(saleKey) : 0;
    // Read again after the gateway: a write that began meanwhile may be in the gateway's answer and not yet in
    // the record (a refund made, not yet credited to its key). Anything moved: look again on a later pass.
    const after = await quietRecord(saleKey, id);
    if (!sameMoney(known, moves, after.known, after.moves)) throw new NotYetError('the sale\'s record moved while the gateway was read');
    // Several unknown refunds are told apart by a fixed rule only once none can still land (Redis's clock).
    const nowMs = record.nowMs ?? Date.now();
    const final = [mine, ...others].every((r) => r?.unknownSinceMs !== undefined && r.unknownSinceMs + deps.maxProcessingMs <= nowMs);
    let found: Found | undefined;
    if (op === 'refund') {
      // Its reservation settled applied and its answer lost (a replica that kept the one and died before the
      // other): the record says what the gateway answered. Never absent: the key would be freed and the same money
      // refunded again (guarantee 7).
      const settled = known && !mine ? moves.applied.get(id) : undefined;
      if (settled) {
        if (statusOf(tx) === 'voided') await records.markVoided(saleKey); // the write's last step, maybe lost with it
        return answer(record, { op, detail: tx, refund: { key: settled.key, refnum: settled.refnum, amountCents: settled.cents, method: settled.method } });
      }
      if (!known || !mine) return { kind: 'absent' };
      const decision = decideRefund({ tx, known, mine, others, final, credits, credited: creditedRefunds, settledAdjustCents: adjusts });
      if (decision.happened === 'unknown') throw new NotYetError(decision.why);
      if (decision.happened) found = { op, detail: tx, refund: { key: decision.key, refnum: decision.refnum, amountCents: mine.cents, method: decision.method } };
    } else {
      found = decide(op, tx);
      // A capture found on a look-up without auth_amount: it captured the amount it asked (its reservation), which
      // the answer and the record then say, not the look-up's `amount` (the authorization's).
      if (found?.op === 'capture' && mine && tx.auth_amount === undefined) found = { op, detail: { ...tx, auth_amount: fromCents(mine.cents) } };
    }
    if (found === undefined) return { kind: 'absent', onProven: mine ? () => settle(saleKey, mine.op, id, 'released') : undefined };
    // What was captured: the look-up's auth_amount; without one (not documented on every look-up), the amount this
    // capture asked, which the gateway captures as asked (a partial capture's `amount` stays the authorization's).
    if (op === 'capture' && mine) await settle(saleKey, 'capture', id, 'applied', shownCapturedCents(tx) ?? mine.cents);
    // Captured, the sale is in a batch: its kept fields follow, so a later void answers it.
    if (op === 'capture' && known?.fields) await records.describe(saleKey, { ...known.fields, ...fieldsOfDetail(tx), payment_method: known.fields.payment_method }, 'update');
    // A void's reservation (issue 25, item 5) settles applied, which makes the sale voided; an older void made
    // before voids reserved has none.
    if (op === 'void') await (mine ? settle(saleKey, 'void', id, 'applied') : records.markVoided(saleKey));
    if (op === 'refund' && mine) {
      const refund = found.op === 'refund' ? found.refund : undefined;
      const own = refund && refund.key !== saleKey ? refund.key : undefined;
      await settle(saleKey, 'refund', id, 'applied', mine.cents, own, refund && { key: refund.key, refnum: refund.refnum, cents: mine.cents, method: refund.method });
      if (statusOf(tx) === 'voided') await records.markVoided(saleKey);
    }
    return answer(record, known?.fields && (found.op === 'capture' || found.op === 'void') ? { ...found, kept: known.fields } : found);
  }

  return async (write, record) => {
    const ctx = record.context;
    if (!ctx) throw new Error('the record keeps no write context: it cannot be looked up');
    switch (ctx.op) {
      case 'sale':
      case 'authorize':
        if (!ctx.amount) throw new Error('the record keeps no amount');
        return sale(write, record, ctx.op, ctx.customer, ctx.amount);
      case 'payment_method':
        if (!ctx.amount) throw new Error('the record keeps no amount');
        return paymentMethod(record, ctx.customer, ctx.amount);
      case 'capture':
      case 'void':
      case 'refund':
        if (!ctx.sale) throw new Error('the record keeps no sale key');
        return followUp(write, record, ctx.op, ctx.sale);
      case 'customer_create': {
        // The customerid is what a create is found by (the custkey is what it would have answered).
        const reference = writeReference(write.scope, write.key);
        const customer = await deps.wallet.customers.findCreated(ctx.customer, reference, read);
        if (!customer) return { kind: 'absent', onProven: () => deps.wallet.customers.releaseClaim(ctx.customer, reference) };
        return answer(record, { op: 'customer_create', customer });
      }
      case 'payment_method_remove':
      case 'customer_delete':
        await deps.wallet.removals.finish(ctx);
        return answer(record, ctx.op === 'customer_delete' ? { op: 'customer_delete' } : { op: 'payment_method_remove' });
      default:
        throw new Error(`reconciling a ${ctx.op} is not supported`);
    }
  };
}

/**
 * Whether the original's look-up shows this capture or void done (gateway-facts.md: `status_code`, and the
 * batch an authorization joins when captured). Refunds: refund-decision.ts.
 */
function decide(op: 'capture' | 'void', tx: TransactionDetail): Found | undefined {
  const status = statusOf(tx);
  if (op === 'capture') return status === 'pending_settlement' || status === 'settled' ? { op, detail: tx } : undefined;
  return status === 'voided' ? { op, detail: tx } : undefined;
}

/** Whether the sale's money stood still between two reads: the same totals, reservations and credited refunds. */
function sameMoney(a: SaleRecord | undefined, am: SaleMoves, b: SaleRecord | undefined, bm: SaleMoves): boolean {
  const totals = (r: SaleRecord | undefined) => (r ? [r.state, r.authorizedCents, r.capturedCents, r.refundedCents, r.pendingRefundCents].join() : '');
  const reservations = (m: SaleMoves) => m.reservations.map((r) => `${r.id}=${r.op}:${r.cents}:${r.unknown}`).sort().join();
  return totals(a) === totals(b) && reservations(am) === reservations(bm) && [...am.creditedRefunds].sort().join() === [...bm.creditedRefunds].sort().join();
}
