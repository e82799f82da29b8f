import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { NotFoundError } from '../access';
import type { Logger } from '../observability/logger';
import { WriteNotSentError } from '../writes/not-sent';
import type { WalletStore } from './types';

/**
 * The sale's side of the removal guard (guarantee 10: from the moment a DELETE of a payment method or of its
 * customer answers, no replica sends a charge with it). A sale attempt:
 *   enter       in the same tick as its idempotency claim (auto-pipelined, no round trip of its own): refused
 *               when the method or the customer is removed (404, nothing sent, key freed), else recorded as
 *               `sending` with a lease of `leaseMs`;
 *   waiting     when it cannot send at once (its token must first be loaded): a removal need not wait for it;
 *   beforeSend  right before the gateway call, inside the budget's call: nothing to do while this attempt is
 *               `sending` and its lease has at least `sendMarginMs` left on this process's monotonic clock (the
 *               lease began on Redis' clock after the enter was issued, so it ends later still); otherwise one
 *               atomic re-check (removed → abort, not sent; else `sending` again with a fresh lease);
 *   leave       with its completion (the same pipelined tick) or when it failed.
 * A removal tombstones first, then waits for the attempts `sending` on it (or their leases), and only then deletes
 * at the gateway and answers: any attempt either sent before the removal answered, or meets the tombstone.
 * `sendMarginMs` covers what may still pass between the check and the request leaving (a new connection's
 * connect timeout), so no timing of the gateway or of Redis is assumed.
 */
export interface GuardedAttempt {
  /** True once entered; false when removed (settled in the claim's round trip). */
  readonly entered: Promise<boolean>;
  waiting(): void;
  /** Throws WriteNotSentError(NotFoundError) when the method or the customer was removed. */
  beforeSend(): Promise<void>;
  /** Never throws; a lost leave only lets a removal wait out the lease. */
  leave(): Promise<void>;
}

export interface SaleGuard {
  /** `pmkey` '' for a card not stored yet (a Pay.js payment key): only the customer's removal applies. */
  enter(custkey: string, pmkey: string): GuardedAttempt;
}

export interface SaleGuardSettings {
  /** How long a `sending` attempt holds a removal (from its enter or re-check). */
  leaseMs: number;
  /** Left of the lease at least, when the gateway call starts without a re-check. */
  sendMarginMs: number;
}

export function createSaleGuard(store: WalletStore, settings: SaleGuardSettings, logger: Logger): SaleGuard {
  const { leaseMs, sendMarginMs } = settings;
  return {
    enter(custkey, pmkey) {
      const attempt = randomUUID();
      let since = performance.now();
      let sending = true;
      let left = false;
      const entered = store.enter(custkey, pmkey, attempt, 'sending', leaseMs);
      // Awaited by the write's run; a claim that fails first never awaits it.
      entered.catch(() => undefined);
      return {
        entered,
        waiting() {
          sending = false;
          store.enter(custkey, pmkey, attempt, 'waiting', leaseMs).catch((err: unknown) => logger.debug('could not mark a sale waiting', { err }));
        },
        async beforeSend() {
          while (!sending || performance.now() - since > leaseMs - sendMarginMs) {
            since = performance.now();
            if (!(await store.enter(custkey, pmkey, attempt, 'sending', leaseMs))) throw new WriteNotSentError(new NotFoundError());
            sending = true;
          }
        },
        async leave() {
          if (left) return;
          left = true;
          await store.leave(custkey, attempt).catch((err: unknown) => logger.debug('could not leave the removal guard', { err }));
        },
      };
    },
  };
}
