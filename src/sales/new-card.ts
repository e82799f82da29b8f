import type { Caller } from '../access';
import type { EventDraft, EventSink } from '../events/types';
import { paymentMethodAdded } from '../events/write-events';
import type { GatewayClient } from '../gateway/client';
import type { PaymentMethod, Transaction } from '../gateway/types';
import type { Logger } from '../observability/logger';
import { findNewMethod, savedCardOf } from '../payment-methods/new-method';
import type { SaleRecords } from '../sale-records';
import type { Budget } from '../tokens/token-service';
import type { WalletStore } from '../wallet/types';
import type { SaleFacts } from './sale-object';

/**
 * A sale with a card the frontend just collected (`payment_key`) that keeps it on the customer
 * (`save_payment_method`): one `cc:sale` or `authonly` with `save_customer_paymethod` (issue 26, item 4). The
 * gateway's answer does not name the stored method (gateway-facts.md, the wallet), so it is learnt with one read
 * of the customer's methods: before the answer when a read slot is free at once (the answer then names
 * `payment_method`), else after it in the background. The customer's view gets the method as soon as it is
 * known; a sale whose outcome is unknown leaves the view distrusted, so the next read asks the gateway.
 */
export interface NewCards {
  /** The stored method, when a read slot is free at once (never waits, never fails the sale). */
  nameNow(caller: Caller, custkey: string, tx: Transaction): Promise<PaymentMethod | undefined>;
  /** Into the customer's view (with the sale's completion). */
  keep(custkey: string, method: PaymentMethod): Promise<unknown>;
  addedEvent(method: PaymentMethod): EventDraft;
  /**
   * After the answer: named with a read that may wait, then kept in the view and on the sale's record, and told of
   * (`payment_method.added`, through the event log, once per method: the same `change` as the answer's would be).
   */
  nameLater(caller: Caller, custkey: string, tx: Transaction, facts: SaleFacts): void;
  /** The view may miss a card the gateway stored: read the gateway when next asked. */
  distrust(custkey: string): void;
}

export interface NewCardsDeps {
  gateway: Pick<GatewayClient, 'listPaymentMethods'>;
  budget: Budget;
  store: Pick<WalletStore, 'putMethod' | 'forget'>;
  records: Pick<SaleRecords, 'describe'>;
  /** The payment event log: a card named after the answer is told of here (the answer could not hand its event over). */
  events?: EventSink;
  /** Called after events were appended (the delivery looks at once). */
  appended?: () => void;
  logger: Logger;
}

export function createNewCards(deps: NewCardsDeps): NewCards {
  const { gateway, budget, store, records, logger } = deps;
  const addedEvent = (method: PaymentMethod): EventDraft => paymentMethodAdded(method.key, method);
  /** A card named after the answer: its event, as the answer would have handed it over (Written.events). */
  const tell = async (method: PaymentMethod): Promise<void> => {
    if (!deps.events) return;
    await deps.events.append([addedEvent(method)]);
    deps.appended?.();
  };

  function name(caller: Caller, custkey: string, saved: ReturnType<typeof savedCardOf>, maxWaitMs?: number): Promise<PaymentMethod | undefined> {
    const opts = { caller: caller.sub, ...(maxWaitMs !== undefined ? { maxWaitMs } : {}) };
    return findNewMethod(gateway, (call) => budget.run('read', call, opts), custkey, saved.last4, saved.expiration);
  }

  const distrust = (custkey: string) => {
    store.forget(custkey).catch((err: unknown) => logger.warn('could not mark a customer\'s view for a new read', { err }));
  };

  return {
    async nameNow(caller, custkey, tx) {
      try {
        return await name(caller, custkey, savedCardOf(tx), 0);
      } catch (err) {
        logger.debug('the stored card is named after the answer', { err });
        return undefined;
      }
    },
    keep: (custkey, method) => store.putMethod(custkey, method.key, method, false),
    addedEvent,
    nameLater(caller, custkey, tx, facts) {
      name(caller, custkey, savedCardOf(tx))
        .then(async (method) => {
          if (!method) throw new Error('the stored card is not among the customer\'s payment methods');
          await Promise.all([store.putMethod(custkey, method.key, method, false), records.describe(tx.key, { ...facts.fields, payment_method: method.key }, 'update'), tell(method)]);
        })
        .catch((err: unknown) => {
          logger.warn('the card a sale stored was not named; the customer\'s view reads the gateway when next asked', { err });
          distrust(custkey);
        });
    },
    distrust,
  };
}
