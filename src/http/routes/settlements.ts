import { Router, type Request, type RequestHandler, type Response } from 'express';
import { settlementsCsv, type SettlementStore } from '../../settlements';
import { requireAnyCustomer, requireScope } from '../auth';
import { NotFound } from '../errors';
import { parseBatchKey, parseSettlementsQuery } from '../settlement-validation';

export interface SettlementsRouteDeps {
  store: Pick<SettlementStore, 'get' | 'list'>;
  authenticate: RequestHandler;
}

/**
 * `GET /v1/settlements` and `GET /v1/settlements/{batch}` (`settlements:read` + `customers:any`: every
 * customer's money): the settlements tokengate keeps, answered from Redis with no gateway call. A batch not
 * kept (open, not read yet, or not the merchant's) is the same 404.
 */
export function settlementsRouter(deps: SettlementsRouteDeps): Router {
  const router = Router();
  const guard = [deps.authenticate, requireScope('settlements:read'), requireAnyCustomer()];
  router.get('/v1/settlements', ...guard, async (req: Request, res: Response) => {
    const { after, limit } = parseSettlementsQuery(req.query);
    const page = await deps.store.list(after, limit + 1);
    res.json({ type: 'list', limit, data: page.slice(0, limit), has_more: page.length > limit });
  });
  router.get('/v1/settlements/:batch', ...guard, async (req: Request, res: Response) => {
    const settlement = await deps.store.get(parseBatchKey(req.params.batch));
    if (!settlement) throw new NotFound();
    res.vary('Accept');
    if (req.accepts(['application/json', 'text/csv']) === 'text/csv') res.type('text/csv; charset=utf-8').send(settlementsCsv(settlement));
    else res.json(settlement);
  });
  return router;
}
