import { Router, type Request, type RequestHandler, type Response } from 'express';
import { fingerprintRequest } from '../../idempotency';
import type { Checkout } from '../../sales/checkout';
import { requireAuth, requireScope } from '../auth';
import { Forbidden } from '../errors';
import { renderSale } from '../render-sale';
import { send } from '../send';
import { parseIdempotencyKey, parseSaleRequest } from '../validation';
import { toApiError } from '../write-errors';

export interface SalesRouteDeps {
  checkout: Checkout;
  authenticate: RequestHandler;
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
      send(res, await deps.checkout.pay({ caller, idempotencyKey, fingerprint, input }, (outcome, facts) => renderSale(outcome, facts, req.id, input), req.log));
    } catch (err) {
      throw toApiError(err);
    }
  });
  return router;
}
