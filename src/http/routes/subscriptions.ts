import { Router, type Request, type RequestHandler, type Response } from 'express';
import { fingerprintRequest } from '../../idempotency';
import { subscriptionObject, type SubscriptionService } from '../../subscriptions';
import { requireAuth, requireScope } from '../auth';
import { send } from '../send';
import { parseCancelSubscription, parseCreateSubscription, parseUpdateSubscription } from '../subscription-validation';
import { parseIdempotencyKey, parsePathKey } from '../validation';
import { toApiError } from '../write-errors';
import { renderSale } from '../render-sale';

export interface SubscriptionRouteDeps {
  subscriptions: SubscriptionService;
  authenticate: RequestHandler;
}

/** Each route parses, authorizes (scope here, the customer in the use case: 404 with no hint), calls one use case, renders. */
export function subscriptionsRouter(deps: SubscriptionRouteDeps): Router {
  const { subscriptions } = deps;
  const router = Router();
  const fail = (err: unknown) => toApiError(err);

  router.post('/v1/customers/:custkey/subscriptions', deps.authenticate, requireScope('subscriptions:write'), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    const idempotencyKey = parseIdempotencyKey(req.get('Idempotency-Key'));
    const input = parseCreateSubscription(req.body);
    const fingerprint = fingerprintRequest('POST', `/v1/customers/${custkey}/subscriptions`, req.body);
    try {
      const created = await subscriptions.create({ caller, custkey, idempotencyKey, fingerprint, input }, (outcome, facts) => renderSale(outcome, facts, req.id), req.log);
      // A declined first charge: its 402 (or 502) as a sale's, and no subscription.
      if ('declined' in created) return send(res, created.declined);
      const body = { ...subscriptionObject(created.record), ...(created.sale ? { latest_sale: created.sale.response.body } : {}) };
      send(res, { response: { status: 201, body, headers: {} }, replayed: created.replayed });
    } catch (err) {
      throw fail(err);
    }
  });

  router.get('/v1/customers/:custkey/subscriptions', deps.authenticate, requireScope('subscriptions:read'), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    try {
      res.json({ type: 'list', data: (await subscriptions.list(caller, custkey)).map(subscriptionObject) });
    } catch (err) {
      throw fail(err);
    }
  });

  router.get('/v1/subscriptions/:key', deps.authenticate, requireScope('subscriptions:read'), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const key = parsePathKey(req.params.key);
    try {
      res.json(subscriptionObject(await subscriptions.get(caller, key)));
    } catch (err) {
      throw fail(err);
    }
  });

  router.patch('/v1/subscriptions/:key', deps.authenticate, requireScope('subscriptions:write'), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const key = parsePathKey(req.params.key);
    const input = parseUpdateSubscription(req.body);
    try {
      res.json(subscriptionObject(await subscriptions.update(caller, key, input)));
    } catch (err) {
      throw fail(err);
    }
  });

  router.post('/v1/subscriptions/:key/cancel', deps.authenticate, requireScope('subscriptions:write'), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const key = parsePathKey(req.params.key);
    const { atPeriodEnd } = parseCancelSubscription(req.body);
    try {
      res.json(subscriptionObject(await subscriptions.cancel(caller, key, atPeriodEnd)));
    } catch (err) {
      throw fail(err);
    }
  });
  return router;
}
