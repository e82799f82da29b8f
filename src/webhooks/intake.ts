import { Counter, type Registry } from 'prom-client';
import { containsPan, redactPansDeep } from '../card/pan';
import type { Secret } from '../config/secret';
import type { Logger } from '../observability/logger';
import type { Heard, HearResult, SaleRecords } from '../sale-records';
import { ACH_EVENT_TYPES, type AchEvents } from './ach-events';
import type { CardUpdates } from './card-updates';
import { APPLIED_TYPES, IGNORED_TYPES, parseGatewayEvent, readTransaction, type EventTransaction, type GatewayEvent } from './envelope';
import { signatureHolds } from './signature';
import type { WebhookStore } from './types';

/**
 * The gateway's webhooks in (contract, "Gateway webhooks (in)"; issues 27 and 36). In this order:
 *   1. the raw body's X-Signature, in constant time, before anything is parsed (else: refused, nothing read,
 *      nothing logged of the body);
 *   2. any card number in the body redacted before the event is read, kept or logged (the gateway's objects
 *      carry masked ones). Never refused for it: the event is signed by the gateway, and its identifiers may be
 *      card-shaped by chance (a bank credit's 12-digit `check.trackingcode` in the sandbox, 1 in 60); refusing it
 *      lost the money it told of once the gateway gave up retrying;
 *   3. the event read: its type is its meaning, and of its object only `key` is required (the reference's own
 *      examples, test/fixtures/gateway-webhooks/); one for another merchant (`merch_key` not
 *      GATEWAY_MERCHANT_KEY) is acknowledged, counted `foreign` and changes nothing; one already applied (its
 *      `event_id` marked in Redis for 5 days) is acknowledged again;
 *   4. applied by what it means to the sale it is about (src/sale-records, lua/hear.lua): captured, voided,
 *      unvoided, adjusted, refunded, a refund voided, settled through its batch. A refund's event names no sale:
 *      its sale is found in tokengate's own records of that refund key, else it is counted `unlinked` and
 *      logged, never guessed. Arrival order never matters. What now holds becomes a payment event (the same
 *      `change` as tokengate's own write about that money: one event);
 *   5. a change tokengate did not make (the console, another integration) is handed to `confirm`, which checks
 *      it against the gateway in spare budget and undoes what the gateway contradicts (src/webhooks/confirm.ts);
 *      an event about tokengate's own write only confirms it and costs no read;
 *   6. marked applied. A replica killed between 4 and 6 leaves the event unmarked: the gateway delivers it again,
 *      and applying it again changes nothing and appends nothing new (the log's dedupe).
 * A sale's event is also kept by its invoice, so a sale of tokengate's whose answer was lost is resolved from it by
 * the reconciler with no gateway read (src/reconcile/find.ts). No gateway call is made here.
 */
export type IntakeResult =
  | { kind: 'refused' }
  | { kind: 'invalid' }
  | { kind: 'received'; outcome: Outcome | 'duplicate' };

/** applied; kept: a bank payment's step about a sale not recorded yet (applied when it is); unmatched: about nothing tokengate knows; unlinked: a refund tokengate cannot tie to a sale; foreign: another merchant's; ignored: on purpose. */
type Outcome = 'applied' | 'kept' | 'unmatched' | 'unlinked' | 'foreign' | 'ignored';

export interface GatewayWebhookIntake {
  receive(raw: Buffer, signature: string | undefined, log?: Logger): Promise<IntakeResult>;
}

export interface IntakeDeps {
  secret: Secret;
  records: Pick<SaleRecords, 'hear' | 'settleBatch' | 'saleOfRefund'>;
  store: WebhookStore;
  /** GATEWAY_MERCHANT_KEY: events for any other merchant change nothing. Unset: every signed event applies. */
  merchantKey?: string;
  /** A change tokengate did not make, to be confirmed against the gateway in spare budget (resolves once queued). */
  confirm?: (about: { saleKey: string; refundKey?: string; type: string }) => Promise<void>;
  logger: Logger;
  registry: Registry;
  /** The card updater's events (card-updates.ts); without it they are ignored. */
  cardUpdates?: CardUpdates;
  /** Bank payments' `ach.*` events (ach-events.ts); without it they are ignored. */
  achEvents?: AchEvents;
  /**
   * Told of each batch the gateway says closed (`settlement.batch.success`), after its sales are settled: awaited
   * while the batch is recorded due (in Redis: any replica reads it if this one dies once the webhook is
   * answered); the settlement is read behind the answer (src/settlements), never holding the webhook up.
   */
  onBatchClosed?: (batch: string) => void | Promise<void>;
  /**
   * Told of each batch the gateway says did not close (`settlement.batch.failure`): no money moved, its sales stay
   * unsettled as tokengate shows them, and no settlement is read; src/settlements counts and logs it.
   */
  onBatchFailed?: (batch: string, reason: string) => void;
}

const KNOWN: ReadonlySet<string> = new Set(APPLIED_TYPES);
/** Types with their own label in the webhook metric: the applied ones and the bank payments' (bounded lists). */
const LABELLED: ReadonlySet<string> = new Set([...APPLIED_TYPES, ...ACH_EVENT_TYPES]);

export function createGatewayWebhookIntake(deps: IntakeDeps): GatewayWebhookIntake {
  const { records, store } = deps;
  const received = new Counter({
    name: 'tokengate_gateway_webhooks_total',
    help: 'Gateway webhooks received, by event type (other: any type not applied or ignored on purpose) and result (applied, kept: a bank payment\'s step about a sale not recorded yet, unmatched: about nothing tokengate knows, unlinked: a refund tied to no sale tokengate knows, foreign: another merchant\'s, duplicate, ignored, refused: bad signature, invalid)',
    labelNames: ['event_type', 'result'],
    registers: [deps.registry],
  });
  const count = (type: string, result: string) => received.inc({ event_type: LABELLED.has(type) || type in IGNORED_TYPES ? type : 'other', result });

  /** A transaction event's sale and what the event means for it; `own`: a change tokengate itself made. */
  async function meaning(event: GatewayEvent, tx: EventTransaction): Promise<{ saleKey: string; heard: Heard; refundKey?: string } | Outcome> {
    switch (event.type) {
      case 'transaction.sale.success':
      case 'transaction.sale.failure': {
        const declined = event.type === 'transaction.sale.failure' || tx.resultCode === 'D' || tx.resultCode === 'V';
        if (!declined && tx.resultCode !== undefined && tx.resultCode !== 'A' && tx.resultCode !== 'P') return 'ignored';
        // Kept first: the sale may be tokengate's own, in flight now, its answer about to be lost.
        if (tx.invoice) await store.keepSale(tx.invoice, forReconciler(event, tx));
        return { saleKey: tx.key, heard: { kind: 'sale', type: declined ? 'sale.declined' : authOnly(tx) ? 'sale.authorized' : 'sale.succeeded' } };
      }
      case 'transaction.sale.voided':
        return { saleKey: tx.key, heard: { kind: 'voided' } };
      case 'transaction.sale.unvoided':
        return { saleKey: tx.key, heard: { kind: 'unvoided' } };
      case 'transaction.sale.captured': {
        const captured = tx.authCents ?? tx.amountCents;
        if (captured === undefined) return 'ignored';
        return { saleKey: tx.key, heard: { kind: 'captured', capturedCents: captured, ...(tx.batch ? { batch: { type: 'batch', key: tx.batch.key, batchrefnum: tx.batch.batchrefnum, sequence: tx.batch.sequence ?? '' } } : {}) } };
      }
      case 'transaction.sale.adjusted': {
        const now = tx.authCents ?? tx.amountCents;
        return now === undefined ? 'ignored' : { saleKey: tx.key, heard: { kind: 'adjusted', leftCents: now } };
      }
      case 'transaction.refund.success':
      case 'transaction.refund.voided': {
        const saleKey = tx.original ?? (await records.saleOfRefund(tx.key));
        if (!saleKey) return 'unlinked';
        if (event.type === 'transaction.refund.voided') return { saleKey, refundKey: tx.key, heard: { kind: 'refund_voided', refundKey: tx.key } };
        const refunded = tx.authCents ?? tx.amountCents ?? tx.originalCents;
        if (refunded === undefined) return 'ignored';
        const refund = { key: tx.key, refnum: tx.refnum ?? '', cents: refunded, created: event.triggered ?? '', statusCode: 'P' };
        return { saleKey, refundKey: tx.key, heard: { kind: 'refunded', refund } };
      }
      default:
        return 'ignored';
    }
  }

  async function apply(event: GatewayEvent, log: Logger): Promise<Outcome | 'invalid'> {
    if (deps.cardUpdates?.handles(event.type)) return deps.cardUpdates.apply(event);
    if (deps.achEvents?.handles(event.type)) return deps.achEvents.apply(event);
    if (!KNOWN.has(event.type)) return 'ignored';
    if (event.type === 'settlement.batch.failure') {
      const batch = event.object.key;
      if (typeof batch !== 'string' || batch === '') return 'invalid';
      deps.onBatchFailed?.(batch, typeof event.object.reason === 'string' ? event.object.reason : '');
      return 'applied';
    }
    if (event.type === 'settlement.batch.success') {
      const batch = event.object.key;
      if (typeof batch !== 'string' || batch === '') return 'invalid';
      const held = await records.settleBatch(batch);
      await deps.onBatchClosed?.(batch);
      return held > 0 ? 'applied' : 'unmatched';
    }
    const tx = readTransaction(event.object);
    if (!tx) return 'invalid';
    const meant = await meaning(event, tx);
    if (typeof meant === 'string') {
      if (meant === 'unlinked') log.warn('gateway webhook: a refund tokengate did not make and cannot tie to a sale', { event_type: event.type, event_id: event.id, refund: tx.key });
      return meant;
    }
    const result: HearResult = await records.hear(meant.saleKey, meant.heard);
    if (result === 'absent') return 'unmatched';
    if (result === 'unknown_refund') return 'unlinked';
    // Applied over what the record held: a change made outside tokengate, so the gateway is asked (spare budget).
    if (result === 'applied' && meant.heard.kind !== 'sale' && meant.heard.kind !== 'captured') {
      await deps.confirm?.({ saleKey: meant.saleKey, type: event.type, ...(meant.refundKey ? { refundKey: meant.refundKey } : {}) });
    }
    return 'applied';
  }

  return {
    async receive(raw, signature, log = deps.logger) {
      if (!signatureHolds(raw, signature, deps.secret)) {
        count('other', 'refused');
        log.warn('gateway webhook refused: bad signature');
        return { kind: 'refused' };
      }
      const text = raw.toString('utf8');
      const carded = containsPan(text);
      const parsed = parseGatewayEvent(text);
      if (!parsed) {
        count('other', 'invalid');
        return { kind: 'invalid' };
      }
      const event = carded ? (redactPansDeep(parsed, '[redacted]') as GatewayEvent) : parsed;
      if (carded) log.warn('gateway webhook: a card-shaped number in the body, redacted before use', { event_type: KNOWN.has(event.type) ? event.type : 'other', event_id: event.id });
      if (deps.merchantKey !== undefined && event.merchant !== deps.merchantKey) {
        count(event.type, 'foreign');
        log.warn('gateway webhook for another merchant: acknowledged, nothing changed', { event_type: KNOWN.has(event.type) ? event.type : 'other', event_id: event.id });
        return { kind: 'received', outcome: 'foreign' };
      }
      if (await store.applied(event.id)) {
        count(event.type, 'duplicate');
        return { kind: 'received', outcome: 'duplicate' };
      }
      const outcome = await apply(event, log);
      if (outcome === 'invalid') {
        count(event.type, 'invalid');
        return { kind: 'invalid' };
      }
      await store.markApplied(event.id);
      count(event.type, outcome);
      // The transaction (or batch) it was about: a gateway key, no card data; what an operator greps for.
      const about = typeof event.object.key === 'string' ? event.object.key : undefined;
      log.info('gateway webhook received', { event_type: KNOWN.has(event.type) ? event.type : 'other', event_id: event.id, outcome, ...(about ? { about } : {}) });
      return { kind: 'received', outcome };
    },
  };
}

/** An authorization's event: its text says so, or (no text) it is in no batch yet (a sale joins one at once). */
function authOnly(tx: EventTransaction): boolean {
  return tx.trantype !== undefined ? /auth only/i.test(tx.trantype) : tx.batch === undefined;
}

/**
 * The sale's object as the reconciler reads a transaction (src/reconcile/find.ts parses it as a look-up): what
 * the event lacks and a look-up has is filled from its meaning (a type from `authOnly`, pending settlement).
 */
function forReconciler(event: GatewayEvent, tx: EventTransaction): Record<string, unknown> {
  return {
    ...event.object,
    refnum: tx.refnum ?? '',
    created: event.triggered ?? '',
    trantype_code: authOnly(tx) ? 'A' : 'S',
    status_code: 'P',
  };
}
