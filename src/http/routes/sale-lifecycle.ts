import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Config } from '../../config/types';
import { fingerprintRequest, type StoredResponse, type WriteContext } from '../../idempotency';
import type { FollowUpService, FoundSale } from '../../sales/follow-up-service';
import { fromCents } from '../../gateway/money';
import { factsAfterCapture, factsAfterVoid, factsOfDetail, saleObject } from '../../sales/sale-object';
import type { Attempt, Written, WriteProtocol } from '../../writes';
import { canAccessCustomer, requireAuth, requireScope } from '../auth';
import { NotFound } from '../errors';
import { parseAmountBody, parseEmptyBody, parseIdempotencyKey, parsePathKey } from '../validation';
import type { AuthContext } from '../types';
import { toApiError } from '../write-errors';
import { send } from './sales';

export interface SaleLifecycleRouteDeps {
  config: Config;
  followUps: FollowUpService;
  writes: WriteProtocol;
  authenticate: RequestHandler;
}

const ok = (status: number, body: unknown): Written => ({ response: { status, body, headers: {} } satisfies StoredResponse });

/**
 * `GET /v1/sales/{key}` and the follow-ups (contract: capture, void, refunds). Each route parses, checks that
 * the sale is the caller's (404 exactly like an unknown key otherwise: never trusting the key in the path),
 * runs the use case through the one write protocol, and renders.
 */
export function saleLifecycleRouter(deps: SaleLifecycleRouteDeps): Router {
  const { config, followUps, writes } = deps;
  const router = Router();
  // A follow-up's attempt: its wait for a budget slot and the gateway call (the ownership lookup runs before),
  // after a read of the sale's fields when its record was kept without them (a read's wait and timeout).
  const leaseMs = config.limiter.readMaxWaitMs + config.limiter.saleMaxWaitMs + 2 * config.gateway.timeoutMs + 10_000;

  /** The sale if the caller may act on it; anything else is 404 not_found, with no hint which. */
  async function owned(auth: AuthContext, saleKey: string): Promise<FoundSale> {
    let found: FoundSale | undefined;
    try {
      found = await followUps.find(saleKey);
    } catch (err) {
      throw toApiError(err);
    }
    if (!found || !canAccessCustomer(auth, found.record.customer)) throw new NotFound();
    return found;
  }

  /** Parses the common parts, checks ownership, runs the write once per Idempotency-Key and sends its answer. */
  function followUp(
    path: string,
    scope: string,
    parse: (body: unknown) => { amount?: string; amountCents?: number },
    op: string,
    run: (saleKey: string, found: FoundSale, input: { amount?: string; amountCents?: number }, attempt: Attempt) => Promise<Written>,
  ): void {
    router.post(path, deps.authenticate, requireScope(scope), async (req: Request, res: Response) => {
      const auth = requireAuth(req);
      const saleKey = parsePathKey(req.params.key, 'key');
      const key = parseIdempotencyKey(req.get('Idempotency-Key'));
      const input = parse(req.body);
      const found = await owned(auth, saleKey);
      const context: WriteContext = { op, customer: found.record.customer, sale: saleKey };
      if (input.amount !== undefined) context.amount = input.amount;
      const spec = { scope: auth.sub, key, fingerprint: fingerprintRequest('POST', `/v1/sales/${saleKey}/${op === 'refund' ? 'refunds' : op}`, req.body ?? {}), context, leaseMs };
      try {
        const result = await writes.execute(spec, (attempt) => run(saleKey, found, input, attempt), req.log);
        send(res, result.response, result.replayed);
      } catch (err) {
        throw toApiError(err);
      }
    });
  }

  router.get('/v1/sales/:key', deps.authenticate, requireScope('sales:read'), async (req: Request, res: Response) => {
    const auth = requireAuth(req);
    const saleKey = parsePathKey(req.params.key, 'key');
    const found = await owned(auth, saleKey);
    try {
      const detail = await followUps.lookup(saleKey, found);
      res.json(saleObject(factsOfDetail(detail, { customer: found.record.customer, fields: found.record.fields })));
    } catch (err) {
      throw toApiError(err);
    }
  });

  followUp('/v1/sales/:key/capture', 'sales:capture', (b) => parseAmountBody(b, 'capture'), 'capture', async (saleKey, found, input, attempt) => {
    const r = await followUps.capture(saleKey, found, input.amountCents, attempt.reference);
    return ok(200, saleObject(factsAfterCapture(saleKey, { customer: found.record.customer, fields: r.fields }, r.transaction, r.amountCents)));
  });

  followUp('/v1/sales/:key/void', 'sales:void', (b) => (parseEmptyBody(b), {}), 'void', async (saleKey, found) => {
    const r = await followUps.void(saleKey, found);
    return ok(200, saleObject(factsAfterVoid(saleKey, { customer: found.record.customer, fields: r.fields }, r.transaction)));
  });

  followUp('/v1/sales/:key/refunds', 'refunds:create', (b) => parseAmountBody(b, 'refund'), 'refund', async (saleKey, _found, input, attempt) => {
    const r = await followUps.refund(saleKey, input.amountCents, attempt.reference);
    const tx = r.transaction;
    return ok(201, {
      type: 'refund', key: tx.key, refnum: tx.refnum, sale: saleKey, amount: fromCents(r.amountCents), result_code: tx.result_code, result: tx.result, method: r.method,
    });
  });

  return router;
}
