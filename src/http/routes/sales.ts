import { createHash } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { Config } from '../../config/types';
import { fingerprintRequest, type StoredResponse } from '../../idempotency';
import type { SaleRecords } from '../../sale-records';
import { factsOfSale, saleObject, type SaleAsked, type SaleFacts } from '../../sales/sale-object';
import { saleRecordOf, type SaleOutcome, type SaleService } from '../../sales/sale-service';
import type { WriteProtocol } from '../../writes';
import { assertCustomerAccess, requireAuth, requireScope } from '../auth';
import { CardDeclined, GatewayErrorApi } from '../errors';
import { parseIdempotencyKey, parseSaleRequest } from '../validation';
import { toApiError } from '../write-errors';
import type { RequestHandler } from 'express';

export interface SalesRouteDeps {
  config: Config;
  sales: SaleService;
  records: SaleRecords;
  writes: WriteProtocol;
  authenticate: RequestHandler;
}

/**
 * An invoice derived from the caller and the key when the caller gives none, so that a duplicate-folding
 * retry of an `outcome_unknown` sale is recognised by the gateway (same card, amount and invoice).
 */
export function deriveInvoice(sub: string, idempotencyKey: string): string {
  return 'tg' + createHash('sha256').update(`${sub}\u0000${idempotencyKey}`).digest('hex').slice(0, 14);
}

function render(outcome: SaleOutcome, facts: SaleFacts, requestId: string): StoredResponse {
  const sale = saleObject(facts);
  if (outcome.kind === 'approved') return { status: 201, body: sale, headers: {} };
  const error = outcome.kind === 'declined' ? new CardDeclined(sale) : new GatewayErrorApi('gateway_error');
  return { status: error.status, body: error.toBody(requestId), headers: { ...error.headers } };
}

/** Sends a stored or fresh answer. */
export function send(res: Response, response: StoredResponse, replayed: boolean): void {
  res.status(response.status).set(response.headers);
  if (replayed) res.set('Idempotent-Replayed', 'true');
  res.json(response.body);
}

export function salesRouter(deps: SalesRouteDeps): Router {
  const { config, sales, writes, records } = deps;
  const router = Router();
  // The attempt may run for: the token lookup (read wait + timeout), the sale's wait, the sale itself.
  const leaseMs = config.limiter.readMaxWaitMs + config.limiter.saleMaxWaitMs + 2 * config.gateway.timeoutMs + 10_000;

  router.post('/v1/sales', deps.authenticate, requireScope('sales:create'), async (req: Request, res: Response) => {
    const auth = requireAuth(req);
    const key = parseIdempotencyKey(req.get('Idempotency-Key'));
    const input = parseSaleRequest(req.body);
    assertCustomerAccess(auth, input.customer);
    const invoice = input.invoice ?? deriveInvoice(auth.sub, key);

    // The token cache read and the sale's budget slot go out with the idempotency claim (ioredis
    // auto-pipelining: one write, one round trip). The read never locks or loads, so a replay or a conflict
    // wastes one GET; the slot is given back whenever no sale is sent on it (the finally below).
    const peeked = sales.peekToken(input.customer, input.paymentMethod);
    const spec = {
      scope: auth.sub,
      key,
      fingerprint: fingerprintRequest('POST', '/v1/sales', req.body),
      context: { op: input.capture ? 'sale' : 'authorize', customer: input.customer, amount: input.amount, payment_method: input.paymentMethod },
      invoice,
      leaseMs,
      foldable: true,
    };
    let result;
    const slot = sales.reserveSlot();
    try {
      result = await writes.execute(spec, async (attempt) => {
        const asked: SaleAsked = { customer: input.customer, payment_method: input.paymentMethod, amount: input.amount, invoice: attempt.invoice ?? invoice, capture: input.capture };
        const outcome = await sales.charge({ ...asked, amount_detail: input.amountDetail }, { peeked: await peeked, slot });
        const saleKey = outcome.transaction.key;
        // The record (ownership, bounds, the sale's fields) rides with the idempotency completion (same tick:
        // one pipelined round trip).
        const facts = factsOfSale(outcome.transaction, asked);
        const alongside = saleKey ? () => records.create(saleKey, saleRecordOf(outcome, input, facts.fields)) : undefined;
        return { response: render(outcome, facts, req.id), alongside };
      }, req.log);
    } catch (err) {
      throw toApiError(err);
    } finally {
      void slot.release(); // a no-op when the sale used it; not awaited
    }
    send(res, result.response, result.replayed);
  });

  return router;
}
