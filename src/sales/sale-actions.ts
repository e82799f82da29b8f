import type { Caller } from '../access';
import type { StoredResponse, WriteContext } from '../idempotency';
import type { Logger } from '../observability/logger';
import type { LaterPart, WriteProtocol, WriteResult } from '../writes';
import type { FollowUpResult, FollowUpService, RefundResult, SaleFollowUpResult } from './follow-up-service';
import type { FoundSale, SaleLookup } from './sale-lookup';

/** A follow-up as parsed by the HTTP edge: which sale, under which key, for which body. */
export interface FollowUpRequest {
  caller: Caller;
  saleKey: string;
  idempotencyKey: string;
  /** fingerprintRequest() of the HTTP request. */
  fingerprint: string;
  /** Cents and their text, when the body named an amount. */
  amount?: { text: string; cents: number };
}

/** The HTTP edge's answers, stored for replays and sent. */
export interface FollowUpRender {
  capture(saleKey: string, found: FoundSale, result: SaleFollowUpResult): StoredResponse;
  void(saleKey: string, found: FoundSale, result: SaleFollowUpResult): StoredResponse;
  refund(saleKey: string, result: RefundResult): StoredResponse;
}

export interface SaleActions {
  capture(request: FollowUpRequest, render: FollowUpRender['capture'], log?: Logger): Promise<WriteResult>;
  void(request: FollowUpRequest, render: FollowUpRender['void'], log?: Logger): Promise<WriteResult>;
  refund(request: FollowUpRequest, render: FollowUpRender['refund'], log?: Logger): Promise<WriteResult>;
}

export interface SaleActionsDeps {
  lookup: SaleLookup;
  followUps: FollowUpService;
  writes: WriteProtocol;
  /** A follow-up's attempt: the read of a record kept without fields, its wait for a slot, the call. */
  leaseMs: number;
}

/**
 * Captures, voids and refunds, each the same way: the sale must be the caller's (404 exactly like an unknown
 * key otherwise: never trusting the key in the path), then the money moves once per Idempotency-Key through the
 * one write protocol, under a reservation on the sale's record.
 */
export function createSaleActions(deps: SaleActionsDeps): SaleActions {
  const { lookup, followUps, writes } = deps;

  /**
   * `act` moves the money and answers; what the sale's record could not take then (`later`: the settlement of its
   * reservation) is kept before the answer (Written.before), so no answer is kept with its reservation held.
   */
  async function run(op: 'capture' | 'void' | 'refund', request: FollowUpRequest, act: (found: FoundSale, reference: string) => Promise<{ response: StoredResponse; later: LaterPart[] }>, log?: Logger): Promise<WriteResult> {
    const found = await lookup.locate(request.caller, request.saleKey);
    const context: WriteContext & { op: typeof op } = { op, customer: found.record.customer, sale: request.saleKey };
    if (request.amount !== undefined) context.amount = request.amount.text;
    const spec = { scope: request.caller.sub, key: request.idempotencyKey, fingerprint: request.fingerprint, context, leaseMs: deps.leaseMs };
    return writes.execute(spec, async (attempt) => {
      const { response, later } = await act(found, attempt.reference);
      return { response, before: later };
    }, log);
  }
  const answered = <R extends FollowUpResult>(result: R, render: (result: R) => StoredResponse) => ({ response: render(result), later: result.later });

  return {
    capture: (request, render, log) =>
      run('capture', request, async (found, reference) => answered(await followUps.capture(request.saleKey, found, request.amount?.cents, reference), (r) => render(request.saleKey, found, r)), log),
    void: (request, render, log) =>
      run('void', request, async (found, reference) => answered(await followUps.void(request.saleKey, found, reference), (r) => render(request.saleKey, found, r)), log),
    refund: (request, render, log) =>
      run('refund', request, async (_found, reference) => answered(await followUps.refund(request.saleKey, request.amount?.cents, reference), (r) => render(request.saleKey, r)), log),
  };
}
