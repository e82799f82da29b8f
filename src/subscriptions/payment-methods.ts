import { NotFoundError, type Caller } from '../access';
import type { CallClass } from '../limiter';
import { isBankMethod } from '../wallet/bank-methods';
import { defaultMethodOf } from '../wallet/objects';
import type { WalletStore } from '../wallet/types';
import type { WalletView } from '../wallet/wallet-view';

/** Which of the customer's methods (a card or a bank account) a subscription charges, from tokengate's view of the wallet (no gateway call when it holds it). */
export interface PaymentMethods {
  /**
   * `pmkey` when it is the customer's method now, else the customer's default when none is named; NotFoundError
   * for a card or customer the view does not hold (or that was removed: guarantee 10), or a customer with no card.
   * A gateway read the view needs is charged in `cls` (default `read`): a renewal's in its own class.
   */
  resolve(caller: Caller, custkey: string, pmkey: string | undefined, cls?: CallClass): Promise<Resolved>;
  /** The card updater flagged the card's account closed (src/webhooks/card-updates.ts): charging it wastes a call. */
  isClosed(custkey: string, pmkey: string): Promise<boolean>;
}

/** The method a charge goes to, and whether it is a bank account (charged with the subscription's consent as its authorization). */
export interface Resolved {
  key: string;
  bank: boolean;
}

export function createPaymentMethods(view: Pick<WalletView, 'read' | 'withMethod'>, flags?: Pick<WalletStore, 'isClosed'>): PaymentMethods {
  return {
    isClosed: (custkey, pmkey) => (flags ? flags.isClosed(custkey, pmkey) : Promise.resolve(false)),
    async resolve(caller, custkey, pmkey, cls) {
      const options = cls ? { cls } : {};
      if (pmkey !== undefined) {
        const read = await view.withMethod(caller, custkey, pmkey, options);
        if (!read.methods.some((m) => m.key === pmkey)) throw new NotFoundError();
        return { key: pmkey, bank: isBankMethod(read.methods, pmkey) };
      }
      const read = await view.read(caller, custkey, options);
      const def = defaultMethodOf(read.methods, read.chosenDefault);
      if (def === undefined) throw new NotFoundError();
      return { key: def, bank: isBankMethod(read.methods, def) };
    },
  };
}
