import express, { type RequestHandler, type Router } from 'express';
import { HandSettleError, type HandSettler } from '../../reconcile/settle-by-hand';
import { requireAuth, requireScope } from '../auth';
import { cardGuard } from '../card-guard';

/**
 * The operator's way to settle an unknown outcome the gateway's records cannot decide (issue 42, contract
 * guarantee 6; docs/runbooks/TokengateUnknownOutcomePastDeadline.md), on the admin port only:
 *   GET  /unknown-outcomes          the open ones, oldest first (caller, Idempotency-Key, since when)
 *   POST /unknown-outcomes/settle   {caller, idempotency_key, outcome: found|absent, transaction?, reason}
 * Moving a key out of `outcome_unknown` decides whether money moved, so reaching the admin port is not enough:
 * the caller needs a JWT (the public port's verifier) with the scope `outcomes:settle` and bound to no customer
 * (an operator, not a shopper's app). Its `sub` is who decided, logged and kept with the decision.
 */
export const SETTLE_SCOPE = 'outcomes:settle';

const KEY = /^[\x21-\x7e]{1,255}$/;

interface SettleBody {
  caller: string;
  idempotency_key: string;
  outcome: 'found' | 'absent';
  transaction?: string;
  reason: string;
}

/** The body, or the names of the fields that are wrong (never their values). */
function parse(body: unknown): SettleBody | string[] {
  const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const wrong: string[] = [];
  const known = new Set(['caller', 'idempotency_key', 'outcome', 'transaction', 'reason']);
  for (const k of Object.keys(b)) if (!known.has(k)) wrong.push(k);
  if (typeof b.caller !== 'string' || b.caller.length === 0 || b.caller.length > 255) wrong.push('caller');
  if (typeof b.idempotency_key !== 'string' || !KEY.test(b.idempotency_key)) wrong.push('idempotency_key');
  if (b.outcome !== 'found' && b.outcome !== 'absent') wrong.push('outcome');
  if (b.transaction !== undefined && (typeof b.transaction !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(b.transaction))) wrong.push('transaction');
  if (typeof b.reason !== 'string' || b.reason.trim().length === 0 || b.reason.length > 500) wrong.push('reason');
  return wrong.length > 0 ? wrong : (b as unknown as SettleBody);
}

const REFUSED = {
  not_unknown: 'No outcome is unknown under that caller and key.',
  too_early: 'The write may still be processed: absence cannot be decided yet.',
  taken_over: 'A retry took the key over meanwhile; look again.',
} as const;

const fail = (res: express.Response, status: number, code: string, message: string, requestId: string, details?: unknown) =>
  res.status(status).json({ error: { code, message, request_id: requestId, ...(details ? { details } : {}) } });

export function adminOutcomesRouter(deps: { settler: HandSettler; authenticate: RequestHandler }): Router {
  const router = express.Router();
  const operator: RequestHandler = (req, res, next) => {
    if (requireAuth(req).custkey !== undefined) return fail(res, 403, 'forbidden', 'An operator\'s token is bound to no customer.', req.id);
    next();
  };
  const guard = [deps.authenticate, requireScope(SETTLE_SCOPE), operator];

  router.get('/unknown-outcomes', ...guard, async (req, res, next) => {
    try {
      res.json({ type: 'list', data: await deps.settler.open(100) });
    } catch (err) {
      next(err);
    }
  });

  router.post('/unknown-outcomes/settle', ...guard, express.json({ limit: '4kb' }), cardGuard(), async (req, res, next) => {
    const body = parse(req.body);
    if (Array.isArray(body)) return fail(res, 400, 'invalid_request', 'The request is invalid.', req.id, body.map((field) => ({ field })));
    const by = requireAuth(req).sub;
    try {
      const outcome = await deps.settler.settle(
        { scope: body.caller, key: body.idempotency_key },
        { by, outcome: body.outcome, reason: body.reason, ...(body.transaction ? { transaction: body.transaction } : {}) },
      );
      if (outcome.result !== 'settled') return fail(res, 409, outcome.result, REFUSED[outcome.result], req.id);
      res.json({ result: 'settled', operation: outcome.operation, outcome: body.outcome, decided_by: by, ...(outcome.response ? { replays: outcome.response.status } : {}) });
    } catch (err) {
      if (err instanceof HandSettleError) return fail(res, 422, err.code, err.message, req.id);
      next(err);
    }
  });
  return router;
}
