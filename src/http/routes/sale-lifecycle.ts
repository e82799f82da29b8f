import { Router, type Request, type RequestHandler, type Response } from 'express';
import { fromCents } from '../../gateway/money';
import { fingerprintRequest, type StoredResponse } from '../../idempotency';
import type { FollowUpRequest, FollowUpRender, SaleActions } from '../../sales/sale-actions';
import type { SaleLookup } from '../../sales/sale-lookup';
import { factsAfterCapture, factsAfterVoid, saleObject } from '../../sales/sale-object';
import { requireAuth, requireScope } from '../auth';
import { setFreshness, wantsOrigin } from '../freshness';
import { send } from '../send';
import { parseAmountBody, parseEmptyBody, parseIdempotencyKey, parsePathKey } from '../validation';
import { toApiError } from '../write-errors';
import type { Scope } from '../scopes';

export interface SaleLifecycleRouteDeps {
  lookup: SaleLookup;
  actions: SaleActions;
  authenticate: RequestHandler;
}

const ok = (status: number, body: unknown): StoredResponse => ({ status, body, headers: {} });

/** The answers of captures, voids and refunds (stored for replays): the sale, or the refund object. */
const render: FollowUpRender = {
  capture: (saleKey, found, r) => ok(200, saleObject(factsAfterCapture(saleKey, { customer: found.record.customer, fields: r.fields }, r.transaction, r.amountCents))),
  void: (saleKey, found, r) => ok(200, saleObject(factsAfterVoid(saleKey, { customer: found.record.customer, fields: r.fields }, r.transaction))),
  refund: (saleKey, r) => ok(201, {
    type: 'refund', key: r.transaction.key, refnum: r.transaction.refnum, sale: saleKey, amount: fromCents(r.amountCents),
    result_code: r.transaction.result_code, result: r.transaction.result, method: r.method,
  }),
};

/**
 * `GET /v1/sales/{key}` (tokengate's view, guarantee 9) and the follow-ups (capture, void, refunds): each route
 * parses, calls one use case (src/sales/sale-lookup.ts, sale-actions.ts) and renders.
 */
export function saleLifecycleRouter(deps: SaleLifecycleRouteDeps): Router {
  const { lookup, actions } = deps;
  const router = Router();

  function followUp(path: string, scope: Scope, op: 'capture' | 'void' | 'refund', parse: (body: unknown) => { amount?: string; amountCents?: number }): void {
    router.post(path, deps.authenticate, requireScope(scope), async (req: Request, res: Response) => {
      const caller = requireAuth(req);
      const saleKey = parsePathKey(req.params.key, 'key');
      const idempotencyKey = parseIdempotencyKey(req.get('Idempotency-Key'));
      const body = parse(req.body);
      const request: FollowUpRequest = {
        caller, saleKey, idempotencyKey,
        fingerprint: fingerprintRequest('POST', `/v1/sales/${saleKey}/${op === 'refund' ? 'refunds' : op}`, req.body ?? {}),
        ...(body.amount !== undefined && body.amountCents !== undefined ? { amount: { text: body.amount, cents: body.amountCents } } : {}),
      };
      try {
        send(res, await (op === 'capture' ? actions.capture(request, render.capture, req.log) : op === 'void' ? actions.void(request, render.void, req.log) : actions.refund(request, render.refund, req.log)));
      } catch (err) {
        throw toApiError(err);
      }
    });
  }

  router.get('/v1/sales/:key', deps.authenticate, requireScope('sales:read'), async (req: Request, res: Response) => {
    const caller = requireAuth(req);
    const saleKey = parsePathKey(req.params.key, 'key');
    try {
      const { facts, freshness } = await lookup.read(caller, saleKey, { fresh: wantsOrigin(req) });
      setFreshness(res, freshness);
      res.json(saleObject(facts));
    } catch (err) {
      throw toApiError(err);
    }
  });

  followUp('/v1/sales/:key/capture', 'sales:capture', 'capture', (b) => parseAmountBody(b, 'capture'));
  followUp('/v1/sales/:key/void', 'sales:void', 'void', (b) => (parseEmptyBody(b), {}));
  followUp('/v1/sales/:key/refunds', 'refunds:create', 'refund', (b) => parseAmountBody(b, 'refund'));

  return router;
}
