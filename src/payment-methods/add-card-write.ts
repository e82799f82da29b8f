import { assertAccess, type Caller } from '../access';
import type { StoredResponse } from '../idempotency';
import { paymentMethodAdded } from '../events/write-events';
import type { Logger } from '../observability/logger';
import { deriveInvoice } from '../sales/checkout';
import type { WriteProtocol, WriteResult } from '../writes';
import type { PaymentMethod } from '../gateway/types';
import type { AddCardInput, AddCardResult, CardService } from './add-card';

export interface AddCardRequest {
  caller: Caller;
  idempotencyKey: string;
  /** fingerprintRequest() of the HTTP request. */
  fingerprint: string;
  input: AddCardInput;
}

export interface CardWrites {
  /** Adds a card from a Pay.js payment key, once per Idempotency-Key (unknown outcomes reconciled). */
  add(request: AddCardRequest, render: (result: AddCardResult) => StoredResponse, log?: Logger): Promise<WriteResult>;
}

export interface CardWritesDeps {
  cards: CardService;
  writes: WriteProtocol;
  /** The card's verification amount (CARD_VERIFY_AMOUNT): the write's context for the reconciler. */
  verifyAmount: string;
  /** The verification's wait and call, the void's, and the read that names the new method. */
  leaseMs: number;
  /** The customer's view gets the new card in the same step as the answer (src/wallet). */
  keep: (custkey: string, method: PaymentMethod) => Promise<unknown>;
}

/** Adding a card (contract: `POST /v1/customers/{custkey}/payment_methods`) through the one write protocol. */
export function createCardWrites(deps: CardWritesDeps): CardWrites {
  const { cards, writes } = deps;
  return {
    async add({ caller, idempotencyKey: key, fingerprint, input }, render, log) {
      assertAccess(caller, input.custkey);
      const invoice = deriveInvoice(caller.sub, key);
      const spec = {
        scope: caller.sub,
        key,
        fingerprint,
        context: { op: 'payment_method' as const, customer: input.custkey, amount: deps.verifyAmount },
        invoice,
        leaseMs: deps.leaseMs,
      };
      return writes.execute(spec, async (attempt) => {
        const result = await cards.add(input, attempt.invoice ?? invoice);
        // The gateway refused the key before processing (result E): nothing was authorized, so the key is freed for
        // the corrected request (src/writes, nothingMoved). A decline keeps its answer.
        if (result.kind === 'refused') return { response: render(result), nothingMoved: true };
        if (result.kind !== 'added') return { response: render(result) };
        const { method } = result;
        return {
          response: render(result),
          alongside: () => deps.keep(input.custkey, method),
          events: [paymentMethodAdded(method.key, method)],
        };
      }, log);
    },
  };
}
