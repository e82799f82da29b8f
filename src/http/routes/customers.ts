import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { GatewayClient } from '../../gateway/client';
import type { Budget, TokenService } from '../../tokens/token-service';
import { assertCustomerAccess, requireAnyCustomer, requireAuth, requireScope } from '../auth';
import { parseListQuery, parsePathKey } from '../validation';

export interface CustomerRouteDeps {
  gateway: GatewayClient;
  budget: Budget;
  tokens: TokenService;
  authenticate: RequestHandler;
}

/** Reads: customers (internal services), a customer's payment methods (masked), a payment method's token. */
export function customersRouter(deps: CustomerRouteDeps): Router {
  const { gateway, budget, tokens } = deps;
  const router = Router();

  router.get('/v1/customers', deps.authenticate, requireScope('customers:read'), requireAnyCustomer(), async (req: Request, res: Response) => {
    const page = parseListQuery(req.query);
    const result = await budget.run('read', () => gateway.listCustomers(page));
    res.json(result.value);
  });

  router.get('/v1/customers/:custkey/payment_methods', deps.authenticate, requireScope('payment_methods:read'), async (req: Request, res: Response) => {
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    assertCustomerAccess(requireAuth(req), custkey);
    const page = parseListQuery(req.query);
    const result = await budget.run('read', () => gateway.listPaymentMethods(custkey, page));
    res.json(result.value);
  });

  router.get('/v1/customers/:custkey/payment_methods/:pmkey/token', deps.authenticate, requireScope('tokens:read'), async (req: Request, res: Response) => {
    const custkey = parsePathKey(req.params.custkey, 'custkey');
    const pmkey = parsePathKey(req.params.pmkey, 'pmkey');
    assertCustomerAccess(requireAuth(req), custkey);
    const { token, cacheStatus } = await tokens.get(custkey, pmkey);
    // A token is a credential for charging: no shared cache may keep it.
    res.set('Cache-Status', cacheStatus).set('Cache-Control', 'no-store').json(token);
  });

  return router;
}
