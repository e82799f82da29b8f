import { assertAccess, NotFoundError, type Caller } from '../access';
import type { GatewayClient } from '../gateway/client';
import { GatewayNotFoundError } from '../gateway/errors';
import type { PaymentMethodChanges } from '../gateway/types';
import type { Logger } from '../observability/logger';
import type { Budget } from '../tokens/token-service';
import type { Freshness } from '../views/freshness';
import { sentness } from '../writes';
import { walletWrite } from './customers';
import { methodObjects, type PaymentMethodObject } from './objects';
import type { WalletStore } from './types';
import type { WalletView } from './wallet-view';

/** `PATCH /v1/customers/{c}/payment_methods/{pm}` as parsed: the gateway's four fields, and the default. */
export interface MethodChanges extends PaymentMethodChanges {
  /** true: this method becomes the customer's default (tokengate's: the gateway's PUT cannot move it). */
  default?: true;
}

export interface WalletMethods {
  /** The customer's methods, each with `default` (the list endpoint pages them). */
  list(caller: Caller, custkey: string, options?: { fresh?: boolean }): Promise<{ methods: PaymentMethodObject[]; freshness: Freshness }>;
  /** Renames, renews, re-addresses and/or makes it the default; the view is updated in the same step. */
  update(caller: Caller, custkey: string, pmkey: string, changes: MethodChanges): Promise<PaymentMethodObject>;
}

export interface MethodDeps {
  gateway: Pick<GatewayClient, 'updatePaymentMethod'>;
  budget: Budget;
  store: WalletStore;
  view: WalletView;
  logger: Logger;
}

export function createWalletMethods(deps: MethodDeps): WalletMethods {
  const { gateway, budget, store, view, logger } = deps;
  return {
    async list(caller, custkey, options = {}) {
      assertAccess(caller, custkey);
      const read = await view.read(caller, custkey, options);
      return { methods: methodObjects(read.methods, read.chosenDefault), freshness: read.freshness };
    },

    async update(caller, custkey, pmkey, changes) {
      assertAccess(caller, custkey);
      const read = await view.withMethod(caller, custkey, pmkey);
      const known = read.methods.find((m) => m.key === pmkey);
      if (!known) throw new NotFoundError();
      const { default: makeDefault, ...fields } = changes;
      let method = known;
      if (Object.keys(fields).length > 0) {
        try {
          method = (await walletWrite(() => budget.run('capture', () => gateway.updatePaymentMethod(custkey, pmkey, fields)))).value;
        } catch (err) {
          // Maybe applied (or gone at the gateway): the view reads the gateway's word when next asked.
          if (sentness(err) === 'maybe' || err instanceof GatewayNotFoundError) await store.forget(custkey).catch((e: unknown) => logger.warn('could not distrust a customer view', { err: e }));
          throw err;
        }
      }
      // The write into the view, in the same step as the answer: the next list on any replica shows it.
      if (!(await store.putMethod(custkey, pmkey, method, makeDefault === true))) throw new NotFoundError();
      const methods = read.methods.map((m) => (m.key === pmkey ? method : m));
      return methodObjects(methods, makeDefault ? pmkey : read.chosenDefault).find((m) => m.key === pmkey) as PaymentMethodObject;
    },
  };
}
