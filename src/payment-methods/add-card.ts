import type { GatewayClient } from '../gateway/client';
import { GatewayRefusedError } from '../gateway/errors';
import type { PaymentMethod, ResultCode, Transaction } from '../gateway/types';
import { findNewMethod, savedCardOf } from './new-method';
import type { CheckKeys } from './check-key';
import type { Logger } from '../observability/logger';
import { chargedAsCheck } from '../sales/check-on-card';
import type { Budget } from '../tokens/token-service';
import { WriteOutcomeUnknownError } from '../writes/errors';

/**
 * Adding a card collected by Pay.js (contract: `POST /v1/customers/{custkey}/payment_methods`, guarantee 8).
 * The card is verified by an `authonly` of a small amount carrying the single-use `payment_key`, with
 * `save_customer_paymethod` (the gateway stores it on the customer) and `save_card` (the answer names the
 * stored card, masked); an approved verification is voided at once with `cc:void:release`, so the customer
 * never sees the hold. The gateway does not say which payment method it created: it is the customer's newest
 * method with the saved card's last four digits and expiration (`GET /customers/{c}/payment_methods`).
 *
 * Every step after the authorization may fail (timeout, 5xx, the budget): the write's outcome is then unknown
 * and the reconciler finishes it from the gateway's records (`complete`): it finds the authorization by its
 * invoice, voids it if it is still open, and answers with the payment method. The void always follows.
 * A check form's key the gateway debited as a check: voided, the bank method it saved removed, 400 (check-key.ts).
 */
export interface AddCardInput {
  custkey: string;
  paymentKey: string;
  cardholder?: string;
  methodName?: string;
  avsStreet?: string;
  avsPostalcode?: string;
}

/** What adding a card came to: the HTTP edge renders it (201, 402, 400). */
export type AddCardResult =
  | { kind: 'added'; method: PaymentMethod; verification: Verification }
  | { kind: 'declined'; verification: Verification }
  /** The gateway refused the payment key (unknown, expired, used) or the request: result_code E. */
  | { kind: 'refused'; verification: Verification }
  /**
   * The key was a check form's: the gateway debited the account as a check (voided now) and may have saved it as a
   * bank method (removed now). Answered as a refused key (400), but money moved: the Idempotency-Key keeps it.
   */
  | { kind: 'check_key'; verification: Verification };

/** The verification's transaction, as shown to the caller (no card data: the number is masked). */
export interface Verification {
  key: string;
  refnum: string;
  result_code: ResultCode;
  result: string;
  auth_amount?: string;
  error?: string;
  error_code?: string;
  voided: boolean;
}

/** An authorization the reconciler found for this write, and what it knows of it. */
export interface FoundVerification {
  key: string;
  refnum: string;
  result_code: ResultCode;
  result: string;
  auth_amount?: string;
  /** Already voided at the gateway. */
  voided: boolean;
  /** Last four digits of the card, from the masked number. */
  last4: string | undefined;
  /** A check sale the verification became (src/sales/check-on-card.ts), with its `created` ('' when not known). */
  check?: { created: string };
}

export interface CardService {
  /** What a frontend needs to run Pay.js: the merchant's public key and the script's URL. */
  paymentConfig(): Promise<{ public_key: string; pay_js_url: string }>;
  add(input: AddCardInput, invoice: string): Promise<AddCardResult>;
  /** The reconciler's end of an unknown outcome: void if still open, then the payment method. */
  complete(custkey: string, found: FoundVerification): Promise<AddCardResult>;
}

export interface CardServiceDeps {
  gateway: GatewayClient;
  budget: Budget;
  logger: Logger;
  verifyAmount: string;
  payJsUrl: string;
  /** Retry-After of the outcome_unknown answered when a step after the authorization fails. */
  unknownRetryAfterSec: number;
  /** How long the public key is kept in memory (it changes only when the merchant rotates it). */
  publicKeyTtlMs?: number;
  /** A check form's key debited as a check: its void, and the wallet's removal of the bank method it saved. */
  checkKeys: CheckKeys;
}

function verificationOf(tx: Pick<Transaction, 'key' | 'refnum' | 'result_code' | 'result' | 'auth_amount' | 'error' | 'error_code'>, voided: boolean): Verification {
  return {
    key: tx.key, refnum: tx.refnum, result_code: tx.result_code, result: tx.result, voided,
    ...(tx.auth_amount !== undefined ? { auth_amount: tx.auth_amount } : {}),
    ...(tx.error !== undefined ? { error: tx.error } : {}),
    ...(tx.error_code !== undefined ? { error_code: tx.error_code } : {}),
  };
}

export function createCardService(deps: CardServiceDeps): CardService {
  const { gateway, budget, logger } = deps;
  let publicKey: { value: string; until: number } | undefined;

  /** Voids the verification; a refusal means it is no longer open (voided or lapsed), which is the goal. */
  async function release(key: string): Promise<void> {
    try {
      await budget.run('capture', () => gateway.void({ trankey: key, release: true }));
    } catch (err) {
      if (err instanceof GatewayRefusedError && (err.reason === 'not_voidable' || err.reason === 'not_found')) {
        logger.warn('card verification: the void was refused; the authorization is not open', { reason: err.reason });
        return;
      }
      throw err;
    }
  }

  /** After an approved verification: void, then name the method. A failure leaves the outcome unknown. */
  async function finish(custkey: string, verification: Verification, last4: string | undefined, expiration: string | undefined): Promise<AddCardResult> {
    try {
      if (!verification.voided) await release(verification.key);
      const method = await findNewMethod(gateway, (call) => budget.run('read', call), custkey, last4, expiration);
      if (!method) throw new Error('the verified card is not among the customer\'s payment methods');
      return { kind: 'added', method, verification: { ...verification, voided: true } };
    } catch (err) {
      logger.warn('card verification: finishing after the authorization failed; the reconciler completes it', { err });
      throw new WriteOutcomeUnknownError(deps.unknownRetryAfterSec);
    }
  }

  return {
    async paymentConfig() {
      const now = Date.now();
      if (!publicKey || publicKey.until <= now) {
        const value = (await budget.run('read', () => gateway.getPublicKey())).value;
        publicKey = { value, until: now + (deps.publicKeyTtlMs ?? 10 * 60_000) };
      }
      return { public_key: publicKey.value, pay_js_url: deps.payJsUrl };
    },

    async add(input, invoice) {
      const request = {
        payment_key: input.paymentKey,
        amount: deps.verifyAmount,
        invoice,
        custkey: input.custkey,
        save_customer_paymethod: true as const,
        save_card: true,
        ...(input.cardholder !== undefined ? { cardholder: input.cardholder } : {}),
        ...(input.methodName !== undefined ? { method_name: input.methodName } : {}),
        ...(input.avsStreet !== undefined ? { avs_street: input.avsStreet } : {}),
        ...(input.avsPostalcode !== undefined ? { avs_postalcode: input.avsPostalcode } : {}),
      };
      const tx = (await budget.run('sale', () => gateway.authorize(request))).value;
      const verification = verificationOf(tx, false);
      if (chargedAsCheck(tx)) {
        await deps.checkKeys.undo(input.custkey, { key: tx.key, voided: false }, true);
        return { kind: 'check_key', verification: { ...verification, voided: true } };
      }
      if (tx.result_code === 'D') return { kind: 'declined', verification };
      if (tx.result_code !== 'A' && tx.result_code !== 'P') return { kind: 'refused', verification };
      const saved = savedCardOf(tx);
      return finish(input.custkey, verification, saved.last4, saved.expiration);
    },

    async complete(custkey, found) {
      const verification = verificationOf(found, found.voided);
      if (found.check) {
        await deps.checkKeys.undo(custkey, { key: found.key, voided: found.voided, created: found.check.created }, true);
        return { kind: 'check_key', verification: { ...verification, voided: true } };
      }
      if (found.result_code === 'D') return { kind: 'declined', verification };
      if (found.result_code !== 'A' && found.result_code !== 'P') return { kind: 'refused', verification };
      return finish(custkey, verification, found.last4, undefined);
    },
  };
}
