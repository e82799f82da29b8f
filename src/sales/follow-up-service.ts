import type { GatewayClient } from '../gateway/client';
import { GatewayNotFoundError, GatewayRefusedError } from '../gateway/errors';
import type { RefundRequest, Transaction, TransactionDetail } from '../gateway/types';
import { StoreUnavailableError } from '../idempotency/errors';
import type { Logger } from '../observability/logger';
import type { SaleFields, SaleRecord, SaleRecords, Settlement } from '../sale-records';
import type { Budget } from '../tokens/token-service';
import { WriteNotSentError, sentness } from '../writes/not-sent';
import { fromCents } from '../gateway/money';
import { fieldsAfterCapture } from './sale-object';
import { capturedCents, fieldsOfDetail, isSale, recordFromDetail, refundedCents, statusOf } from './sale-view';

/** Why a follow-up was refused before anything was sent (decided from the sale's record). */
export type SaleRefusal = 'not_capturable' | 'not_voidable' | 'refund_exceeds';

export class SaleRefusedError extends Error {
  constructor(readonly reason: SaleRefusal) {
    super(`sale refused: ${reason}`);
    this.name = 'SaleRefusedError';
  }
}

/** What a sale lookup found: the record (ownership, bounds) and, when it asked the gateway, its answer. */
export interface FoundSale {
  record: SaleRecord;
  detail?: TransactionDetail;
}

export interface FollowUpResult {
  transaction: Transaction;
  /** The amount moved, cents (the capture's or the refund's). */
  amountCents: number;
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
  /**
   * The sale tokengate knows as `saleKey`: its record, or one seeded from the gateway when there is none (a
   * sale made before records existed, or expired). Undefined when the gateway does not know it as a sale.
   */
  find(saleKey: string): Promise<FoundSale | undefined>;
  /**
   * The gateway's current view (`GET /transactions/{key}`, a read; none when find() just fetched it). A record
   * kept without the sale's fields gets them from it.
   */
  lookup(saleKey: string, found: FoundSale): Promise<TransactionDetail>;
  /** `reservation`: the write's stable reference (Attempt.reference), so the reconciler can settle it. */
  capture(saleKey: string, found: FoundSale, amountCents: number | undefined, reservation: string): Promise<SaleFollowUpResult>;
  void(saleKey: string, found: FoundSale): Promise<SaleFollowUpResult>;
  refund(saleKey: string, amountCents: number | undefined, reservation: string): Promise<RefundResult>;
}

/** Refused before sending: the Idempotency-Key is freed, as nothing moved. */
const refused = (reason: SaleRefusal) => new WriteNotSentError(new SaleRefusedError(reason));

export function createFollowUpService(deps: { gateway: GatewayClient; budget: Budget; records: SaleRecords; logger: Logger }): FollowUpService {
  const { gateway, budget, records, logger } = deps;

  /** Settles a reservation from how the call ended; a failure to settle is logged (the reservation stays held). */
  async function settle(saleKey: string, op: 'capture' | 'refund', reservation: string, how: Settlement, appliedCents?: number, refundKey?: string): Promise<void> {
    try {
      await records.settle(saleKey, op, reservation, how, appliedCents, refundKey);
    } catch (err) {
      logger.error('could not settle a sale reservation; it stays held', { op, how, err });
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

  /**
   * Folds into the record what the gateway's view shows was done outside tokengate (a refund or a void made in
   * the merchant console): less money left than the record says means refunded elsewhere. Only toward less
   * money; the store leaves the record alone while anything is in flight or moved since it was read. A failure
   * is logged: the record stays as it was, which refusals at the gateway keep safe.
   */
  async function observe(saleKey: string, record: SaleRecord, detail: TransactionDetail): Promise<void> {
    if (record.state !== 'captured' && record.state !== 'authorized') return;
    const voided = statusOf(detail) === 'voided';
    const leftHere = record.capturedCents - record.refundedCents;
    const leftThere = capturedCents(detail) - refundedCents(detail);
    const refunded = !voided && record.state === 'captured' && leftThere < leftHere ? record.refundedCents + (leftHere - leftThere) : record.refundedCents;
    if (!voided && refunded === record.refundedCents) return;
    try {
      if (await records.observe(saleKey, record.refundedCents, { refundedCents: refunded, voided })) logger.info('sale record follows the gateway', { voided, refundedCents: refunded });
    } catch (err) {
      logger.warn('could not fold the gateway\'s view into a sale record', { err });
    }
  }

  /** After a refund the gateway refused as too large: its view of the sale, folded into the record (one read). */
  async function refreshAfterRefusal(saleKey: string): Promise<void> {
    try {
      const record = await records.get(saleKey);
      if (!record) return;
      const detail = (await budget.run('read', () => gateway.getTransaction(saleKey))).value;
      await observe(saleKey, record, detail);
    } catch (err) {
      logger.warn('could not read the sale after a refused refund', { err });
    }
  }

  /** Runs a follow-up under a reservation: released only when the call proved nothing was sent. */
  async function reserved<T>(saleKey: string, op: 'capture' | 'refund', reservation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      await settle(saleKey, op, reservation, sentness(err) === 'no' ? 'released' : 'unknown');
      throw err;
    }
  }

  return {
    async find(saleKey) {
      let reachable = true;
      try {
        const record = await records.get(saleKey);
        if (record) return { record };
      } catch (err) {
        // Redis down: a read still works from the gateway's own record (guarantee 5); writes fail at reserve.
        if (!(err instanceof StoreUnavailableError)) throw err;
        reachable = false;
      }
      let detail: TransactionDetail;
      try {
        detail = (await budget.run('read', () => gateway.getTransaction(saleKey))).value;
      } catch (err) {
        if (err instanceof GatewayNotFoundError) return undefined;
        throw err;
      }
      if (!isSale(detail)) return undefined;
      if (!reachable) return { record: recordFromDetail(detail), detail };
      // Created only if still absent: a concurrent seed or sale record (with reservations) wins.
      await records.create(saleKey, recordFromDetail(detail));
      return { record: (await records.get(saleKey)) ?? recordFromDetail(detail), detail };
    },

    async lookup(saleKey, found) {
      if (found.detail) return found.detail;
      const detail = (await budget.run('read', () => gateway.getTransaction(saleKey))).value;
      await Promise.all([found.record.fields ? undefined : describe(saleKey, fieldsOfDetail(detail), 'fill'), observe(saleKey, found.record, detail)]);
      return detail;
    },

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
      await Promise.all([settle(saleKey, 'capture', reservation, 'applied', r.amountCents), after !== fields ? describe(saleKey, after, 'update') : undefined]);
      return { transaction: tx, amountCents: r.amountCents, fields: after };
    },

    async void(saleKey, found) {
      const { record } = found;
      if (record.state === 'voided' || record.state === 'declined') throw refused('not_voidable');
      const fields = await fieldsFor(saleKey, found);
      // cc:void:release: the contract's void also releases the held funds at once.
      const tx = (await budget.run('capture', () => gateway.void({ trankey: saleKey, release: true }))).value;
      await records.markVoided(saleKey).catch((err: unknown) => logger.error('could not record a void', { err }));
      return { transaction: tx, amountCents: record.state === 'authorized' ? record.authorizedCents : record.capturedCents, fields };
    },

    async refund(saleKey, amountCents, reservation) {
      const r = await records.reserve(saleKey, 'refund', reservation, amountCents);
      if (!r.ok) throw refused('refund_exceeds');
      // All that is left: creditvoid (voids an unsettled sale whole, which is what is left of it; refunds the
      // amount once settled). A part: refund:adjust (unsettled: lowers the authorization; settled: a credit).
      // gateway-facts.md, The payment lifecycle. ignore_duplicate: two equal partial refunds are two refunds;
      // tokengate's own Idempotency-Key already keeps one refund from reaching the gateway twice.
      const whole = r.whole;
      const amount = fromCents(r.amountCents);
      const request: RefundRequest = { trankey: saleKey, command: whole ? 'creditvoid' : 'refund:adjust', amount, ignore_duplicate: true };
      let tx: Transaction;
      try {
        tx = await reserved(saleKey, 'refund', reservation, async () => (await budget.run('refund', () => gateway.refund(request))).value);
      } catch (err) {
        // The gateway says less is left than the record does (money refunded outside tokengate): its view is
        // read and folded in, so the caller's next refund asks for what is really left. This one stays refused:
        // its Idempotency-Key never reaches the gateway twice (guarantee 7).
        if (err instanceof GatewayRefusedError && err.reason === 'refund_exceeds') await refreshAfterRefusal(saleKey);
        throw err;
      }
      const method = whole && tx.key === saleKey ? 'void' : 'refund';
      // A refund with a transaction of its own is credited to this write: the reconciler never names it as
      // another (unknown) refund's (two refunds of one amount). refund:adjust of an unsettled sale has none.
      await settle(saleKey, 'refund', reservation, 'applied', r.amountCents, tx.key !== saleKey ? tx.key : undefined);
      if (method === 'void') await records.markVoided(saleKey).catch((err: unknown) => logger.error('could not record a void', { err }));
      return { transaction: tx, amountCents: r.amountCents, method };
    },
  };
}
