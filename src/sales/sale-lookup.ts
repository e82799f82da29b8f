import { assertAccess, NotFoundError, type Caller } from '../access';
import type { GatewayClient } from '../gateway/client';
import { GatewayNotFoundError } from '../gateway/errors';
import { toCents } from '../gateway/money';
import type { TransactionDetail } from '../gateway/types';
import { StoreUnavailableError } from '../redis/errors';
import type { Logger } from '../observability/logger';
import type { GatewaySaleState, SaleRecord, SaleRecords, SaleView } from '../sale-records';
import type { Budget } from '../tokens/token-service';
import { factsOfDetail, factsOfView, type SaleFacts } from './sale-object';
import { createBackgroundRefresh } from '../views/background-refresh';
import { freshnessOf, REFRESH_CLASS, type Freshness } from '../views/freshness';
import { fieldsOfDetail, isSale, recordFromDetail, refundedCents, statusOf } from './sale-view';


/** What a sale lookup found: the record (ownership, bounds) and, when it asked the gateway, its answer. */
export interface FoundSale {
  record: SaleRecord;
  detail?: TransactionDetail;
}

export interface SaleLookupSettings {
  /** How long a sale's view answers as fresh after it last matched the gateway (VIEW_SALE_FRESH_MS). */
  freshMs: number;
  /** How long "the gateway does not know this key" is remembered (VIEW_UNKNOWN_KEY_TTL_MS). */
  unknownKeyTtlMs: number;
  /** How long one replica holds a sale's background refresh before another may try. */
  refreshLockMs?: number;
}

export interface SaleLookupDeps {
  gateway: GatewayClient;
  budget: Budget;
  records: SaleRecords;
  logger: Logger;
  settings: SaleLookupSettings;
  /**
   * Whether a customer was removed through tokengate (the wallet's guard): a token bound to it reaches none of
   * its sales any more (contract: no look-up for that customer succeeds). Internal services still do.
   */
  customerRemoved?: (custkey: string) => Promise<boolean>;
  now?: () => number;
}

export interface SaleLookup {
  /**
   * The sale `saleKey` if the caller may act on it; NotFoundError (404, no hint) otherwise. A caller bound to a
   * customer sees only sales in tokengate's records (its own writes, its reconciler's, earlier internal reads):
   * an unknown key and another customer's sale then cost the same one Redis read (guarantee 11). An internal
   * service's unknown key is asked of the gateway once, then remembered as unknown for a while.
   */
  locate(caller: Caller, saleKey: string): Promise<FoundSale>;
  /** `GET /v1/sales/{key}`: the sale as tokengate knows it, and how fresh that is (guarantee 9). */
  read(caller: Caller, saleKey: string, options?: { fresh?: boolean }): Promise<{ facts: SaleFacts; freshness: Freshness }>;
  /** Folds a gateway read of the sale into its record (over the version `view` was read at). */
  fold(saleKey: string, view: SaleView, detail: TransactionDetail): Promise<void>;
}

/**
 * What a gateway read confirms of a sale, beside what tokengate's record knows (`view`). Guarantee 12: the
 * gateway's word wins in both directions where its read says it. An unsettled sale's `auth_amount` is what it has
 * left (a refund:adjust lowers it, an adjustment changes it; a look-up without one says nothing of it); a settled sale's refunds are transactions of their
 * own, which its look-up lists only on some gateways (`refundsListed`): without that list the record's refunded
 * stands (tokengate's own refunds, the webhooks it could link), never a guess from the look-up.
 */
export function gatewayState(view: SaleView, detail: TransactionDetail): GatewaySaleState {
  const { record } = view;
  const status = statusOf(detail);
  let { refundedCents: refunded, capturedCents: captured } = record;
  const standing = status === 'pending_settlement' || status === 'settled';
  // Without auth_amount (not on every look-up: SANDBOX_LOOKUP_AUTH_AMOUNT=omitted) the read says nothing of what is
  // left: its `amount` is what was asked. The record's amounts stand, as for a settled sale without a refunds list.
  if (record.state === 'captured' && standing && detail.auth_amount !== undefined && (status !== 'settled' || detail.refundsListed)) {
    const left = toCents(detail.auth_amount) - (detail.refundsListed ? refundedCents(detail) : 0);
    if (left > captured) captured = left;
    refunded = Math.max(0, captured - left);
  }
  return {
    refundedCents: refunded,
    capturedCents: captured,
    voided: status === 'voided',
    ...(record.state === 'voided' && standing ? { restoreTo: 'captured' as const } : record.state === 'voided' && status === 'authorized' ? { restoreTo: 'authorized' as const } : {}),
    settled: status === 'settled',
    gatewayRefunds: detail.refunds.map((r) => ({ key: r.key, refnum: r.refnum, cents: toCents(r.amount), created: r.created, statusCode: r.status_code })),
  };
}

export function createSaleLookup(deps: SaleLookupDeps): SaleLookup {
  const { gateway, budget, records, logger, settings } = deps;
  const now = deps.now ?? Date.now;
  const refresher = createBackgroundRefresh(logger, 'sale');
  // Issued in the same tick as the record's read (no round trip of its own); only bound callers are asked.
  const boundGone = (caller: Caller): Promise<boolean> =>
    caller.custkey !== undefined && deps.customerRemoved ? deps.customerRemoved(caller.custkey) : Promise.resolve(false);

  /** The gateway's record of `saleKey` as a sale, or NotFoundError (remembered, when Redis can keep it). */
  async function askGateway(caller: Caller, saleKey: string, remember: boolean, cls: 'read' | typeof REFRESH_CLASS = 'read'): Promise<TransactionDetail> {
    let detail: TransactionDetail | undefined;
    try {
      detail = (await budget.run(cls, () => gateway.getTransaction(saleKey), { caller: caller.sub })).value;
    } catch (err) {
      if (!(err instanceof GatewayNotFoundError)) throw err;
    }
    if (detail && isSale(detail)) return detail;
    if (remember) await records.rememberUnknown(saleKey, settings.unknownKeyTtlMs).catch((err: unknown) => logger.warn('could not remember an unknown sale key', { err }));
    throw new NotFoundError();
  }

  /** Keeps a sale the gateway knows and tokengate did not (made before records, or expired): its view from now on. */
  async function seed(saleKey: string, detail: TransactionDetail): Promise<SaleView | undefined> {
    await records.create(saleKey, recordFromDetail(detail));
    const view = await records.view(saleKey);
    if (view) await fold(saleKey, view, detail);
    return (await records.view(saleKey)) ?? view;
  }

  async function fold(saleKey: string, view: SaleView, detail: TransactionDetail): Promise<void> {
    try {
      await Promise.all([
        records.refresh(saleKey, view.version, gatewayState(view, detail)),
        // A record made from a webhook's subset lacks what only a read says (authcode, avs, cvc): filled now.
        records.describe(saleKey, fieldsOfDetail(detail), view.record.fields ? 'complete' : 'fill'),
      ]);
    } catch (err) {
      logger.warn('could not fold the gateway\'s view into a sale record', { err });
    }
  }

  /** A stale view refreshed in spare budget, once at a time across replicas; failures only delay it. */
  function refreshLater(caller: Caller, saleKey: string, view: SaleView): void {
    refresher.start(saleKey, async () => {
      if (!(await records.claimRefresh(saleKey, settings.refreshLockMs ?? 30_000))) return;
      let detail: TransactionDetail;
      try {
        detail = (await budget.run(REFRESH_CLASS, () => gateway.getTransaction(saleKey), { maxWaitMs: 0, caller: caller.sub })).value;
      } catch (err) {
        // The read failed (no spare budget, the gateway down): the claim goes at once, so the next read past the
        // bound tries again instead of the view staying stale for the claim's 30 s (issue 36, item 6).
        await records.releaseRefresh(saleKey).catch(() => undefined);
        throw err;
      }
      await fold(saleKey, view, detail);
      await checkRefunds(saleKey, view, detail, REFRESH_CLASS, caller.sub);
    });
  }

  /**
   * A settled sale's refunds are transactions of their own, and its look-up may not list them (gateway-facts.md,
   * Looking transactions up): each refund the view lists as standing is looked up by its own key (one read each,
   * in the same class as the sale's), and one the gateway shows voided is given back (`refund.voided`). With the
   * list, nothing more is read: its statuses came with the sale.
   */
  async function checkRefunds(saleKey: string, view: SaleView, detail: TransactionDetail, cls: 'read' | typeof REFRESH_CLASS, sub: string): Promise<void> {
    if (detail.refundsListed || statusOf(detail) !== 'settled') return;
    const standing = view.refunds.filter((r) => !r.voided && r.method === 'refund' && r.key !== saleKey);
    for (const refund of standing) {
      try {
        const there = (await budget.run(cls, () => gateway.getTransaction(refund.key), { caller: sub, ...(cls === REFRESH_CLASS ? { maxWaitMs: 0 } : {}) })).value;
        if (there.status_code === 'V') await records.hear(saleKey, { kind: 'refund_voided', refundKey: refund.key });
      } catch (err) {
        logger.debug('a refund of a sale was not checked now', { err });
      }
    }
  }

  return {
    async locate(caller, saleKey) {
      let record: SaleRecord | undefined;
      let unknown = false;
      let reachable = true;
      try {
        // One round trip (issued in the same tick): the unknown-key memory is only read for internal services,
        // but asked every time, so a bound caller's answer costs the same whatever the key names.
        let gone: boolean;
        [record, unknown, gone] = await Promise.all([records.get(saleKey), records.knownUnknown(saleKey), boundGone(caller)]);
        if (gone) throw new NotFoundError();
      } catch (err) {
        // Redis down: a read still works from the gateway's own record (guarantee 5); writes fail at reserve.
        if (!(err instanceof StoreUnavailableError)) throw err;
        reachable = false;
      }
      if (record) {
        assertAccess(caller, record.customer);
        return { record };
      }
      if (reachable && (!caller.anyCustomer || unknown)) throw new NotFoundError();
      const detail = await askGateway(caller, saleKey, reachable);
      if (!reachable) {
        const seeded = recordFromDetail(detail);
        assertAccess(caller, seeded.customer);
        return { record: seeded, detail };
      }
      const view = await seed(saleKey, detail);
      const kept = view?.record ?? recordFromDetail(detail);
      assertAccess(caller, kept.customer);
      return { record: kept, detail };
    },

    async read(caller, saleKey, options = {}) {
      let view: SaleView | undefined;
      let unknown: boolean;
      try {
        let gone: boolean;
        [view, unknown, gone] = await Promise.all([records.view(saleKey), records.knownUnknown(saleKey), boundGone(caller)]);
        if (gone) throw new NotFoundError();
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        const found = await this.locate(caller, saleKey);
        const detail = found.detail ?? (await askGateway(caller, saleKey, false));
        return { facts: factsOfDetail(detail, { customer: found.record.customer }), freshness: { kind: 'bypass' } };
      }
      let freshness: Freshness | undefined;
      if (!view) {
        if (!caller.anyCustomer || unknown) throw new NotFoundError();
        const detail = await askGateway(caller, saleKey, true);
        assertAccess(caller, detail.custkey ?? '');
        view = await seed(saleKey, detail);
        if (!view) return { facts: factsOfDetail(detail), freshness: { kind: 'bypass' } };
        freshness = { kind: 'miss' };
      }
      assertAccess(caller, view.record.customer);
      if (!freshness && (options.fresh || !view.record.fields)) {
        // The gateway's word, asked for (or a record kept before its fields were): one read in the caller's share.
        const detail = await askGateway(caller, saleKey, false);
        await fold(saleKey, view, detail);
        await checkRefunds(saleKey, view, detail, 'read', caller.sub);
        view = (await records.view(saleKey)) ?? view;
        freshness = { kind: options.fresh ? 'forced' : 'miss' };
      }
      if (!freshness) {
        freshness = freshnessOf(view.seenMs, settings.freshMs, now());
        if (freshness.kind === 'stale') refreshLater(caller, saleKey, view);
      }
      return { facts: factsOfView(saleKey, view), freshness };
    },

    fold,
  };
}
