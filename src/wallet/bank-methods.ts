import type { Caller } from '../access';
import type { PaymentMethod } from '../gateway/types';
import type { WalletStore } from './types';
import type { WalletView } from './wallet-view';

/** A bank account kept on a customer (`pay_type` check, gateway-facts.md "ACH"), as tokengate's wallet knows it. */
export const isBankMethod = (methods: readonly PaymentMethod[], pmkey: string) => methods.some((m) => m.key === pmkey && m.pay_type === 'check');

/**
 * Whether a stored method is a bank account: `kept` from the view in Redis only (no gateway call; false when the
 * view does not hold the customer), `read` through the wallet view (the gateway's list when it is not held).
 */
export function createBankMethods(store: Pick<WalletStore, 'read'>, view: Pick<WalletView, 'withMethod'>) {
  return {
    kept: async (custkey: string, pmkey: string) => isBankMethod((await store.read(custkey)).methods, pmkey),
    read: async (caller: Caller, custkey: string, pmkey: string) => isBankMethod((await view.withMethod(caller, custkey, pmkey)).methods, pmkey),
  };
}
