import { assertAccess, NotFoundError, type Caller } from '../access';
import type { GatewayClient } from '../gateway/client';
import { GatewayNotFoundError } from '../gateway/errors';
import type { WriteOp } from '../events';
import type { StoredResponse, WriteContext } from '../idempotency';
import type { Logger } from '../observability/logger';
import type { Budget, TokenService } from '../tokens/token-service';
import { WriteNotSentError, type WriteProtocol, type WriteResult } from '../writes';
import { RemovalPendingError } from './errors';
import { customerObject, methodObjects } from './objects';
import type { WalletStore } from './types';
import type { WalletRead, WalletView } from './wallet-view';

/**
 * Removing a payment method or a customer (issue 26, guarantee 10), through the one write protocol. The order of
 * the steps, so that a crash between any two of them keeps the guarantee:
 *   0. begin     the write is claimed and tracked in the reconciler's due set (src/writes): a replica that
 *                dies from here on leaves an entry that falls due when its lease ends;
 *   1. tombstone one atomic step: the method's tombstone (the customer's `deleted`), its view entry gone, and
 *                the sale attempts `sending` on it. From here every charge, token and list refuses it;
 *   2. wait      until those attempts have left or their leases ended (polled every `pollMs`): each of them
 *                either sent before this removal answers, or re-checks and meets the tombstone;
 *   3. gateway   DELETE at the gateway (already gone, 40453 / 99999, is done);
 *   4. evict     the cached token(s), and complete the write: 204.
 * Crash after 0: the reconciler sees the attempt's lease end and runs 1-4 (`finish`). After 1 or 2: the same, and
 * meanwhile the tombstone refuses every charge. After 3: 1-4 again, 3 answering "already gone". A failure after
 * step 1 (the budget, Redis, a gateway call of unknown outcome) leaves the write to the reconciler the same way.
 */
export interface RemovalRequest {
  caller: Caller;
  custkey: string;
  /** The caller's Idempotency-Key, or one derived from the path (a DELETE is idempotent by its path). */
  idempotencyKey: string;
  fingerprint: string;
}

export interface WalletRemovals {
  /** `DELETE /v1/customers/{c}/payment_methods/{pm}`: `render` answers the 204. */
  removeMethod(request: RemovalRequest & { pmkey: string }, render: () => StoredResponse, log?: Logger): Promise<WriteResult>;
  /** `DELETE /v1/customers/{c}`: the customer and all its methods. */
  removeCustomer(request: RemovalRequest, render: () => StoredResponse, log?: Logger): Promise<WriteResult>;
  /** The reconciler's end of a removal left unfinished (`payment_method_remove`, `customer_delete`): steps 1-4. */
  finish(context: WriteContext): Promise<void>;
  /**
   * Steps 1-4 for a method the gateway saved that tokengate never added nor answered (a check form's key sent to
   * add a card: src/payment-methods/check-key.ts): inside its caller's write, with no event (none told of it).
   * Idempotent; RemovalPendingError when it could not finish (the tombstone holds meanwhile).
   */
  discard(custkey: string, pmkey: string): Promise<void>;
}

export interface RemovalSettings {
  /** The write's lease: the wait for attempts in flight, the gateway's DELETE and its wait for a slot. */
  leaseMs: number;
  /** How long a tombstone is kept at least (longer than any cached token lives). */
  tombstoneTtlMs: number;
  /** The removal guard's attempt lease: the longest step 2 can wait. */
  guardLeaseMs: number;
  pollMs?: number;
}

export interface RemovalDeps {
  gateway: Pick<GatewayClient, 'deletePaymentMethod' | 'deleteCustomer'>;
  budget: Budget;
  store: WalletStore;
  view: WalletView;
  tokens: Pick<TokenService, 'evict'>;
  writes: WriteProtocol;
  logger: Logger;
  settings: RemovalSettings;
  /**
   * What else ends with the customer (its subscriptions: src/subscriptions cancels them), after the gateway's
   * delete; it must be idempotent: a removal left unfinished runs it again from the reconciler.
   */
  onCustomerRemoved?: (custkey: string) => Promise<void>;
}

export function createWalletRemovals(deps: RemovalDeps): WalletRemovals {
  const { gateway, budget, store, view, tokens, writes, settings } = deps;
  const pollMs = settings.pollMs ?? 25;

  /** Step 2: until the attempts sending on it have left or their leases ended (Redis' clock decides). */
  async function waitFor(custkey: string, attempts: readonly string[]): Promise<void> {
    const until = Date.now() + settings.guardLeaseMs + 5_000;
    while (attempts.length > 0 && (await store.stillSending(custkey, attempts)) > 0) {
      if (Date.now() > until) throw new Error('sale attempts outlived their leases');
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  /** Step 3: a DELETE at the gateway; already gone is done. */
  async function deleteAtGateway(call: () => ReturnType<GatewayClient['deleteCustomer']>): Promise<void> {
    try {
      await budget.run('capture', call);
    } catch (err) {
      if (!(err instanceof GatewayNotFoundError)) throw err;
    }
  }

  async function methodSteps(custkey: string, pmkey: string): Promise<void> {
    const sending = await store.tombstone(custkey, pmkey, settings.tombstoneTtlMs);
    try {
      await waitFor(custkey, sending);
      await deleteAtGateway(() => gateway.deletePaymentMethod(custkey, pmkey));
      await tokens.evict(custkey, pmkey);
    } catch (err) {
      throw new RemovalPendingError(err);
    }
  }

  async function customerSteps(custkey: string): Promise<void> {
    const sending = await store.tombstone(custkey, '', settings.tombstoneTtlMs);
    try {
      await waitFor(custkey, sending);
      await deleteAtGateway(() => gateway.deleteCustomer(custkey));
      const removed = await store.removedOf(custkey);
      await Promise.all(removed.pmkeys.map((pmkey) => tokens.evict(custkey, pmkey)));
      // Its customerid may be used for a new sign-up.
      const customerid = removed.customer?.customerid;
      if (customerid) await store.releaseCustomerId(customerid, { custkey });
      await deps.onCustomerRemoved?.(custkey);
    } catch (err) {
      throw new RemovalPendingError(err);
    }
  }

  /** The customer as it stands before the removal; nothing is written yet, so any failure here sent nothing. */
  async function before(caller: Caller, custkey: string, pmkey?: string): Promise<WalletRead> {
    try {
      return await (pmkey === undefined ? view.read(caller, custkey) : view.withMethod(caller, custkey, pmkey));
    } catch (err) {
      throw new WriteNotSentError(err);
    }
  }

  const spec = (request: RemovalRequest, context: WriteContext & { op: WriteOp }) => ({
    scope: request.caller.sub, key: request.idempotencyKey, fingerprint: request.fingerprint, context, leaseMs: settings.leaseMs,
  });

  return {
    async removeMethod(request, render, log) {
      const { caller, custkey, pmkey } = request;
      assertAccess(caller, custkey);
      return writes.execute(spec(request, { op: 'payment_method_remove', customer: custkey, payment_method: pmkey }), async () => {
        // Known to be the customer's (the view, read from the gateway on a miss): unknown or removed is a 404.
        const read = await before(caller, custkey, pmkey);
        const removed = methodObjects(read.methods, read.chosenDefault).find((m) => m.key === pmkey);
        if (!removed) throw new WriteNotSentError(new NotFoundError());
        await methodSteps(custkey, pmkey);
        return { response: render(), events: [{ type: 'payment_method.removed', change: `payment_method.removed:${pmkey}`, data: removed }] };
      }, log);
    },

    async removeCustomer(request, render, log) {
      const { caller, custkey } = request;
      assertAccess(caller, custkey);
      return writes.execute(spec(request, { op: 'customer_delete', customer: custkey }), async () => {
        const read = await before(caller, custkey);
        await customerSteps(custkey);
        const data = customerObject(read.customer, read.methods, read.chosenDefault);
        return { response: render(), events: [{ type: 'customer.deleted', change: `customer.deleted:${custkey}`, data }] };
      }, log);
    },

    discard: methodSteps,

    async finish(context) {
      if (context.op === 'payment_method_remove' && context.payment_method) return methodSteps(context.customer, context.payment_method);
      if (context.op === 'customer_delete') return customerSteps(context.customer);
      throw new Error(`not a removal: ${context.op}`);
    },
  };
}
