import { Router, type Request, type RequestHandler, type Response } from 'express';
import { fingerprintRequest, type StoredResponse } from '../../idempotency';
import type { Checkout } from '../../sales/checkout';
import { saleObject, type SaleFacts } from '../../sales/sale-object';
import type { SaleOutcome } from '../../sales/sale-service';
import { requireAuth, requireScope } from '../auth';
import { CardDeclined, Forbidden, GatewayErrorApi, InvalidRequest } from '../errors';
import { send } from '../send';
import { parseIdempotencyKey, parseSaleRequest } from '../validation';
import { toApiError } from '../write-errors';

export interface SalesRouteDeps {
  checkout: Checkout;
  authenticate: RequestHandler;
}

/**
 * A sale's answer: 201 the sale, 402 card_declined carrying it, 502 for a gateway error (result E); with a Pay.js
 * payment key, a result E is the gateway refusing the key (unknown, expired or used: its codes are not published),
 * 400 invalid_request naming `body.payment_key`, as when adding a card.
 */
export function renderSale(outcome: SaleOutcome, facts: SaleFacts, requestId: string, paymentKey = false): StoredResponse {
  const sale = saleObject(facts);
  if (outcome.kind === 'approved') return { status: 201, body: sale, headers: {} };
  const error = outcome.kind === 'declined'
    ? new CardDeclined(sale)
    : paymentKey
      ? new InvalidRequest([{ path: 'body.payment_key', rule: 'refused_by_gateway' }], 'The gateway refused the payment key: it is unknown, expired or already used.')
      : new GatewayErrorApi('gateway_error');
  return { status: error.status, body: error.toBody(requestId), headers: { ...error.headers } };
}

/** `POST /v1/sales`: parse, authorize, pay (src/sales/checkout.ts), render. */
export function salesRouter(deps: SalesRouteDeps): Router {
  const router = Router();
  router.post('/v1/sales', deps.authenticate, requireScope('sales:create'), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const idempotencyKey = parseIdempotencyKey(req.get('Idempotency-Key'));
    const input = parseSaleRequest(req.body);
    // Keeping the card adds a payment method to the customer: the scope that allows adding one (contract,
    // `payment_methods:write`: "add a card to the bound customer from a client-side payment_key").
    if (input.save && !caller.scopes.has('payment_methods:write')) throw new Forbidden(['payment_methods:write']);
    // A charge the shopper does not start is an internal service's (contract, "Subscriptions"): never a shopper's token.
    if (input.recurring && !caller.anyCustomer) throw new Forbidden(['customers:any']);
    const fingerprint = fingerprintRequest('POST', '/v1/sales', req.body);
    try {
      send(res, await deps.checkout.pay({ caller, idempotencyKey, fingerprint, input }, (outcome, facts) => renderSale(outcome, facts, req.id, input.paymentKey !== undefined), req.log));
    } catch (err) {
      throw toApiError(err);
    }
  });
  return router;
}
