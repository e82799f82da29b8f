import { hash } from 'node:crypto';
import { assertAccess, NotFoundError, type Caller } from '../access';
import type { StoredResponse } from '../idempotency';
import type { CardRefToken, PaymentMethod } from '../gateway/types';
import type { CallClass } from '../limiter';
import type { Logger } from '../observability/logger';
import type { SaleRecords } from '../sale-records';
import type { GuardedAttempt, SaleGuard } from '../wallet/sale-guard';
import { sentness, unwrapNotSent, WriteNotSentError, type Attempt, type WriteProtocol, type WriteResult, type Written } from '../writes';
import { GatewayNotFoundError } from '../gateway/errors';
import type { BankSales } from './bank-sale';
import { chargedAsCheck } from './check-on-card';
import type { CheckKeys } from '../payment-methods/check-key';
import { SaleInputError } from './sale-errors';
import type { NewCards } from './new-card';
import { factsOfSale, type SaleAsked, type SaleFacts } from './sale-object';
import { saleRecordOf, type SaleOutcome, type SaleService } from './sale-service';

/** `POST /v1/sales` as parsed by the HTTP edge: a stored payment method, or a card just collected by Pay.js. */
export interface PayInput {
  customer: string;
  /** Exactly one of `paymentMethod` and `paymentKey`. */
  paymentMethod?: string;
  paymentKey?: string;
  /** With `paymentKey`: keep the card on the customer. */
  save?: boolean;
  amount: string;
  amountDetail?: { tax?: string; tip?: string };
  invoice?: string;
  capture: boolean;
  /**
   * A charge the shopper does not start (a subscription's renewal, an internal service's own billing): sent with
   * the gateway's recurring indicator, in the budget class `cls`.
   */
  recurring?: boolean;
  cls?: CallClass;
  /**
   * A bank payment (contract, "Bank payments"): the shopper's authorization, required with a check form's
   * `payment_key` or a saved bank method, recorded with the sale (SEC `WEB`; `PPD` when recurring).
   */
  authorization?: { text: string };
}

export interface PayRequest {
  caller: Caller;
  idempotencyKey: string;
  /** fingerprintRequest() of the HTTP request: the same key with another body is refused. */
  fingerprint: string;
  input: PayInput;
  /**
   * Records that must change with this sale's answer, in the same completion (a subscription created by its
   * first charge, a renewal's period marked paid): written in `alongside`, so a replay finds them done and a
   * crash between the answer and them leaves the answer's key to keep them (src/writes).
   */
  alsoRecord?: (outcome: SaleOutcome, facts: SaleFacts) => (() => Promise<unknown>) | undefined;
  /**
   * What must be kept before the sale may be sent, once this attempt owns the key (a subscription's terms, from
   * which the reconciler's resolution of a lost answer creates it: ReconcilerDeps.resolved). Written beside the
   * attempt's first checks; if it cannot be kept, nothing is sent (the key is freed).
   */
  started?: (attempt: Attempt) => Promise<unknown>;
}

/**
 * The budget class of charges the shopper does not start (renewals, `"recurring": true`): behind sales, captures
 * and refunds, ahead of reads (src/limiter/types.ts). A checkout never queues behind it.
 */
export const RECURRING_CLASS: CallClass = 'renewal';

/** The HTTP edge's rendering of a sale's outcome (201, 402, 502), stored for replays and sent. */
export type RenderSale = (outcome: SaleOutcome, facts: SaleFacts) => StoredResponse;

export interface Checkout {
  pay(request: PayRequest, render: RenderSale, log?: Logger): Promise<WriteResult>;
}

/**
 * An invoice derived from the caller and the key when the caller gives none, so that a duplicate-folding
 * retry of an `outcome_unknown` sale is recognised by the gateway (same card, amount and invoice).
 */
export function deriveInvoice(sub: string, idempotencyKey: string): string {
  return 'tg' + hash('sha256', `${sub}\u0000${idempotencyKey}`, 'hex').slice(0, 14);
}

export interface CheckoutDeps {
  sales: SaleService;
  records: SaleRecords;
  writes: WriteProtocol;
  /** The removal guard (guarantee 10): a removed card, or a removed customer, is never charged. */
  guard: SaleGuard;
  /** Naming the card a payment-key sale stored, and keeping it in the customer's view (issue 26, item 4). */
  newCards: NewCards;
  /** How long an attempt may run before it counts as dead (token lookup, the sale's wait, the sale). */
  leaseMs: number;
  /** Bank payments (bank-sale.ts). */
  bank: BankSales;
  /**
   * Whether a stored method is a bank account (`pay_type` check): `kept` asks only tokengate's view in Redis (no
   * gateway call), `read` reads the gateway's wallet only when the view does not hold the customer. A bank method
   * paid without `authorization` is refused (400 naming it) instead of taking the card path, which knows no such
   * method (404).
   */
  bankMethods?: { kept(custkey: string, pmkey: string): Promise<boolean>; read(caller: Caller, custkey: string, pmkey: string): Promise<boolean> };
  /**
   * A check form's key the gateway debited as a check on the card path (no authorization): voided at once, and with
   * `save_payment_method` the bank method the gateway saved from it removed (the add-card write's undo).
   */
  checkKeys: CheckKeys;
}

const authorizationRequired = () => new SaleInputError('body.authorization', 'required_for_bank_payment');
const isNotFound = (err: unknown) => {
  const e = unwrapNotSent(err);
  return e instanceof NotFoundError || e instanceof GatewayNotFoundError;
};

/** A sale's outcome from the gateway's answer (as the card paths' SaleService reads it). */
function outcomeOfTransaction(tx: SaleOutcome['transaction']): SaleOutcome {
  const kind = tx.result_code === 'A' || tx.result_code === 'P' ? 'approved' : tx.result_code === 'E' ? 'error' : 'declined';
  return { kind, transaction: tx };
}

/**
 * A sale, start to end, through the one write protocol: the caller may act for the customer; the token cache
 * read, the sale's budget slot and its entry in the removal guard go out with the idempotency claim (ioredis
 * auto-pipelining: one write, one round trip; the slot is given back whenever no sale is sent on it); the record
 * that makes the sale the customer's (and its view) rides with the idempotency completion, as does leaving the
 * guard.
 */
/** A bank payment's SEC code (contract, "Bank payments"): `WEB` for the shopper on the web, `PPD` for a recurring debit. */
const secOf = (input: PayInput): 'WEB' | 'PPD' => (input.recurring ? 'PPD' : 'WEB');

/** A checkout's sale, or a charge the shopper does not start. */
const classOf = (input: PayInput): CallClass => input.cls ?? (input.recurring ? RECURRING_CLASS : 'sale');

export function createCheckout(deps: CheckoutDeps): Checkout {
  const { sales, records, writes, guard, newCards } = deps;

  type Slot = ReturnType<SaleService['reserveSlot']>;

  /** A stored payment method, through its card reference token. */
  async function storedCard(input: PayInput & { paymentMethod: string }, asked: SaleAsked, guarded: GuardedAttempt, peeked: Promise<CardRefToken | undefined>, slot: Slot): Promise<SaleOutcome> {
    const token = await peeked;
    // Its token must be loaded first (a read, and its own wait): a removal need not wait for this attempt.
    if (!token) guarded.waiting();
    const sale = { ...asked, payment_method: input.paymentMethod, amount_detail: input.amountDetail, recurring: input.recurring };
    return sales.charge(sale, { peeked: token, slot, beforeSend: guarded.beforeSend, cls: classOf(input) });
  }

  /** A card just collected by Pay.js; kept on the customer, it is named now when a read slot is free at once. */
  async function newCard(caller: Caller, input: PayInput, asked: SaleAsked, guarded: GuardedAttempt, slot: Slot): Promise<{ outcome: SaleOutcome; stored?: PaymentMethod; voidedCheck?: true }> {
    const save = input.save === true;
    const charge = { customer: input.customer, paymentKey: input.paymentKey ?? '', save, amount: input.amount, amount_detail: input.amountDetail, invoice: asked.invoice, capture: input.capture };
    const outcome = await sales.chargeNewCard(charge, { slot, beforeSend: guarded.beforeSend });
    if (chargedAsCheck(outcome.transaction)) {
      // A check form's key the gateway debited as a check (check-on-card.ts): no authorization was given, so the
      // debit is voided now, the bank account it saved (save_payment_method) removed, and the answer is the
      // refusal's (400 naming body.authorization), kept for the key.
      await deps.checkKeys.undo(input.customer, { key: outcome.transaction.key, voided: false }, save);
      const tx = outcome.transaction;
      return { outcome: { kind: 'error', transaction: { ...tx, result_code: 'E', result: 'Error', error: 'A bank account\'s payment key sent without an authorization: voided', error_code: '' } }, voidedCheck: true };
    }
    const stored = save && outcome.kind === 'approved' ? await newCards.nameNow(caller, input.customer, outcome.transaction) : undefined;
    return { outcome, stored };
  }

  /** A bank payment: a check form's key or a saved bank method (bank-sale.ts); the account kept when asked. */
  async function bankPayment(input: PayInput, asked: SaleAsked, guarded: GuardedAttempt, slot: Slot): Promise<{ outcome: SaleOutcome; stored?: PaymentMethod; voidedCheck?: true }> {
    const sec = asked.bank?.sec === 'PPD' ? 'PPD' : 'WEB';
    const charged = await deps.bank.charge(
      { customer: input.customer, ...(input.paymentKey !== undefined ? { paymentKey: input.paymentKey } : {}), ...(input.paymentMethod !== undefined ? { paymentMethod: input.paymentMethod } : {}), save: input.save === true, amount: input.amount, invoice: asked.invoice, sec, cls: classOf(input) },
      { slot, beforeSend: guarded.beforeSend },
    );
    return { outcome: outcomeOfTransaction(charged.transaction), ...(charged.stored ? { stored: charged.stored } : {}) };
  }

  return {
    async pay({ caller, idempotencyKey: key, fingerprint, input, alsoRecord, started }, render, log) {
      assertAccess(caller, input.customer);
      const invoice = input.invoice ?? deriveInvoice(caller.sub, key);
      const paymentMethod = input.paymentMethod;
      const isBank = input.authorization !== undefined;
      const peeked = paymentMethod !== undefined && !isBank ? sales.peekToken(input.customer, paymentMethod) : Promise.resolve(undefined);
      // A bank method has no card token: only when none is cached is the view in Redis asked whether it is one
      // (a card sale with its token cached pays no extra round trip).
      const bankMethods = deps.bankMethods;
      const keptBank = paymentMethod !== undefined && !isBank && bankMethods
        ? peeked.then((token) => (token ? false : bankMethods.kept(input.customer, paymentMethod))).catch(() => false)
        : Promise.resolve(false);
      const spec = {
        scope: caller.sub,
        key,
        fingerprint,
        context: {
          op: input.capture ? ('sale' as const) : ('authorize' as const), customer: input.customer, amount: input.amount, payment_method: paymentMethod ?? '',
          // A payment key kept on the customer: a check form's the gateway debited as a check saved a bank method the
          // reconciler must remove with the void (src/reconcile/find.ts).
          ...(input.paymentKey !== undefined && input.save === true ? { save: true as const } : {}),
          ...(input.authorization ? { bank: { authorization: input.authorization.text, sec: secOf(input) } } : {}),
        },
        invoice,
        leaseMs: deps.leaseMs,
        foldable: true,
      };
      const slot = sales.reserveSlot(classOf(input));
      const guarded = guard.enter(input.customer, paymentMethod ?? '');
      let saved: { tx: SaleOutcome['transaction']; facts: SaleFacts } | undefined;
      try {
        const result = await writes.execute(spec, async (attempt): Promise<Written> => {
          // Kept while the guard is entered (in parallel: no round trip of its own); not kept, nothing is sent.
          const kept = started?.(attempt).then(() => undefined, (err: unknown) => new WriteNotSentError(err));
          // Removed (the method or the customer): nothing is sent, the key is freed, and the answer is a 404.
          if (!(await guarded.entered)) throw new WriteNotSentError(new NotFoundError());
          const notKept = await kept;
          if (notKept) throw notKept;
          if (await keptBank) throw new WriteNotSentError(authorizationRequired());
          const asked: SaleAsked = { customer: input.customer, payment_method: paymentMethod, amount: input.amount, invoice: attempt.invoice ?? invoice, capture: input.capture };
          if (input.authorization) asked.bank = { authorization: input.authorization.text, sec: secOf(input) };
          const { outcome, stored, voidedCheck } = isBank
            ? await bankPayment(input, asked, guarded, slot)
            : paymentMethod !== undefined
              ? { outcome: await storedCard({ ...input, paymentMethod }, asked, guarded, peeked, slot), stored: undefined, voidedCheck: undefined }
              : await newCard(caller, input, asked, guarded, slot);
          if (paymentMethod === undefined) asked.payment_method = stored?.key;
          const saleKey = outcome.transaction.key;
          const facts = factsOfSale(outcome.transaction, asked);
          // Kept, approved and not named yet: named after the answer (below).
          if (input.save && outcome.kind === 'approved' && !stored && saleKey && !isBank) saved = { tx: outcome.transaction, facts };
          const also = alsoRecord?.(outcome, facts);
          const alongside = () => Promise.all([
            // A check voided for want of an authorization is no sale of the caller's (the reconciler's path keeps none either).
            // Named by this write (attempt.reference): the reconciler then knows the record as this key's own.
            saleKey && !voidedCheck ? records.create(saleKey, { ...saleRecordOf(outcome, input, facts.fields), writer: attempt.reference }) : undefined,
            guarded.leave(),
            stored ? newCards.keep(input.customer, stored) : undefined,
            also?.(),
          ]);
          const response = render(outcome, facts);
          // Result E on a payment key is the gateway refusing the key before processing (nothing charged): the 400 is
          // not kept and the key is freed for the corrected request. A check voided above moved money: kept.
          const nothingMoved = outcome.kind === 'error' && input.paymentKey !== undefined && voidedCheck === undefined;
          return { response, alongside, events: stored ? [newCards.addedEvent(stored)] : undefined, nothingMoved };
        }, log);
        // The card was stored and no read slot was free at once: named after the answer, in the background.
        if (saved) newCards.nameLater(caller, input.customer, saved.tx, saved.facts);
        return result;
      } catch (err) {
        // A sale that stored a card and may have been sent: the customer's view asks the gateway when next read.
        if (input.save && sentness(err) === 'maybe') newCards.distrust(input.customer);
        // Not a card (its token is unknown) and not in the view kept in Redis: a bank method the gateway lists? Asked
        // of the gateway only when the view does not hold the customer (a 404 loop spends no read per try).
        if (paymentMethod !== undefined && !isBank && deps.bankMethods && isNotFound(err) && (await deps.bankMethods.read(caller, input.customer, paymentMethod).catch(() => false))) throw authorizationRequired();
        throw err;
      } finally {
        void slot.release(); // a no-op when the sale used it; not awaited
        void guarded.leave(); // a no-op when it left with the completion
      }
    },
  };
}
