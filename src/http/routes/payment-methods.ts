import { Router, type Request, type RequestHandler, type Response } from 'express';
import { fingerprintRequest } from '../../idempotency';
import type { CardService } from '../../payment-methods/add-card';
import type { CardWrites } from '../../payment-methods/add-card-write';
import type { TokenService } from '../../tokens/token-service';
import type { Wallet } from '../../wallet';
import { assertCustomerAccess, requireAuth, requireScope } from '../auth';
import { setFreshness, wantsOrigin } from '../freshness';
import { renderAddCard } from '../payment-method-answers';
import { send } from '../send';
import { parseAddPaymentMethod, parseIdempotencyKey, parseListQuery, parseOptionalIdempotencyKey, parsePathKey, parseUpdatePaymentMethod } from '../validation';
import { toApiError } from '../write-errors';

export interface PaymentMethodRouteDeps {
  cards: CardService;
  cardWrites: CardWrites;
  tokens: TokenService;
  wallet: Pick<Wallet, 'methods' | 'removals'>;
  authenticate: RequestHandler;
}

/**
 * A customer's payment methods (contract: `/v1/payment-config`, `/v1/customers/{custkey}/payment_methods…`):
 * adding a card without card data (guarantee 8: the frontend collects it in the gateway's Pay.js iframe and sends
 * only the payment key), the list from tokengate's view, renaming, the default, removal (guarantee 10) and the
 * card reference token. Each route parses, authorizes, calls one use case and renders.
 */
export function paymentMethodsRouter(deps: PaymentMethodRouteDeps): Router {
  const { wallet } = deps;
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

  router.get('/v1/customers/:custkey/payment_methods', deps.authenticate, requireScope('payment_methods:read'), async (req: Request, res: Response) => {
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    const page = parseListQuery(req.query);
    try {
      const { methods, freshness } = await wallet.methods.list(requireAuth(req), custkey, { fresh: wantsOrigin(req) });
      setFreshness(res, freshness);
      res.json({ type: 'list', limit: page.limit, offset: page.offset, data: methods.slice(page.offset, page.offset + page.limit), total: methods.length });
    } catch (err) {
      throw toApiError(err);
    }
  });

  router.patch('/v1/customers/:custkey/payment_methods/:pmkey', deps.authenticate, requireScope('payment_methods:write'), async (req: Request, res: Response) => {
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    const pmkey = parsePathKey(req.params.pmkey, 'pmkey');
    const changes = parseUpdatePaymentMethod(req.body);
    try {
      res.json(await wallet.methods.update(requireAuth(req), custkey, pmkey, changes));
    } catch (err) {
      throw toApiError(err);
    }
  });

  router.delete('/v1/customers/:custkey/payment_methods/:pmkey', deps.authenticate, requireScope('payment_methods:write'), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    const pmkey = parsePathKey(req.params.pmkey, 'pmkey');
    const path = `/v1/customers/${custkey}/payment_methods/${pmkey}`;
    const idempotencyKey = parseOptionalIdempotencyKey(req.get('Idempotency-Key'), `DELETE ${path}`);
    const request = { caller, custkey, pmkey, idempotencyKey, fingerprint: fingerprintRequest('DELETE', path, {}) };
    try {
      send(res, await wallet.removals.removeMethod(request, () => ({ status: 204, body: null, headers: {} }), req.log));
    } catch (err) {
      throw toApiError(err);
    }
  });

  router.get('/v1/customers/:custkey/payment_methods/:pmkey/token', deps.authenticate, requireScope('tokens:read'), async (req: Request, res: Response) => {
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    const pmkey = parsePathKey(req.params.pmkey, 'pmkey');
    assertCustomerAccess(requireAuth(req), custkey);
    try {
      const { token, cacheStatus } = await deps.tokens.get(custkey, pmkey);
      // A token is a credential for charging: no shared cache may keep it.
      res.set('Cache-Status', cacheStatus).set('Cache-Control', 'no-store').json(token);
    } catch (err) {
      throw toApiError(err);
    }
  });

  return router;
}
