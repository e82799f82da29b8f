import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { GatewayClient } from '../../gateway/client';
import { fingerprintRequest } from '../../idempotency';
import type { Budget } from '../../tokens/token-service';
import type { Wallet } from '../../wallet';
import { requireAnyCustomer, requireAuth, requireScope } from '../auth';
import { setFreshness, wantsOrigin } from '../freshness';
import { send } from '../send';
import { parseCreateCustomer, parseIdempotencyKey, parseListQuery, parseOptionalIdempotencyKey, parsePathKey, parseUpdateCustomer } from '../validation';
import { toApiError } from '../write-errors';

export interface CustomerRouteDeps {
  gateway: GatewayClient;
  budget: Budget;
  wallet: Pick<Wallet, 'customers' | 'removals'>;
  authenticate: RequestHandler;
}

const ok = (status: number, body: unknown) => ({ status, body, headers: {} });

/**
 * Customers (contract: `GET/POST /v1/customers`, `GET/PATCH/DELETE /v1/customers/{custkey}`): each route parses,
 * authorizes, calls one use case (src/wallet) and renders.
 */
export function customersRouter(deps: CustomerRouteDeps): Router {
  const { gateway, budget, wallet } = deps;
  const router = Router();

  router.get('/v1/customers', deps.authenticate, requireScope('customers:read'), requireAnyCustomer(), async (req: Request, res: Response) => {
    const page = parseListQuery(req.query);
    const result = await budget.run('read', () => gateway.listCustomers(page));
    res.json(result.value);
  });

  router.post('/v1/customers', deps.authenticate, requireScope('customers:write'), requireAnyCustomer(), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const idempotencyKey = parseIdempotencyKey(req.get('Idempotency-Key'));
    const fields = parseCreateCustomer(req.body);
    const fingerprint = fingerprintRequest('POST', '/v1/customers', req.body);
    try {
      send(res, await wallet.customers.create({ caller, idempotencyKey, fingerprint, fields }, (customer) => ok(201, customer), req.log));
    } catch (err) {
      throw toApiError(err);
    }
  });

  router.get('/v1/customers/:custkey', deps.authenticate, requireScope('customers:read'), async (req: Request, res: Response) => {
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    try {
      const { customer, freshness } = await wallet.customers.get(requireAuth(req), custkey, { fresh: wantsOrigin(req) });
      setFreshness(res, freshness);
      res.json(customer);
    } catch (err) {
      throw toApiError(err);
    }
  });

  router.patch('/v1/customers/:custkey', deps.authenticate, requireScope('customers:write'), async (req: Request, res: Response) => {
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    const fields = parseUpdateCustomer(req.body);
    try {
      res.json(await wallet.customers.update(requireAuth(req), custkey, fields));
    } catch (err) {
      throw toApiError(err);
    }
  });

  router.delete('/v1/customers/:custkey', deps.authenticate, requireScope('customers:write'), requireAnyCustomer(), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    const path = `/v1/customers/${custkey}`;
    const idempotencyKey = parseOptionalIdempotencyKey(req.get('Idempotency-Key'), `DELETE ${path}`);
    try {
      send(res, await wallet.removals.removeCustomer({ caller, custkey, idempotencyKey, fingerprint: fingerprintRequest('DELETE', path, {}) }, () => ok(204, null), req.log));
    } catch (err) {
      throw toApiError(err);
    }
  });

  return router;
}
