import { createHash } from 'node:crypto';
import { assertAccess, type Caller } from '../access';
import type { StoredResponse } from '../idempotency';
import type { Logger } from '../observability/logger';
import type { SaleRecords } from '../sale-records';
import type { WriteProtocol, WriteResult } from '../writes';
import { factsOfSale, type SaleAsked, type SaleFacts } from './sale-object';
import { saleRecordOf, type SaleOutcome, type SaleService } from './sale-service';

/** `POST /v1/sales` as parsed by the HTTP edge. */
export interface PayInput {
  customer: string;
  paymentMethod: string;
  amount: string;
  amountDetail?: { tax?: string; tip?: string };
  invoice?: string;
  capture: boolean;
}

export interface PayRequest {
  caller: Caller;
  idempotencyKey: string;
  /** fingerprintRequest() of the HTTP request: the same key with another body is refused. */
  fingerprint: string;
  input: PayInput;
}

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
  return 'tg' + createHash('sha256').update(`${sub}\u0000${idempotencyKey}`).digest('hex').slice(0, 14);
}

export interface CheckoutDeps {
  sales: SaleService;
  records: SaleRecords;
  writes: WriteProtocol;
  /** How long an attempt may run before it counts as dead (token lookup, the sale's wait, the sale). */
  leaseMs: number;
}

/**
 * A sale, start to end, through the one write protocol: the caller may act for the customer; the token cache
 * read and the sale's budget slot go out with the idempotency claim (ioredis auto-pipelining: one write, one
 * round trip; the slot is given back whenever no sale is sent on it); the record that makes the sale the
 * customer's (and its view) rides with the idempotency completion.
 */
export function createCheckout(deps: CheckoutDeps): Checkout {
  const { sales, records, writes } = deps;
  return {
    async pay({ caller, idempotencyKey: key, fingerprint, input }, render, log) {
      assertAccess(caller, input.customer);
      const invoice = input.invoice ?? deriveInvoice(caller.sub, key);
      const peeked = sales.peekToken(input.customer, input.paymentMethod);
      const spec = {
        scope: caller.sub,
        key,
        fingerprint,
        context: { op: input.capture ? ('sale' as const) : ('authorize' as const), customer: input.customer, amount: input.amount, payment_method: input.paymentMethod },
        invoice,
        leaseMs: deps.leaseMs,
        foldable: true,
      };
      const slot = sales.reserveSlot();
      try {
        return await writes.execute(spec, async (attempt) => {
          const asked: SaleAsked = { customer: input.customer, payment_method: input.paymentMethod, amount: input.amount, invoice: attempt.invoice ?? invoice, capture: input.capture };
          const outcome = await sales.charge({ ...asked, amount_detail: input.amountDetail }, { peeked: await peeked, slot });
          const saleKey = outcome.transaction.key;
          const facts = factsOfSale(outcome.transaction, asked);
          const alongside = saleKey ? () => records.create(saleKey, saleRecordOf(outcome, input, facts.fields)) : undefined;
          return { response: render(outcome, facts), alongside };
        }, log);
      } finally {
        void slot.release(); // a no-op when the sale used it; not awaited
      }
    },
  };
}
