import { Counter, type Registry } from 'prom-client';
import type { GatewayClient } from '../gateway/client';
import { GatewayNotFoundError } from '../gateway/errors';
import type { TransactionDetail } from '../gateway/types';
import type { Logger } from '../observability/logger';
import type { SaleRecords, SaleView } from '../sale-records';
import type { Budget } from '../tokens/token-service';
import { REFRESH_CLASS } from '../views/freshness';

/**
 * A money webhook about a change tokengate did not make is applied at once (src/webhooks/intake.ts) and then
 * confirmed against the gateway in spare budget (guarantee 12): one read in the `background` class, waiting for a
 * slot at most `deadlineMs` (RECONCILE_DEADLINE_MS).
 *   - a refund's event: a look-up of the refund's own key. Made, but the gateway never made it (or it is not a
 *     credit, or it is voided): undone, with its `refund.voided` event; voided, but the gateway shows it
 *     standing: counted as refunded again, with a `sale.adjusted` event (the money left as it really is);
 *   - a sale's event (void, unvoid, adjustment): a look-up of the sale folded into its record, which sets the
 *     amounts and state the gateway confirms, in both directions (src/sales/sale-lookup.ts, gatewayState).
 * Webhooks about tokengate's own writes never come here (they confirm what the record holds: no read).
 * In process: a restart between the webhook and its read leaves it to the sale's next refresh.
 */
export interface ConfirmDeps {
  gateway: GatewayClient;
  budget: Budget;
  records: Pick<SaleRecords, 'view' | 'hear'>;
  fold: (saleKey: string, view: SaleView, detail: TransactionDetail) => Promise<void>;
  logger: Logger;
  registry: Registry;
  deadlineMs: number;
}

export type Confirm = (about: { saleKey: string; refundKey?: string; type: string }) => void;

const CALLER = 'gateway-webhooks';

export function createWebhookConfirmation(deps: ConfirmDeps): Confirm & { idle(): Promise<void> } {
  const { gateway, budget, records, logger } = deps;
  const outcomes = new Counter({
    name: 'tokengate_gateway_webhook_confirmations_total',
    help: 'Money webhooks about changes tokengate did not make, checked against the gateway: confirmed, contradicted (undone), failed (no read within the deadline)',
    labelNames: ['result'],
    registers: [deps.registry],
  });
  const running = new Set<Promise<void>>();
  const read = async (key: string): Promise<TransactionDetail | undefined> => {
    try {
      return (await budget.run(REFRESH_CLASS, () => gateway.getTransaction(key), { maxWaitMs: deps.deadlineMs, caller: CALLER })).value;
    } catch (err) {
      if (err instanceof GatewayNotFoundError) return undefined;
      throw err;
    }
  };

  /** `voided`: the event said the refund was voided; else that it was made. True when the gateway agrees. */
  async function confirmRefund(saleKey: string, refundKey: string, voided: boolean): Promise<boolean> {
    const refund = await read(refundKey);
    const stands = refund !== undefined && refund.trantype_code === 'C' && refund.status_code !== 'V' && refund.status_code !== 'E';
    if (stands !== voided) return true;
    await records.hear(saleKey, voided ? { kind: 'refund_restored', refundKey } : { kind: 'refund_voided', refundKey });
    return false;
  }

  async function confirmSale(saleKey: string): Promise<boolean> {
    const view = await records.view(saleKey);
    if (!view) return true;
    const detail = await read(saleKey);
    if (!detail) return true;
    await deps.fold(saleKey, view, detail);
    const after = await records.view(saleKey);
    const same = (v: SaleView | undefined) => v && `${v.record.state}|${v.record.capturedCents}|${v.record.refundedCents}`;
    return same(after) === same(view);
  }

  const confirm: Confirm = ({ saleKey, refundKey, type }) => {
    const run = (async () => {
      const held = refundKey ? await confirmRefund(saleKey, refundKey, type === 'transaction.refund.voided') : await confirmSale(saleKey);
      outcomes.inc({ result: held ? 'confirmed' : 'contradicted' });
      if (!held) logger.warn('gateway webhook contradicted by the gateway\'s record: undone', { event_type: type, sale: saleKey, ...(refundKey ? { refund: refundKey } : {}) });
    })()
      .catch((err: unknown) => {
        outcomes.inc({ result: 'failed' });
        logger.warn('gateway webhook not confirmed: the sale\'s next refresh will', { event_type: type, err });
      })
      .finally(() => running.delete(run));
    running.add(run);
  };
  return Object.assign(confirm, { idle: async () => void (await Promise.all([...running])) });
}
