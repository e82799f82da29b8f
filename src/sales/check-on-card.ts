import type { GatewayClient } from '../gateway/client';
import { GatewayRefusedError } from '../gateway/errors';
import type { Logger } from '../observability/logger';
import type { Budget } from '../tokens/token-service';
import { WriteOutcomeUnknownError } from '../writes/errors';
import { statusOf } from './sale-view';

/**
 * A check form's `payment_key` sent as a card's (`cc:sale` or `authonly` with a payment key and no `authorization`).
 * Whether the gateway refuses it there or debits the account as a check is undocumented (gateway-facts.md, ACH: "Whether
 * `check:sale` takes that `payment_key` is not shown"; SANDBOX_CARD_SALE_CHECK_KEY, src/sandbox/README.md "ACH"). A
 * debit with no authorization recorded breaks the NACHA rules (contract, "Bank payments"), so when the gateway charged
 * one it is voided at once, while it is still pending (a check voids only then, facts), and the caller is answered the
 * 400 naming `body.authorization` that a refusal gets.
 *
 * Recognised from the answer: a card sale's answer carries the masked `creditcard` (the capture, cc-sale.json) and
 * a `trantype` such as "Credit Card Sale"; a check's has no card and a check's `trantype`. An approved answer with no
 * card is taken for a check: voiding a card sale that lacked it costs the shopper nothing, leaving a check standing
 * would. The reconciler reads the same from the look-up (`trantype`, `creditcard`) when the answer was lost.
 */
export function chargedAsCheck(tx: { result_code?: string; trantype?: string; creditcard?: unknown }): boolean {
  // A look-up may carry no result_code (the reconciler's reading); an answer always does.
  if (tx.result_code !== undefined && tx.result_code !== 'A' && tx.result_code !== 'P') return false;
  return /check/i.test(tx.trantype ?? '') || tx.creditcard === undefined;
}

export interface CheckUndo {
  /**
   * Voids the check `key` (through the budget, as a follow-up); resolves once the gateway shows it voided. Anything
   * else (the void's answer lost, the budget, the check already submitted) throws WriteOutcomeUnknownError: the money
   * moved, so the write's key is never freed, and the reconciler, finding the check by the write's invoice, undoes it.
   */
  undo(key: string): Promise<void>;
}

export function createCheckUndo(deps: { gateway: GatewayClient; budget: Budget; logger: Logger; unknownRetryAfterSec: number }): CheckUndo {
  const { gateway, budget, logger } = deps;
  return {
    async undo(key) {
      try {
        try {
          await budget.run('capture', () => gateway.void({ trankey: key, release: true }));
          return;
        } catch (err) {
          // Refused: voided already (the goal), or submitted meanwhile (error 82): the look-up says which.
          if (!(err instanceof GatewayRefusedError)) throw err;
        }
        const detail = (await budget.run('read', () => gateway.getTransaction(key))).value;
        if (statusOf(detail) === 'voided') return;
        throw new Error(`the check is ${detail.status_code}, no longer voidable: a refund by hand must give it back`);
      } catch (err) {
        logger.error('a check debited on a card sale (no authorization) is not voided yet; the reconciler tries again', { err, transaction: key });
        throw new WriteOutcomeUnknownError(deps.unknownRetryAfterSec);
      }
    },
  };
}
