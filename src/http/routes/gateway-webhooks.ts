import express, { Router, type Request, type Response } from 'express';
import type { GatewayWebhookIntake } from '../../webhooks';
import { InvalidRequest, Unauthenticated } from '../errors';

export interface GatewayWebhookRouteDeps {
  intake: GatewayWebhookIntake;
  bodyLimitBytes: number;
}

/**
 * `POST /v1/webhooks/gateway`: the gateway's signed webhooks (no JWT). Mounted before the JSON body parser and
 * the card guard: the signature is over the raw bytes, and a body whose signature fails is never parsed or
 * logged (src/webhooks/intake.ts). 204 for every event received (applied, a redelivery, or about nothing
 * tokengate knows); 401 for a missing, malformed or wrong signature, all alike.
 */
export function gatewayWebhooksRouter(deps: GatewayWebhookRouteDeps): Router {
  const router = Router();
  const raw = express.raw({ type: () => true, limit: deps.bodyLimitBytes, inflate: false });
  router.post('/v1/webhooks/gateway', raw, async (req: Request, res: Response) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const result = await deps.intake.receive(body, req.get('X-Signature'), req.log);
    if (result.kind === 'refused') throw new Unauthenticated();
    if (result.kind === 'invalid') throw new InvalidRequest([{ path: 'body', rule: 'gateway_event' }]);
    res.status(204).end();
  });
  return router;
}
