import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Config } from '../../config/types';
import { fingerprintRequest } from '../../idempotency';
import type { CardService } from '../../payment-methods/add-card';
import type { WriteProtocol } from '../../writes';
import { assertCustomerAccess, requireAuth, requireScope } from '../auth';
import { renderAddCard } from '../payment-method-answers';
import { parseAddPaymentMethod, parseIdempotencyKey, parsePathKey } from '../validation';
import { toApiError } from '../write-errors';
import { deriveInvoice, send } from './sales';

export interface PaymentMethodRouteDeps {
  config: Config;
  cards: CardService;
  writes: WriteProtocol;
  authenticate: RequestHandler;
}

/**
 * Adding a card without card data (contract: `/v1/payment-config`, `POST /v1/customers/{custkey}/payment_methods`,
 * guarantee 8): the frontend collects the card in the gateway's Pay.js iframe and sends only the payment key.
 * The write runs through the one write protocol (Idempotency-Key, unknown outcomes reconciled).
 */
export function paymentMethodsRouter(deps: PaymentMethodRouteDeps): Router {
  const { config, cards, writes } = deps;
  const router = Router();
  // The verification's wait and call, the void's, and the read that names the new method.
  const leaseMs = config.limiter.saleMaxWaitMs + config.limiter.readMaxWaitMs + 3 * config.gateway.timeoutMs + 10_000;

  router.get('/v1/payment-config', deps.authenticate, async (_req: Request, res: Response) => {
    try {
      res.set('Cache-Control', 'private, max-age=300').json(await cards.paymentConfig());
    } catch (err) {
      throw toApiError(err);
    }
  });

  router.post('/v1/customers/:custkey/payment_methods', deps.authenticate, requireScope('payment_methods:write'), async (req: Request, res: Response) => {
    const auth = requireAuth(req);
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    assertCustomerAccess(auth, custkey);
    const key = parseIdempotencyKey(req.get('Idempotency-Key'));
    const input = parseAddPaymentMethod(req.body);
    const invoice = deriveInvoice(auth.sub, key);
    const spec = {
      scope: auth.sub,
      key,
      fingerprint: fingerprintRequest('POST', `/v1/customers/${custkey}/payment_methods`, req.body),
      context: { op: 'payment_method', customer: custkey, amount: config.cards.verifyAmount },
      invoice,
      leaseMs,
    };
    try {
      const result = await writes.execute(spec, async (attempt) => {
        const added = await cards.add({ custkey, ...input }, attempt.invoice ?? invoice);
        return { response: renderAddCard(added, req.id) };
      }, req.log);
      send(res, result.response, result.replayed);
    } catch (err) {
      throw toApiError(err);
    }
  });

  return router;
}
