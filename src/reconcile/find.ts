import type { GatewayClient } from '../gateway/client';
import type { GatewayResult, TransactionDetail } from '../gateway/types';
import type { UnknownRecord } from '../idempotency';
import type { UpstreamScheduler } from '../limiter';
import type { Reservation, SaleRecord, SaleRecords } from '../sale-records';
import { capturedCents, recordFromDetail, refundedCents, statusOf } from '../sales/sale-view';
import { writeReference } from '../writes/protocol';
import type { AddCardResult, CardService } from '../payment-methods/add-card';
import type { PendingWrite } from './pending-write';
import type { FindResult, Finder } from './reconciler';
import { createSaleFinder } from './find-sale';

/** What the reconciler found a write to have done, for the HTTP edge to render as the write would have. */
export type Found =
  | { op: 'sale' | 'authorize' | 'capture' | 'void'; detail: TransactionDetail }
  /** A card added from a Pay.js payment key: its verification found, voided and the method named. */
  | { op: 'payment_method'; transaction: string; result: AddCardResult }
  | { op: 'refund'; detail: TransactionDetail; refund: { key: string; refnum: string; amountCents: number; method: 'refund' | 'void' } };

/** Renders a found write's answer (the HTTP edge's shapes) from its record and what was found. */
export type AnswerOf = (record: UnknownRecord, found: Found) => FindResult & { kind: 'found' };

export interface WriteFinderDeps {
  gateway: GatewayClient;
  budget: Pick<UpstreamScheduler, 'run'>;
  records: SaleRecords;
  answer: AnswerOf;
  lookbackMarginMs: number;
  /** Finishes a card verification found open (void, then the new payment method). */
  cards: Pick<CardService, 'complete'>;
}

/** The look could not decide yet (another reservation on the sale is still in flight): try again later. */
export class NotYetError extends Error {}

/**
 * The reconciler's Finder for every write of the write protocol, by the operation its record names:
 *   sale / authorize  by invoice, amount and customer in the gateway's lists (find-sale.ts);
 *   payment_method  the card verification (an authonly) likewise; found, it is voided if still open and the
 *            new payment method named (CardService.complete), so the void always follows the authorization;
 *   capture, void, refund  on the original (`GET /transactions/{key}`), against what the sale's record knew:
 *     capture  the authorization is captured now;
 *     void     the sale is voided now;
 *     refund   the gateway shows more money returned than the record had confirmed, by at least this refund.
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
    // A transaction with a sale record belongs to another key (or was already resolved): never claim it twice.
    isTaken: async (key) => (await records.get(key)) !== undefined,
    lookbackMarginMs: deps.lookbackMarginMs,
  });

  async function sale(record: UnknownRecord, op: 'sale' | 'authorize', customer: string, amount: string): Promise<FindResult> {
    if (!record.invoice) throw new Error('the record keeps no invoice');
    const tx = await findSale({ command: op === 'sale' ? 'sale' : 'authonly', customer, invoice: record.invoice, amount, startedMs: record.startedMs });
    if (!tx) return { kind: 'absent' };
    // The sale is tokengate's from now on: its customer owns it, and refunds are bounded by it.
    await records.create(tx.key, { ...recordFromDetail(tx), customer });
    return answer(record, { op, detail: tx });
  }

  /** A card verification: found, it is finished (voided if open) and answered as the route would have. */
  async function paymentMethod(record: UnknownRecord, customer: string, amount: string): Promise<FindResult> {
    if (!record.invoice) throw new Error('the record keeps no invoice');
    const tx = await findSale({ command: 'authonly', customer, invoice: record.invoice, amount, startedMs: record.startedMs });
    if (!tx) return { kind: 'absent' };
    const result = await deps.cards.complete(customer, {
      key: tx.key,
      refnum: tx.refnum,
      result_code: tx.result_code ?? 'E',
      result: tx.result ?? '',
      ...(tx.auth_amount !== undefined ? { auth_amount: tx.auth_amount } : {}),
      voided: statusOf(tx) === 'voided',
      last4: tx.creditcard?.number.match(/(\d{4})\s*$/)?.[1],
    });
    return answer(record, { op: 'payment_method', transaction: tx.key, result });
  }

  /** Settles this write's reservation when the look decided (found: applied; absent and proven: released). */
  const settle = (saleKey: string, op: Reservation['op'], id: string, how: 'applied' | 'released', cents?: number) => records.settle(saleKey, op, id, how, cents);

  async function followUp(write: PendingWrite, record: UnknownRecord, op: 'capture' | 'void' | 'refund', saleKey: string): Promise<FindResult> {
    const id = writeReference(write.scope, write.key);
    const [known, reservations] = await Promise.all([records.get(saleKey), records.reservations(saleKey)]);
    const mine = reservations.find((r) => r.id === id);
    // Another capture or refund on this sale still in flight (not yet known or unknown) blurs the comparison.
    if (reservations.some((r) => r.id !== id && !r.unknown)) throw new NotYetError('another write on this sale is in flight');
    const tx = await read(() => gateway.getTransaction(saleKey));
    const found = decide(op, tx, known, mine);
    if (found === undefined) return { kind: 'absent', onProven: mine ? () => settle(saleKey, mine.op, id, 'released') : undefined };
    if (op === 'capture' && mine) await settle(saleKey, 'capture', id, 'applied', capturedCents(tx));
    if (op === 'void') await records.markVoided(saleKey);
    if (op === 'refund' && mine) {
      await settle(saleKey, 'refund', id, 'applied', mine.cents);
      if (statusOf(tx) === 'voided') await records.markVoided(saleKey);
    }
    return answer(record, found);
  }

  return async (write, record) => {
    const ctx = record.context;
    if (!ctx) throw new Error('the record keeps no write context: it cannot be looked up');
    switch (ctx.op) {
      case 'sale':
      case 'authorize':
        if (!ctx.amount) throw new Error('the record keeps no amount');
        return sale(record, ctx.op, ctx.customer, ctx.amount);
      case 'payment_method':
        if (!ctx.amount) throw new Error('the record keeps no amount');
        return paymentMethod(record, ctx.customer, ctx.amount);
      case 'capture':
      case 'void':
      case 'refund':
        if (!ctx.sale) throw new Error('the record keeps no sale key');
        return followUp(write, record, ctx.op, ctx.sale);
      default:
        throw new Error(`reconciling a ${ctx.op} is not supported`);
    }
  };
}

/** Whether the original's state shows this follow-up done, and what it did. */
function decide(op: 'capture' | 'void' | 'refund', tx: TransactionDetail, known: SaleRecord | undefined, mine: Reservation | undefined): Found | undefined {
  const status = statusOf(tx);
  if (op === 'capture') return status === 'pending_settlement' || status === 'settled' ? { op, detail: tx } : undefined;
  if (op === 'void') return status === 'voided' ? { op, detail: tx } : undefined;
  if (!known || !mine) return undefined;
  // Money returned on the gateway: refunds issued, what refund:adjust took off an unsettled capture, or all
  // of it when a creditvoid voided the sale.
  const returned = status === 'voided' ? known.capturedCents : refundedCents(tx) + Math.max(0, known.capturedCents - capturedCents(tx));
  if (returned < known.refundedCents + mine.cents) return undefined;
  const newest = tx.refunds[tx.refunds.length - 1];
  const method = status === 'voided' || !newest ? 'void' : 'refund';
  const ref = method === 'refund' && newest ? newest : { key: tx.key, refnum: tx.refnum };
  return { op, detail: tx, refund: { key: ref.key, refnum: ref.refnum, amountCents: mine.cents, method } };
}
