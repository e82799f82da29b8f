import type { GatewayClient } from '../gateway/client';
import { GatewayRefusedError } from '../gateway/errors';
import type { RefundRequest, Transaction } from '../gateway/types';
import type { Logger } from '../observability/logger';
import type { OwnRefund, ReservedOp, SaleFields, SaleRecord, SaleRecords, Settlement } from '../sale-records';
import type { Budget } from '../tokens/token-service';
import { WriteNotSentError, sentness, unwrapNotSent } from '../writes/not-sent';
import { KEEP_AT_LEAST_MS, keepLater, type LaterPart, type WhenStoreReady } from '../writes/keep-later';
import { fromCents } from '../gateway/money';
import { fieldsAfterCapture } from './sale-object';
import type { FoundSale, SaleLookup } from './sale-lookup';
import { fieldsOfDetail, statusOf } from './sale-view';
import { writeTag } from '../writes/reference';

/**
 * Why a follow-up was refused before anything was sent (decided from the sale's record). `busy`: another
 * follow-up of the sale has not ended (an outcome the reconciler has yet to settle): try again shortly.
 */
export type SaleRefusal = 'not_capturable' | 'not_voidable' | 'refund_exceeds' | 'busy' | 'returned' | 'pending';

export class SaleRefusedError extends Error {
  constructor(readonly reason: SaleRefusal) {
    super(`sale refused: ${reason}`);
    this.name = 'SaleRefusedError';
  }
}

export interface FollowUpResult {
  transaction: Transaction;
  /** The amount moved, cents (the capture's or the refund's). */
  amountCents: number;
  /**
   * What Redis could not take of the sale's record when the gateway answered (the settlement of its reservation, a
   * void's mark): the write protocol keeps them BEFORE the write's answer (Written.before), so a kept answer means a
   * settled reservation. A replica that dies first leaves the key to its lease and the reconciler, which settles the
   * reservation from the gateway's records (or from the record, when the settlement was kept and the answer not).
   */
  later: LaterPart[];
}

/** A capture or a void done: the gateway's (minimal) answer and the sale's fields, as kept from now on. */
export interface SaleFollowUpResult extends FollowUpResult {
  fields: SaleFields;
}

export interface RefundResult extends FollowUpResult {
  /** 'void' when the gateway voided the unsettled sale instead of refunding it (creditvoid, same key). */
  method: 'refund' | 'void';
}

export interface FollowUpService {
  /** `reservation`: the write's stable reference (Attempt.reference), so the reconciler can settle it. */
  capture(saleKey: string, found: FoundSale, amountCents: number | undefined, reservation: string): Promise<SaleFollowUpResult>;
  /**
   * One void of a sale goes out at a time (issue 25, item 5): a void that finds another in flight waits for it
   * and answers from it (`voidedBy: 'another'`) instead of sending a second one the gateway would refuse.
   */
  void(saleKey: string, found: FoundSale, reservation: string): Promise<SaleFollowUpResult & { voidedBy: 'this' | 'another' }>;
  refund(saleKey: string, amountCents: number | undefined, reservation: string): Promise<RefundResult>;
}

export interface FollowUpServiceDeps {
  gateway: GatewayClient;
  budget: Budget;
  records: SaleRecords;
  logger: Logger;
  /** Folds a gateway read into the sale's record (the lookup's, so the view has one way in). */
  fold: SaleLookup['fold'];
  /** How long a void waits for another void (or capture, or refund) of the same sale before it answers 503. */
  voidWaitMs: number;
  /** Poll interval while waiting (jittered ±50 %). */
  voidPollMs?: number;
  /** Redis back after a restart or failover: a settlement Redis could not take is tried again at once. */
  whenStoreReady?: WhenStoreReady;
}

/** Refused before sending: the Idempotency-Key is freed, as nothing moved. */
const refused = (reason: SaleRefusal) => new WriteNotSentError(new SaleRefusedError(reason));

export function createFollowUpService(deps: FollowUpServiceDeps): FollowUpService {
  const { gateway, budget, records, logger } = deps;
  const pollMs = deps.voidPollMs ?? 50;

  /**
   * Settles a reservation from how the call ended. One Redis could not take (a restart, a failover) is kept later:
   * with `later` (the call answered), by the write protocol before the write's answer (Written.before), so an answer
   * is never kept with its reservation held; without (the call failed: the key is unknown or freed), by its own
   * keepLater (src/writes/keep-later.ts). Left held, the sale would count a refund that landed as still in flight
   * for good (its amount missing from the view, its voids and the gateway's events about it answered busy; found
   * by the soak's Redis restart, 2026-11-28).
   */
  async function settle(saleKey: string, op: ReservedOp, reservation: string, how: Settlement, appliedCents?: number, refundKey?: string, listed?: OwnRefund, later?: LaterPart[]): Promise<void> {
    await keep(op, `settle ${how}`, () => records.settle(saleKey, op, reservation, how, appliedCents, refundKey, listed), later);
  }

  /**
   * Runs a write of the sale's record now; failing, logs it and hands it to `later` (the write protocol keeps it
   * before the answer), or without one keeps trying itself until Redis takes it.
   */
  async function keep(op: string, what: string, write: () => Promise<unknown>, later?: LaterPart[]): Promise<void> {
    try {
      await write();
    } catch (err) {
      logger.error('could not record a follow-up\'s outcome on its sale now; recording it when Redis is back', { op, what, err });
      if (later) {
        later.push({ what, keep: write });
        return;
      }
      keepLater([{ what, keep: write }], {
        untilMs: Date.now() + KEEP_AT_LEAST_MS, log: logger, op, whenReady: deps.whenStoreReady,
        gaveUp: 'gave up recording a follow-up\'s outcome on its sale: the sale\'s record holds it as in flight until the gateway is read',
      });
    }
  }

  /** Keeps the sale's fields on its record; a failure is logged (a later answer reads them again). */
  async function describe(saleKey: string, fields: SaleFields, how: 'fill' | 'update'): Promise<void> {
    try {
      await records.describe(saleKey, fields, how);
    } catch (err) {
      logger.warn('could not keep a sale\'s fields', { how, err });
    }
  }

  /**
   * The sale's own fields for a capture's or a void's answer, with no gateway read for any sale tokengate made
   * or found: kept in its record, or in the lookup find() just made. Only a record kept before fields were
   * costs one read (then they are kept). That read comes before the write: failing, it proves nothing was sent.
   */
  async function fieldsFor(saleKey: string, found: FoundSale): Promise<SaleFields> {
    if (found.record.fields) return found.record.fields;
    let detail = found.detail;
    if (!detail) {
      try {
        detail = (await budget.run('read', () => gateway.getTransaction(saleKey))).value;
      } catch (err) {
        throw new WriteNotSentError(err);
      }
    }
    const fields = fieldsOfDetail(detail);
    await describe(saleKey, fields, 'fill');
    return fields;
  }

  /** After a refund the gateway refused as too large: its view of the sale, folded into the record (one read). */
  async function refreshAfterRefusal(saleKey: string): Promise<void> {
    try {
      const view = await records.view(saleKey);
      if (!view) return;
      const detail = (await budget.run('read', () => gateway.getTransaction(saleKey))).value;
      await deps.fold(saleKey, view, detail);
    } catch (err) {
      logger.warn('could not read the sale after a refused refund', { err });
    }
  }

  /** Waits (bounded) until the sale's record leaves `voiding`/`capturing` and its refunds settle. */
  async function quiet(saleKey: string): Promise<SaleRecord | undefined> {
    const until = Date.now() + deps.voidWaitMs;
    for (;;) {
      const record = await records.get(saleKey);
      if (!record || (record.state !== 'voiding' && record.state !== 'capturing' && record.pendingRefundCents === 0)) return record;
      if (Date.now() >= until) return record;
      await new Promise((resolve) => setTimeout(resolve, pollMs * (0.5 + Math.random())));
    }
  }

  /** Runs a follow-up under a reservation: released only when the call proved nothing was sent. */
  async function reserved<T>(saleKey: string, op: ReservedOp, reservation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (sentness(err) !== 'no') {
        await settle(saleKey, op, reservation, 'unknown');
        throw err;
      }
      // Released before the key is freed: the other way round, a replica that died between the two would leave the
      // reservation held for good (the sale's refunds short, its voids busy) with no key for the reconciler to
      // resolve it from. One Redis cannot take now goes to the write protocol, which frees the key after it.
      const release = () => records.settle(saleKey, op, reservation, 'released');
      try {
        await release();
      } catch (storeErr) {
        logger.error('could not release a follow-up\'s reservation now; its key is freed once it is', { op, err: storeErr });
        throw new WriteNotSentError(err, [{ what: 'settle released', keep: release }]);
      }
      throw err;
    }
  }

  return {
    async capture(saleKey, found, amountCents, reservation) {
      const r = await records.reserve(saleKey, 'capture', reservation, amountCents);
      if (!r.ok) throw refused('not_capturable');
      const amount = fromCents(r.amountCents);
      const [fields, tx] = await reserved(saleKey, 'capture', reservation, async () => {
        const f = await fieldsFor(saleKey, found);
        return [f, (await budget.run('capture', () => gateway.capture({ trankey: saleKey, amount }))).value] as const;
      });
      // The captured authorization is in a batch now: kept with the settlement (one pipelined round trip).
      const after = fieldsAfterCapture(fields, tx);
      const later: LaterPart[] = [];
      await Promise.all([settle(saleKey, 'capture', reservation, 'applied', r.amountCents, undefined, undefined, later), after !== fields ? describe(saleKey, after, 'update') : undefined]);
      return { transaction: tx, amountCents: r.amountCents, fields: after, later };
    },

    async void(saleKey, found, reservation) {
      let record = found.record;
      for (;;) {
        const r = await records.reserve(saleKey, 'void', reservation, undefined);
        if (r.ok) break;
        if (r.reason !== 'busy') throw refused('not_voidable');
        // Another void, capture or refund of this sale is in flight: its end decides. A void that went out
        // answers this one too; anything else and this one tries itself.
        const after = await quiet(saleKey);
        if (after?.state === 'voided') {
          const fields = after.fields ?? (await fieldsFor(saleKey, { record: after }));
          const minimal = { type: 'transaction' as const, key: saleKey, refnum: fields.refnum, is_duplicate: 'N', result_code: 'A' as const, result: 'Approved', authcode: fields.authcode };
          return { transaction: minimal, amountCents: 0, fields, voidedBy: 'another', later: [] };
        }
        if (!after || after.state === 'voiding' || after.state === 'capturing' || after.pendingRefundCents !== 0) {
          throw refused('busy');
        }
        record = after;
      }
      const [fields, tx] = await reserved(saleKey, 'void', reservation, async () => {
        const f = await fieldsFor(saleKey, { ...found, record });
        // cc:void:release: the contract's void also releases the held funds at once.
        return [f, (await budget.run('capture', () => gateway.void({ trankey: saleKey, release: true }))).value] as const;
      });
      const later: LaterPart[] = [];
      await settle(saleKey, 'void', reservation, 'applied', undefined, undefined, undefined, later);
      return { transaction: tx, amountCents: record.state === 'authorized' ? record.authorizedCents : record.capturedCents, fields, voidedBy: 'this', later };
    },

    async refund(saleKey, amountCents, reservation) {
      const r = await records.reserve(saleKey, 'refund', reservation, amountCents);
      if (!r.ok) throw refused(r.reason === 'returned' || r.reason === 'pending' ? r.reason : 'refund_exceeds');
      // All that is left: creditvoid (voids an unsettled sale whole, which is what is left of it; refunds the
      // amount once settled). A part: refund:adjust (unsettled: lowers the authorization; settled: a credit).
      // gateway-facts.md, The payment lifecycle. ignore_duplicate: two equal partial refunds are two refunds;
      // tokengate's own Idempotency-Key already keeps one refund from reaching the gateway twice.
      const whole = r.whole;
      const amount = fromCents(r.amountCents);
      // Tagged (custom_fields, src/writes/reference.ts) where the reference documents it, so the reconciler knows
      // this refund's own transaction in the batch lists if its answer is lost (issue 42): a part is refund:adjust;
      // all of a settled sale a plain `refund` (a credit); all of one not settled creditvoid (it voids; the
      // reference gives creditvoid no custom fields, so one that meets a sale settled meanwhile goes untagged).
      // Whether the sale is settled: its view, else one read before the write (failing, nothing was sent).
      const tag = writeTag(reservation);
      const request = async (): Promise<RefundRequest> => {
        if (!whole) return { trankey: saleKey, command: 'refund:adjust', amount, ignore_duplicate: true, custom_fields: tag };
        let settled = (await records.view(saleKey).catch(() => undefined))?.settled === true;
        if (!settled) {
          try {
            settled = statusOf((await budget.run('read', () => gateway.getTransaction(saleKey))).value) === 'settled';
          } catch (err) {
            throw new WriteNotSentError(err);
          }
        }
        return settled ? { trankey: saleKey, command: 'refund', amount, ignore_duplicate: true, custom_fields: tag } : { trankey: saleKey, command: 'creditvoid', amount, ignore_duplicate: true };
      };
      let tx: Transaction;
      try {
        tx = await reserved(saleKey, 'refund', reservation, async () => {
          const sent = await request();
          return (await budget.run('refund', () => gateway.refund(sent))).value;
        });
      } catch (err) {
        // The gateway says less is left than the record does (money refunded outside tokengate): its view is
        // read and folded in, so the caller's next refund asks for what is really left. This one stays refused:
        // its Idempotency-Key never reaches the gateway twice (guarantee 7).
        const cause = unwrapNotSent(err); // wrapped when its reservation's release waits for Redis (reserved)
        if (cause instanceof GatewayRefusedError && cause.reason === 'refund_exceeds') await refreshAfterRefusal(saleKey);
        throw err;
      }
      const method = whole && tx.key === saleKey ? 'void' : 'refund';
      // A refund with a transaction of its own is credited to this write: the reconciler never names it as
      // another (unknown) refund's (two refunds of one amount). refund:adjust of an unsettled sale has none.
      // Listed on the sale as answered, whatever command carried it (issue 25, item 6).
      const later: LaterPart[] = [];
      await settle(saleKey, 'refund', reservation, 'applied', r.amountCents, tx.key !== saleKey ? tx.key : undefined, { key: tx.key, refnum: tx.refnum, cents: r.amountCents, method }, later);
      if (method === 'void') await keep('refund', 'mark voided', () => records.markVoided(saleKey), later);
      return { transaction: tx, amountCents: r.amountCents, method, later };
    },
  };
}
