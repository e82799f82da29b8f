import { Counter, type Registry } from 'prom-client';
import { containsPan } from '../card/pan';
import type { Secret } from '../config/secret';
import { toCents } from '../gateway/money';
import { parseTransactionDetail } from '../gateway/parse';
import type { TransactionDetail } from '../gateway/types';
import type { Logger } from '../observability/logger';
import type { Heard, SaleRecords } from '../sale-records';
import { APPLIED_TYPES, parseGatewayEvent, type GatewayEvent } from './envelope';
import { signatureHolds } from './signature';
import type { WebhookStore } from './types';

/**
 * The gateway's webhooks in (contract, "Gateway webhooks (in)"; issue 27, item 1). In this order:
 *   1. the raw body's X-Signature, in constant time, before anything is parsed (else: refused, nothing read,
 *      nothing logged of the body);
 *   2. no card number in the body (the gateway's objects carry masked ones; anything else is never stored);
 *   3. the event read; one already applied (its `event_id` marked in Redis for 5 days) is acknowledged again;
 *   4. applied by what it means to the sale it names (src/sale-records, lua/hear.lua): captured, voided, refunded,
 *      settled through its batch. Arrival order never matters: a voided sale stays voided, a capture applies only
 *      to an open authorization, a refund is counted once by its key. What now holds is reported by the records
 *      and becomes a payment event (the same `change` as tokengate's own write about that money: one event);
 *   5. marked applied. A replica killed between 4 and 5 leaves the event unmarked: the gateway delivers it again,
 *      and applying it again changes nothing and appends nothing new (the log's dedupe).
 * A sale's event is also kept by its invoice, so a sale of tokengate's whose answer was lost is resolved from it by
 * the reconciler with no gateway read (src/reconcile/find.ts). No gateway call is made here.
 */
export type IntakeResult =
  | { kind: 'refused' }
  | { kind: 'invalid' }
  | { kind: 'card_data' }
  | { kind: 'received'; outcome: 'applied' | 'unmatched' | 'duplicate' | 'ignored' };

export interface GatewayWebhookIntake {
  receive(raw: Buffer, signature: string | undefined, log?: Logger): Promise<IntakeResult>;
}

export interface IntakeDeps {
  secret: Secret;
  records: Pick<SaleRecords, 'hear' | 'settleBatch'>;
  store: WebhookStore;
  logger: Logger;
  registry: Registry;
  /**
   * Told of each batch the gateway says closed (`settlement.batch.success`), after its sales are settled: the
   * settlement is read behind the answer (src/settlements), never holding the webhook up.
   */
  onBatchClosed?: (batch: string) => void;
}

const KNOWN: ReadonlySet<string> = new Set(APPLIED_TYPES);

export function createGatewayWebhookIntake(deps: IntakeDeps): GatewayWebhookIntake {
  const { records, store } = deps;
  const received = new Counter({
    name: 'tokengate_gateway_webhooks_total',
    help: 'Gateway webhooks received, by event type (other: any type not applied) and result (applied, unmatched: about nothing tokengate knows, duplicate, ignored, refused: bad signature, invalid)',
    labelNames: ['event_type', 'result'],
    registers: [deps.registry],
  });
  const count = (type: string, result: string) => received.inc({ event_type: KNOWN.has(type) ? type : 'other', result });

  /** The sale a transaction event is about, and what the event means for it. */
  async function applyTransaction(event: GatewayEvent, tx: TransactionDetail): Promise<'applied' | 'unmatched' | 'ignored'> {
    let saleKey = tx.key;
    let heard: Heard;
    switch (event.type) {
      case 'transaction.sale.success':
      case 'transaction.sale.failure': {
        const declined = event.type === 'transaction.sale.failure' || tx.result_code === 'D' || tx.result_code === 'V';
        if (!declined && tx.result_code !== 'A' && tx.result_code !== 'P') return 'ignored';
        // Kept first: the sale may be tokengate's own, in flight now, its answer about to be lost.
        if (tx.invoice) await store.keepSale(tx.invoice, event.object);
        heard = { kind: 'sale', type: declined ? 'sale.declined' : tx.trantype_code === 'A' ? 'sale.authorized' : 'sale.succeeded' };
        break;
      }
      case 'transaction.sale.voided':
        heard = { kind: 'voided' };
        break;
      case 'transaction.sale.captured':
        heard = { kind: 'captured', capturedCents: toCents(tx.auth_amount ?? tx.amount), ...(tx.batch ? { batch: tx.batch } : {}) };
        break;
      case 'transaction.sale.adjusted':
        if (tx.auth_amount === undefined) return 'ignored';
        heard = { kind: 'adjusted', leftCents: toCents(tx.auth_amount) };
        break;
      case 'transaction.refund.success':
        if (!tx.original) return 'ignored';
        saleKey = tx.original.key;
        heard = { kind: 'refunded', refund: { key: tx.key, refnum: tx.refnum, cents: toCents(tx.amount), created: tx.created, statusCode: tx.status_code } };
        break;
      default:
        return 'ignored';
    }
    return (await records.hear(saleKey, heard)) ? 'applied' : 'unmatched';
  }

  async function apply(event: GatewayEvent): Promise<'applied' | 'unmatched' | 'ignored' | 'invalid'> {
    if (!KNOWN.has(event.type)) return 'ignored';
    if (event.type === 'settlement.batch.success') {
      const batch = event.object.key;
      if (typeof batch !== 'string' || batch === '') return 'invalid';
      const held = await records.settleBatch(batch);
      deps.onBatchClosed?.(batch);
      return held > 0 ? 'applied' : 'unmatched';
    }
    let tx: TransactionDetail;
    try {
      // A subset of the lookup: `created` may be left out (only its meaning-bearing codes are required).
      tx = parseTransactionDetail({ created: '', ...event.object });
    } catch {
      return 'invalid';
    }
    return applyTransaction(event, tx);
  }

  return {
    async receive(raw, signature, log = deps.logger) {
      if (!signatureHolds(raw, signature, deps.secret)) {
        count('other', 'refused');
        log.warn('gateway webhook refused: bad signature');
        return { kind: 'refused' };
      }
      const text = raw.toString('utf8');
      if (containsPan(text)) {
        count('other', 'invalid');
        log.warn('gateway webhook refused: card data in the body');
        return { kind: 'card_data' };
      }
      const event = parseGatewayEvent(text);
      if (!event) {
        count('other', 'invalid');
        return { kind: 'invalid' };
      }
      if (await store.applied(event.id)) {
        count(event.type, 'duplicate');
        return { kind: 'received', outcome: 'duplicate' };
      }
      const outcome = await apply(event);
      if (outcome === 'invalid') {
        count(event.type, 'invalid');
        return { kind: 'invalid' };
      }
      await store.markApplied(event.id);
      count(event.type, outcome);
      log.info('gateway webhook received', { event_type: KNOWN.has(event.type) ? event.type : 'other', event_id: event.id, outcome });
      return { kind: 'received', outcome };
    },
  };
}
