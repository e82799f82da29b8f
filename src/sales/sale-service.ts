import type { GatewayClient } from '../gateway/client';
import type { CardRefToken, Transaction } from '../gateway/types';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { AheadSlot, CallClass } from '../limiter';
import type { Budget, TokenService } from '../tokens/token-service';
import { WriteNotSentError } from '../writes/not-sent';
import type { SaleFields, SaleRecord } from '../sale-records';
import { toCents } from '../gateway/money';

/** The gateway's error_code for a card reference it no longer accepts (the sandbox's CARDREF_INVALID_ERROR_CODE). */
export const CARDREF_INVALID_ERROR_CODES: ReadonlySet<string> = new Set(['10142']);

export interface SaleInput {
  customer: string;
  payment_method: string;
  amount: string;
  amount_detail?: { tax?: string; tip?: string };
  invoice: string;
  /** false: authorize only (`authonly`), capture or void it later. Default true (`cc:sale`). */
  capture?: boolean;
  /** A charge the shopper does not start: sent with the gateway's recurring indicator. */
  recurring?: boolean;
}

export type SaleOutcome =
  | { kind: 'approved'; transaction: Transaction } // A, or P with auth_amount
  | { kind: 'declined'; transaction: Transaction } // D, V
  | { kind: 'error'; transaction: Transaction }; // E: the gateway processed the request and refused it

/**
 * The sale was certainly not sent: the failure came before the gateway call (token lookup, or the card
 * reference refresh after a result E, which charges nothing). The idempotency key can be freed.
 */
export class SaleNotSentError extends WriteNotSentError {}

export interface SaleService {
  /** Charges a stored payment method through its card reference token. Gateway and budget errors propagate. */
  charge(input: SaleInput, options?: ChargeOptions): Promise<SaleOutcome>;
  /** Charges a Pay.js payment key: one `cc:sale` or `authonly`, no verification (`peeked` is not used). */
  chargeNewCard(input: NewCardSaleInput, options?: ChargeOptions): Promise<SaleOutcome>;
  /** The payment method's token if cached (no upstream call, never throws), to pass to charge(). */
  peekToken(customer: string, paymentMethod: string): Promise<CardRefToken | undefined>;
  /**
   * The sale's budget slot, reserved now so it travels with the caller's first Redis write (issue 15: a
   * cached-token sale makes 2 sequential round trips, not 3). Pass it to charge(); release() it when the sale
   * is not sent (a replay, a conflict, an error before charging): a slot no call starts on is given back.
   */
  reserveSlot(cls?: CallClass): AheadSlot;
}

export interface ChargeOptions {
  signal?: AbortSignal;
  /** What peekToken() found: saves the first attempt its own cache read. */
  peeked?: CardRefToken;
  /** What reserveSlot() reserved: the first attempt's slot when the token was peeked (else it is released). */
  slot?: AheadSlot;
  /**
   * Runs inside the budget's call, right before each gateway call (the removal guard's last word, guarantee 10);
   * throwing there sends nothing.
   */
  beforeSend?: () => Promise<void>;
  /** The budget class of the charge and its token load (default `sale`: a checkout). */
  cls?: CallClass;
}

/** A card the frontend just collected through Pay.js: its single-use key charged, optionally kept on the customer. */
export interface NewCardSaleInput {
  customer: string;
  paymentKey: string;
  /** Store the card on the customer (`save_customer_paymethod`, with `save_card` to recognise it after). */
  save: boolean;
  amount: string;
  amount_detail?: { tax?: string; tip?: string };
  invoice: string;
  capture?: boolean;
}

/**
 * The record that makes `saleKey` this customer's, written with the idempotency completion (one pipeline):
 * ownership and the money bounds of later captures and refunds (src/sale-records), and the sale's fields that
 * captures and voids answer with. Declines are recorded too, so their owner can read them and nobody else can.
 */
export function saleRecordOf(outcome: SaleOutcome, input: Pick<SaleInput, 'customer' | 'amount' | 'capture'>, fields: SaleFields): SaleRecord {
  const tx = outcome.transaction;
  const authorizedCents = outcome.kind === 'approved' ? toCents(tx.auth_amount ?? input.amount) : 0;
  const captured = input.capture !== false;
  return {
    customer: input.customer,
    state: outcome.kind !== 'approved' ? 'declined' : captured ? 'captured' : 'authorized',
    authorizedCents,
    capturedCents: captured ? authorizedCents : 0,
    refundedCents: 0,
    pendingRefundCents: 0,
    fields,
  };
}

export function isCardRefInvalid(tx: Transaction): boolean {
  return tx.result_code === 'E' && tx.error_code !== undefined && CARDREF_INVALID_ERROR_CODES.has(tx.error_code);
}

export function createSaleService(deps: { gateway: GatewayClient; budget: Budget; tokens: TokenService; logger: Logger; metrics?: Metrics }): SaleService {
  const { gateway, budget, tokens, logger, metrics } = deps;

  async function send(input: SaleInput, signal?: AbortSignal, peeked?: CardRefToken, slot?: AheadSlot, beforeSend?: () => Promise<void>, cls: CallClass = 'sale'): Promise<Transaction> {
    // Without a peeked token the sale first loads one (a read and its own wait): the slot would be stale by then.
    if (!peeked) void slot?.release();
    let token;
    try {
      // The load (first, or again after the gateway refused the cardref) is the sale's: it queues as a sale.
      ({ token } = await tokens.get(input.customer, input.payment_method, peeked, cls));
    } catch (err) {
      throw new SaleNotSentError(err);
    }
    // custkey attaches the transaction to the customer: its transaction list finds it (reconciliation), and
    // the gateway's record names its owner.
    const request = { cardref: token.cardref, amount: input.amount, amount_detail: input.amount_detail, invoice: input.invoice, custkey: input.customer, recurring: input.recurring };
    const call = async () => {
      await beforeSend?.();
      return input.capture === false ? gateway.authorize(request, { signal }) : gateway.sale(request, { signal });
    };
    const result = await budget.run(cls, call, { signal, ahead: slot });
    return result.value;
  }

  function outcomeOf(tx: Transaction): SaleOutcome {
    const kind = tx.result_code === 'A' || tx.result_code === 'P' ? 'approved' : tx.result_code === 'E' ? 'error' : 'declined';
    metrics?.sales.inc({ result: tx.result_code === 'P' ? 'partial' : kind });
    return { kind, transaction: tx };
  }

  return {
    peekToken(customer, paymentMethod) {
      return tokens.peek(customer, paymentMethod);
    },
    reserveSlot(cls = 'sale') {
      return budget.reserveAhead(cls);
    },
    async charge(input, options = {}) {
      let tx = await send(input, options.signal, options.peeked, options.slot, options.beforeSend, options.cls);
      if (isCardRefInvalid(tx)) {
        // The token was rotated or revoked: result E means nothing was charged, so one re-send with a fresh
        // token is safe (and the stale token must not be served again).
        logger.info('card reference rejected by the gateway; refreshing the token', { customer: input.customer, payment_method: input.payment_method });
        await tokens.evict(input.customer, input.payment_method);
        tx = await send(input, options.signal, undefined, undefined, options.beforeSend, options.cls);
        if (isCardRefInvalid(tx)) await tokens.evict(input.customer, input.payment_method);
      }
      return outcomeOf(tx);
    },
    async chargeNewCard(input, options = {}) {
      const { signal } = options;
      // gateway-facts.md: `custkey` attaches the sale to the customer (and, saving, names whose card it becomes).
      const base = { payment_key: input.paymentKey, amount: input.amount, amount_detail: input.amount_detail, invoice: input.invoice };
      const request = input.save ? { ...base, custkey: input.customer, save_customer_paymethod: true as const, save_card: true } : { ...base, custkey: input.customer };
      const call = async () => {
        await options.beforeSend?.();
        return input.capture === false ? gateway.authorize(request, { signal }) : gateway.sale(request, { signal });
      };
      return outcomeOf((await budget.run('sale', call, { signal, ahead: options.slot })).value);
    },
  };
}
