import { createHash } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { Config } from '../../config/types';
import { GatewayError } from '../../gateway/errors';
import type { Transaction } from '../../gateway/types';
import { fingerprintRequest, StoreUnavailableError, type BeginResult, type IdempotencyStore, type StoredResponse } from '../../idempotency';
import { LimiterUnavailableError, RateLimitExceededError } from '../../limiter';
import type { Metrics } from '../../observability/metrics';
import { SaleNotSentError, type SaleOutcome, type SaleService } from '../../sales/sale-service';
import { assertCustomerAccess, requireAuth, requireScope } from '../auth';
import { ApiError, CardDeclined, GatewayErrorApi, IdempotencyInProgress, IdempotencyKeyReused, InternalError, OutcomeUnknown, RateLimited, Unavailable, fromGatewayError } from '../errors';
import { parseIdempotencyKey, parseSaleRequest, type SaleInput } from '../validation';
import type { RequestHandler } from 'express';

export interface SalesRouteDeps {
  config: Config;
  sales: SaleService;
  idempotency: IdempotencyStore;
  authenticate: RequestHandler;
  metrics: Metrics;
}

/**
 * An invoice derived from the caller and the key when the caller gives none, so that a duplicate-folding
 * retry of an `outcome_unknown` sale is recognised by the gateway (same card, amount and invoice).
 */
export function deriveInvoice(sub: string, idempotencyKey: string): string {
  return 'tg' + createHash('sha256').update(`${sub}\u0000${idempotencyKey}`).digest('hex').slice(0, 14);
}

/** The public sale object: the gateway's transaction fields plus what was asked (contract.md, POST /v1/sales). */
export function saleObject(tx: Transaction, input: SaleInput): Record<string, unknown> {
  return {
    type: 'sale',
    key: tx.key,
    refnum: tx.refnum,
    result_code: tx.result_code,
    result: tx.result,
    authcode: tx.authcode,
    auth_amount: tx.auth_amount ?? (tx.result_code === 'A' ? input.amount : '0.00'),
    amount: input.amount,
    is_duplicate: tx.is_duplicate,
    invoice: tx.invoice,
    customer: input.customer,
    payment_method: input.paymentMethod,
    creditcard: tx.creditcard,
    avs: tx.avs,
    cvc: tx.cvc,
    batch: tx.batch,
    ...(tx.error !== undefined ? { error: tx.error, error_code: tx.error_code } : {}),
  };
}

function render(outcome: SaleOutcome, input: SaleInput, requestId: string): StoredResponse {
  const sale = saleObject(outcome.transaction, input);
  if (outcome.kind === 'approved') return { status: 201, body: sale, headers: {} };
  const error = outcome.kind === 'declined' ? new CardDeclined(sale) : new GatewayErrorApi('gateway_error');
  return { status: error.status, body: error.toBody(requestId), headers: { ...error.headers } };
}

/** Sends a stored or fresh answer. */
function send(res: Response, response: StoredResponse, replayed: boolean): void {
  res.status(response.status).set(response.headers);
  if (replayed) res.set('Idempotent-Replayed', 'true');
  res.json(response.body);
}

export function salesRouter(deps: SalesRouteDeps): Router {
  const { config, sales, idempotency, metrics } = deps;
  const router = Router();
  // The attempt may run for: the token lookup (read wait + timeout), the sale's wait, the sale itself.
  const leaseMs = config.limiter.readMaxWaitMs + config.limiter.saleMaxWaitMs + 2 * config.gateway.timeoutMs + 10_000;

  router.post('/v1/sales', deps.authenticate, requireScope('sales:create'), async (req: Request, res: Response) => {
    const auth = requireAuth(req);
    const key = parseIdempotencyKey(req.get('Idempotency-Key'));
    const input = parseSaleRequest(req.body);
    assertCustomerAccess(auth, input.customer);
    const fingerprint = fingerprintRequest('POST', '/v1/sales', req.body);
    const invoice = input.invoice ?? deriveInvoice(auth.sub, key);

    // The token cache read goes out with the idempotency claim (ioredis auto-pipelining: one write, one
    // round trip). It never locks or loads, so a replay or a conflict wastes one GET; a miss loads later.
    const peeked = sales.peekToken(input.customer, input.paymentMethod);
    let begun: BeginResult;
    try {
      begun = await idempotency.begin(auth.sub, key, fingerprint, { leaseMs, invoice });
      if (begun.kind === 'outcome_unknown' && config.gateway.duplicateFolding) {
        // Duplicate folding is on for the merchant key: re-send with the SAME invoice; the gateway answers the
        // original transaction (is_duplicate Y) if the first attempt went through (contract, guarantee 2).
        begun = await idempotency.retryUnknown(auth.sub, key, fingerprint, { leaseMs, invoice });
      }
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw new Unavailable(5);
      throw err;
    }

    switch (begun.kind) {
      case 'completed':
        metrics.idempotency.inc({ event: 'replay' });
        return send(res, begun.response, true);
      case 'in_progress':
        metrics.idempotency.inc({ event: 'conflict' });
        throw new IdempotencyInProgress(begun.retryAfterSec);
      case 'mismatch':
        metrics.idempotency.inc({ event: 'mismatch' });
        throw new IdempotencyKeyReused();
      case 'outcome_unknown':
        metrics.idempotency.inc({ event: 'outcome_unknown' });
        throw new OutcomeUnknown();
      case 'started':
        break;
    }

    const attempt = begun.attempt;
    const saleInvoice = begun.invoice ?? invoice;
    let outcome: SaleOutcome;
    try {
      outcome = await sales.charge({
        customer: input.customer,
        payment_method: input.paymentMethod,
        amount: input.amount,
        amount_detail: input.amountDetail,
        invoice: saleInvoice,
      }, { peeked: await peeked });
    } catch (err) {
      const { mapped, sent } = classify(err);
      req.log.warn('sale failed', { code: mapped.code, sent, upstream: err instanceof GatewayError ? err.code : undefined });
      await settleFailure(sent, mapped).catch((storeErr: unknown) => req.log.error('idempotency transition failed', { err: storeErr }));
      throw mapped;
    }

    const response = render(outcome, input, req.id);
    try {
      await idempotency.complete(auth.sub, key, attempt, response);
    } catch (err) {
      // The sale happened: answer it. The key turns outcome_unknown when its lease ends, so it never charges twice.
      req.log.error('could not store the sale answer for replay', { err });
    }
    send(res, response, false);

    async function settleFailure(sent: 'no' | 'maybe', mapped: ApiError): Promise<void> {
      if (sent === 'no') await idempotency.abandon(auth.sub, key, attempt);
      else await idempotency.markOutcomeUnknown(auth.sub, key, attempt, { invoice: saleInvoice, reason: mapped.code });
    }
  });

  return router;
}

/**
 * Whether a failed sale may have reached the gateway, and the public answer. Only failures that prove
 * nothing was sent free the key; anything else (timeout, reset, 5xx, unreadable, a bug after sending)
 * leaves it outcome_unknown so it is never charged twice (contract, guarantee 2).
 */
function classify(err: unknown): { mapped: ApiError; sent: 'no' | 'maybe' } {
  if (err instanceof SaleNotSentError) {
    const inner = classify(err.cause);
    return { mapped: inner.mapped, sent: 'no' };
  }
  if (err instanceof RateLimitExceededError) return { mapped: new RateLimited(err.retryAfterMs / 1000), sent: 'no' };
  if (err instanceof LimiterUnavailableError) return { mapped: new Unavailable(5), sent: 'no' };
  if (err instanceof StoreUnavailableError) return { mapped: new Unavailable(5), sent: 'no' };
  if (err instanceof GatewayError) return { mapped: fromGatewayError(err), sent: err.outcome === 'not_processed' ? 'no' : 'maybe' };
  if (err instanceof ApiError) return { mapped: err, sent: 'maybe' };
  return { mapped: new InternalError(), sent: 'maybe' };
}
