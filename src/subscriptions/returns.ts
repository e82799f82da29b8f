import type { EventSink } from '../events/types';
import type { Logger } from '../observability/logger';
import type { Clock } from './clock';
import { createCommit } from './commit';
import { applyLinkedReturn, type RetryPolicy } from './lifecycle';
import type { SubscriptionStore } from './types';

/**
 * A bank payment's return (ach.returned, src/webhooks/ach-events.ts) reaching the subscription it paid a period
 * of (issue 38): through the sale's link (SubscriptionStore.linkSale), applied once (applyLinkedReturn), whatever how
 * often the webhook comes. Answers whether the sale was a subscription's.
 */
export interface BankReturns {
  returned(sale: string, code: string | undefined): Promise<boolean>;
}

export function createBankReturns(deps: { store: SubscriptionStore; clock: Clock; events?: EventSink; appended?: () => void; logger: Logger; policy: RetryPolicy }): BankReturns {
  const commit = createCommit(deps);
  return {
    async returned(sale, code) {
      const link = await deps.store.saleLink(sale);
      if (!link) return false;
      const now = await deps.clock.now();
      await commit(link.key, (r) => applyLinkedReturn(r, { ...link, sale, code }, now, deps.policy));
      return true;
    },
  };
}
