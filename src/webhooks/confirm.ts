import { Counter, type Registry } from 'prom-client';
import type { GatewayClient } from '../gateway/client';
import { GatewayNotFoundError } from '../gateway/errors';
import type { TransactionDetail } from '../gateway/types';
import type { Logger } from '../observability/logger';
import type { SaleRecords, SaleView } from '../sale-records';
import type { Budget } from '../tokens/token-service';
import type { WebhookStore } from './types';
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
 * Each confirmation is queued in Redis before the webhook is answered (`store`), tried at once in this process,
 * and taken from the queue when done; one left there (a replica killed, a read refused) is taken by any
 * replica's poll and tried again until `deadlineMs` after the webhook, then counted `failed` (the sale's next
 * refresh still converges it).
 */
export interface ConfirmDeps {
  gateway: GatewayClient;
  budget: Budget;
  records: Pick<SaleRecords, 'view' | 'hear'>;
  fold: (saleKey: string, view: SaleView, detail: TransactionDetail) => Promise<void>;
  logger: Logger;
  registry: Registry;
  deadlineMs: number;
  store: Pick<WebhookStore, 'queueConfirm' | 'doneConfirm' | 'takeDueConfirms'>;
  /** How long a queued confirmation waits before another try (ms, default 10 s); how often queues are polled. */
  retryMs?: number;
  pollMs?: number;
  now?: () => number;
}

export interface About {
  saleKey: string;
  refundKey?: string;
  type: string;
}

/** Queues the confirmation (resolved once it is kept) and tries it at once. */
export type Confirm = (about: About) => Promise<void>;

export interface WebhookConfirmation {
  confirm: Confirm;
  start(): void;
  stop(): Promise<void>;
  /** Resolves when the confirmations running in this process are done (tests). */
  idle(): Promise<void>;
}

const CALLER = 'gateway-webhooks';

export function createWebhookConfirmation(deps: ConfirmDeps): WebhookConfirmation {
  const { gateway, budget, records, logger, store } = deps;
  const now = deps.now ?? Date.now;
  const retryMs = deps.retryMs ?? 10_000;
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

  /** One try: true when done (confirmed or undone), false when it must be tried again. */
  async function attempt(about: About): Promise<boolean> {
    const { saleKey, refundKey, type } = about;
    try {
      const held = refundKey ? await confirmRefund(saleKey, refundKey, type === 'transaction.refund.voided') : await confirmSale(saleKey);
      outcomes.inc({ result: held ? 'confirmed' : 'contradicted' });
      if (!held) logger.warn('gateway webhook contradicted by the gateway\'s record: undone', { event_type: type, sale: saleKey, ...(refundKey ? { refund: refundKey } : {}) });
      return true;
    } catch (err) {
      logger.debug('gateway webhook not confirmed yet', { event_type: type, err });
      return false;
    }
  }

  const track = (run: Promise<void>) => {
    running.add(run);
    void run.finally(() => running.delete(run));
  };

  const confirm: Confirm = async (about) => {
    const item = JSON.stringify({ ...about, at: now() });
    await store.queueConfirm(item, now() + retryMs);
    track((async () => {
      if (await attempt(about)) await store.doneConfirm(item);
    })().catch(() => undefined));
  };

  /** Items left in the queue (a replica gone, a read refused): tried again until the deadline. */
  async function poll(): Promise<void> {
    for (const item of await store.takeDueConfirms(now(), 20)) {
      let about: About & { at: number };
      try {
        about = JSON.parse(item) as About & { at: number };
      } catch {
        continue;
      }
      if (now() - about.at > deps.deadlineMs) {
        outcomes.inc({ result: 'failed' });
        logger.warn('gateway webhook not confirmed within the deadline: the sale\'s next refresh will', { event_type: about.type, sale: about.saleKey });
        continue;
      }
      if (!(await attempt(about))) await store.queueConfirm(item, now() + retryMs);
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> | undefined;
  return {
    confirm,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (polling) return;
        polling = poll().catch((err: unknown) => void logger.debug('webhook confirmations not polled now', { err })).finally(() => (polling = undefined));
      }, deps.pollMs ?? 5_000);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await Promise.all([polling, ...running]);
    },
    idle: async () => void (await Promise.all([...running])),
  };
}
