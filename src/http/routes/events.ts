import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { EventLog } from '../../events';
import { requireAnyCustomer, requireScope } from '../auth';
import { parseEventsQuery } from '../validation';

export interface EventsRouteDeps {
  log: EventLog;
  authenticate: RequestHandler;
}

/**
 * `GET /v1/events?after=&limit=` (`events:read`, internal services: every customer's money, so only a token that
 * acts for any customer): the payment event log in order, oldest first after the event `after`, for a service
 * that catches up or replays. `has_more` says a next page exists (ask again with the last id as `after`).
 */
export function eventsRouter(deps: EventsRouteDeps): Router {
  const router = Router();
  router.get('/v1/events', deps.authenticate, requireScope('events:read'), requireAnyCustomer(), async (req: Request, res: Response) => {
    const { after, limit } = parseEventsQuery(req.query);
    const page = await deps.log.list(after, limit + 1);
    res.json({ type: 'list', limit, data: page.slice(0, limit), has_more: page.length > limit });
  });
  return router;
}
