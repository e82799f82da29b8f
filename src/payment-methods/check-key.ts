import type { GatewayClient } from '../gateway/client';
import type { PaymentMethod } from '../gateway/types';
import type { Logger } from '../observability/logger';
import type { CheckUndo } from '../sales/check-on-card';
import type { Budget } from '../tokens/token-service';
import { WriteOutcomeUnknownError } from '../writes/errors';

/**
 * A check form's `payment_key` sent as a card's with `save_customer_paymethod`: to add a card (the verification's
 * `authonly`), or paid with `save_payment_method` and no `authorization` (checkout's `cc:sale` or `authonly`), which
 * the gateway debited as a check (SANDBOX_CARD_SALE_CHECK_KEY `charged`, src/sales/check-on-card.ts) and whose
 * account it saved as a bank method. Adding a card never leaves a debit or a bank account kept without the shopper's
 * authorization (contract, "Bank payments"): the debit is voided while pending (CheckUndo), and the bank method is
 * removed through the wallet's removal steps (tombstone, wait for charges in flight, the gateway's DELETE, evict:
 * guarantee 10, so nothing charges it once the answer is out), then the answer is the refusal's 400; a sale with
 * `save_payment_method` gets the same undo.
 *
 * Which method: the gateway's answer does not name it (gateway-facts.md, the wallet). It is the customer's newest
 * bank method (`pay_type` check) added no earlier than the check itself (both stamped by the gateway's clock,
 * "YYYY-MM-DD hh:mm:ss"): a bank account the customer kept before is never taken for it. None: nothing was saved.
 */
export interface CheckKeyDeps {
  gateway: Pick<GatewayClient, 'getTransaction' | 'listPaymentMethods'>;
  budget: Budget;
  logger: Logger;
  checks: CheckUndo;
  /** The wallet's removal steps for a method tokengate never added (no write of its own, no event). */
  discard: (custkey: string, pmkey: string) => Promise<void>;
  unknownRetryAfterSec: number;
}

/** The check a verification became: its key, whether it shows voided, and its `created` when the caller read it. */
export interface CheckOnCard {
  key: string;
  voided: boolean;
  /** '' or absent: read from the look-up (a webhook's object may carry none). */
  created?: string;
}

/** The newest bank method added at or after `created` ("YYYY-MM-DD hh:mm:ss" sorts as text; equal: the later listed). */
export function savedByCheck(methods: readonly PaymentMethod[], created: string): PaymentMethod | undefined {
  return methods
    .filter((m) => m.pay_type === 'check' && m.added !== '' && m.added >= created)
    .reduce<PaymentMethod | undefined>((best, m) => (!best || m.added >= best.added ? m : best), undefined);
}

/**
 * The one undo of such a key, for every write that may send one (adding a card, a checkout's sale) and for the
 * reconciler finishing either: the check voided and, when the command asked to save the account (`saved`), the bank
 * method it saved removed. Any failure throws WriteOutcomeUnknownError (money moved: the write stays unknown).
 */
export interface CheckKeys {
  undo(custkey: string, check: CheckOnCard, saved: boolean): Promise<void>;
}

export function createCheckKeys(deps: CheckKeyDeps): CheckKeys {
  return {
    async undo(custkey, check, saved) {
      // Throws WriteOutcomeUnknownError itself when the void is not shown done.
      if (!check.voided) await deps.checks.undo(check.key);
      if (saved) await removeSaved(deps, custkey, check);
    },
  };
}

/** Removes the bank method the check saved; any failure leaves the write to the reconciler (unknown). */
async function removeSaved(deps: CheckKeyDeps, custkey: string, check: CheckOnCard): Promise<void> {
  const { gateway, budget } = deps;
  try {
    const created = check.created || (await budget.run('read', () => gateway.getTransaction(check.key))).value.created;
    const list = (await budget.run('read', () => gateway.listPaymentMethods(custkey, { limit: 100, offset: 0 }))).value;
    const saved = savedByCheck(list.data, created);
    if (saved) await deps.discard(custkey, saved.key);
  } catch (err) {
    deps.logger.warn('a bank method saved from a check form\'s key added as a card is not removed yet; the reconciler finishes it', { err, transaction: check.key });
    throw new WriteOutcomeUnknownError(deps.unknownRetryAfterSec);
  }
}
