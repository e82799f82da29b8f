import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { WebhookControlError, type WebhookControl } from './index';

/**
 * `/_sandbox/webhooks/*` (mounted by admin.ts, so loopback clients only): the WebhookControl of index.ts for
 * tests in another process. Release and redeliver answer once each first try has its answer.
 */

function eventIds(body: unknown): string[] | undefined {
  const ids = (body as { event_ids?: unknown } | undefined)?.event_ids;
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) throw new WebhookControlError('event_ids must be an array of event ids');
  return ids as string[];
}

export function webhookAdminRouter(control: WebhookControl): Router {
  const router = express.Router();
  router.get('/', (_req, res) => void res.json({ holding: control.holding(), events: control.events().map(({ raw: _raw, ...e }) => e), attempts: control.attempts() }));
  router.post('/hold', (_req, res) => {
    control.hold();
    res.status(204).end();
  });
  router.post('/release', async (req, res) => void res.json({ attempts: await control.release(eventIds(req.body)) }));
  router.post('/resume', async (_req, res) => void res.json({ attempts: await control.resume() }));
  router.post('/redeliver', async (req, res) => {
    const id = (req.body as { event_id?: unknown } | undefined)?.event_id;
    if (typeof id !== 'string') throw new WebhookControlError('event_id must be a string');
    res.json({ attempts: await control.redeliver(id) });
  });
  // Express 5 passes a rejected handler here; the message is ours, never the input.
  router.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (err instanceof WebhookControlError) res.status(400).json({ error: err.message });
    else next(err);
  });
  return router;
}
