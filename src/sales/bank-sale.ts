import type { GatewayClient } from '../gateway/client';
import { GatewayBadRequestError } from '../gateway/errors';
import type { GatewayResult, PaymentMethod, Transaction } from '../gateway/types';
import type { AheadSlot, CallClass } from '../limiter';
import type { Logger } from '../observability/logger';
import type { Budget } from '../tokens/token-service';
import { WriteNotSentError } from '../writes';
import { SaleInputError } from './sale-errors';

/**
 * A bank payment (contract, "Bank payments"; gateway-facts.md, ACH): bank details never reach tokengate, only a
 * check form's single-use `payment_key` or a saved bank method's key. Whether `check:sale` takes the key is not
 * documented, so both readings are served (GATEWAY_CHECK_PAYMENT_KEY, src/sandbox/README.md "ACH"):
 *   accepted  `check:sale` with the key (one call); kept on the customer, the account is then saved from the
 *             approved transaction (`pay_type: transaction`), whose answer names the new method (one more call);
 *   refused   the key first becomes a bank method (`pay_type: check`), then `customer:sale` charges it; a method
 *             the sale does not keep is removed right after (in the background).
 * A saved bank method is charged by `customer:sale` with its key. Every charge goes out through the budget's
 * sales class, the removal guard's last word (`beforeSend`) right before it.
 */
export interface BankSaleInput {
  customer: string;
  paymentKey?: string;
  paymentMethod?: string;
  save: boolean;
  amount: string;
  invoice: string;
  /** `WEB` for a shopper paying on the web; `PPD` for a recurring debit. */
  sec: 'WEB' | 'PPD';
  cls?: CallClass;
}

export interface BankSaleOptions {
  slot?: AheadSlot;
  beforeSend?: () => Promise<void>;
  signal?: AbortSignal;
}

export interface BankCharged {
  transaction: Transaction;
  /** The bank method the sale kept on the customer, when its key is known by the answer. */
  stored?: PaymentMethod;
}

export interface BankSales {
  charge(input: BankSaleInput, options?: BankSaleOptions): Promise<BankCharged>;
}

export function createBankSales(deps: { gateway: GatewayClient; budget: Budget; logger: Logger; checkPaymentKey: 'accepted' | 'refused' }): BankSales {
  const { gateway, budget, logger } = deps;

  return {
    async charge(input, options = {}) {
      const { signal } = options;
      const cls = input.cls ?? 'sale';
      let slot = options.slot;
      // The first call of the sale takes the reserved slot; any other waits its turn in the same class.
      const run = async <T>(call: () => Promise<GatewayResult<T>>, guarded: boolean): Promise<T> => {
        const ahead = slot;
        slot = undefined;
        const result = await budget.run(cls, async () => {
          if (guarded) await options.beforeSend?.();
          return call();
        }, { signal, ...(ahead ? { ahead } : {}) });
        return result.value;
      };
      const base = { amount: input.amount, invoice: input.invoice, custkey: input.customer, sec: input.sec };

      if (input.paymentMethod !== undefined) {
        const transaction = await run(() => gateway.checkSale({ ...base, paymethod_key: input.paymentMethod as string }, { signal }), true);
        return { transaction };
      }
      const paymentKey = input.paymentKey ?? '';
      if (deps.checkPaymentKey === 'refused') {
        const method = await run(() => gateway.addPaymentMethod(input.customer, { pay_type: 'check', payment_key: paymentKey }, { signal }), false).catch((err: unknown) => {
          // The wallet refused the key (unknown, used, expired): no method was made and nothing charged, so the key
          // is free again and the answer is the payment key's 400, as under `accepted` (not a 502).
          if (err instanceof GatewayBadRequestError) throw new WriteNotSentError(new SaleInputError('body.payment_key', 'refused_by_gateway'));
          throw err;
        });
        const transaction = await run(() => gateway.checkSale({ ...base, paymethod_key: method.key }, { signal }), true);
        if (input.save && transaction.result_code === 'A') return { transaction, stored: method };
        // Not kept: the method existed only to be charged (the gateway took the key no other way).
        budget.run('background', () => gateway.deletePaymentMethod(input.customer, method.key)).catch((err: unknown) => {
          logger.warn('a bank method saved only to be charged was not removed', { err, customer: input.customer, payment_method: method.key });
        });
        return { transaction };
      }
      const transaction = await run(() => gateway.checkSale({ ...base, payment_key: paymentKey }, { signal }), true);
      if (!input.save || transaction.result_code !== 'A') return { transaction };
      try {
        const stored = await run(() => gateway.addPaymentMethod(input.customer, { pay_type: 'transaction', transaction_key: transaction.key }, { signal }), false);
        return { transaction, stored };
      } catch (err) {
        // The payment stands; the account was not kept (the answer names no payment_method).
        logger.warn('a bank payment was approved but its account was not kept', { err, customer: input.customer });
        return { transaction };
      }
    },
  };
}
