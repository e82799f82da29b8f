import { Router, type Request, type RequestHandler, type Response } from 'express';
import { fingerprintRequest } from '../../idempotency';
import type { CardService } from '../../payment-methods/add-card';
import type { CardWrites } from '../../payment-methods/add-card-write';
import { assertCustomerAccess, requireAuth, requireScope } from '../auth';
import { renderAddCard } from '../payment-method-answers';
import { send } from '../send';
import { parseAddPaymentMethod, parseIdempotencyKey, parsePathKey } from '../validation';
import { toApiError } from '../write-errors';

export interface PaymentMethodRouteDeps {
  cards: CardService;
  cardWrites: CardWrites;
  authenticate: RequestHandler;
}

/**
 * Adding a card without card data (contract: `/v1/payment-config`, `POST /v1/customers/{custkey}/payment_methods`,
 * guarantee 8): the frontend collects the card in the gateway's Pay.js iframe and sends only the payment key.
 */
export function paymentMethodsRouter(deps: PaymentMethodRouteDeps): Router {
  const router = Router();

  router.get('/v1/payment-config', deps.authenticate, async (_req: Request, res: Response) => {
    try {
      res.set('Cache-Control', 'private, max-age=300').json(await deps.cards.paymentConfig());
    } catch (err) {
      throw toApiError(err);
    }
  });

  router.post('/v1/customers/:custkey/payment_methods', deps.authenticate, requireScope('payment_methods:write'), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    assertCustomerAccess(caller, custkey);
    const idempotencyKey = parseIdempotencyKey(req.get('Idempotency-Key'));
    const input = { custkey, ...parseAddPaymentMethod(req.body) };
    const fingerprint = fingerprintRequest('POST', `/v1/customers/${custkey}/payment_methods`, req.body);
    try {
      send(res, await deps.cardWrites.add({ caller, idempotencyKey, fingerprint, input }, (result) => renderAddCard(result, req.id), req.log));
    } catch (err) {
      throw toApiError(err);
    }
  });

  return router;
}
