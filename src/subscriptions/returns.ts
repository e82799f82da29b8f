import type { EventSink } from '../events/types';
import type { Logger } from '../observability/logger';
import type { Clock } from './clock';
import { createCommit } from './commit';
import { ACH_FAILED_CODE } from './declines';
import { applyLinkedReturn, type RetryPolicy } from './lifecycle';
import type { SubscriptionStore } from './types';

/**
 * A bank payment's return (ach.returned, src/webhooks/ach-events.ts) reaching the subscription it paid a period
 * of (issue 38): through the sale's link (SubscriptionStore.linkSale), applied once (applyLinkedReturn), whatever how
 * often the webhook comes. Answers whether the sale was a subscription's. A debit that failed after it was accepted
 * (ach.failed) takes the same path: a return under ACH_FAILED_CODE (hard: the facts give a failure no code).
 */
export interface BankReturns {
  returned(sale: string, code: string | undefined): Promise<boolean>;
  failed(sale: string): Promise<boolean>;
}

export function createBankReturns(deps: { store: SubscriptionStore; clock: Clock; events?: EventSink; appended?: () => void; logger: Logger; policy: RetryPolicy }): BankReturns {
  const commit = createCommit(deps);
  async function returned(sale: string, code: string | undefined): Promise<boolean> {
    const link = await deps.store.saleLink(sale);
    if (!link) return false;
    const now = await deps.clock.now();
    await commit(link.key, (r) => applyLinkedReturn(r, { ...link, sale, code }, now, deps.policy));
    return true;
  }
  return { returned, failed: (sale) => returned(sale, ACH_FAILED_CODE) };
}
