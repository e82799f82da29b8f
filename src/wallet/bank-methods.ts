import type { Caller } from '../access';
import type { PaymentMethod } from '../gateway/types';
import type { WalletStore } from './types';
import type { WalletView } from './wallet-view';

/** A bank account kept on a customer (`pay_type` check, gateway-facts.md "ACH"), as tokengate's wallet knows it. */
export const isBankMethod = (methods: readonly PaymentMethod[], pmkey: string) => methods.some((m) => m.key === pmkey && m.pay_type === 'check');

/**
 * Whether a stored method is a bank account: `kept` from the view in Redis only (no gateway call; false when the
 * view does not hold the customer), `read` through the wallet view: the gateway's list only when the view does
 * not hold the customer (then kept, so the next ask is answered from it). A method the view holds no word of is
 * not looked for again at the gateway (withMethod would): `read` runs on a sale's 404, and a client looping on a
 * wrong payment_method must not spend a gateway read per try. A bank method added at the gateway after the view
 * was loaded answers 404 until the view is refreshed (VIEW_WALLET_FRESH_MS), not 400.
 */
export function createBankMethods(store: Pick<WalletStore, 'read'>, view: Pick<WalletView, 'read'>) {
  return {
    kept: async (custkey: string, pmkey: string) => isBankMethod((await store.read(custkey)).methods, pmkey),
    read: async (caller: Caller, custkey: string, pmkey: string) => isBankMethod((await view.read(caller, custkey)).methods, pmkey),
  };
}
