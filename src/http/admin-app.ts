import express, { type Express } from 'express';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { errorHandler, notFoundHandler } from './error-handler';
import { requestId } from './request-id';
import type { HandSettler } from '../reconcile/settle-by-hand';
import { adminOutcomesRouter } from './routes/admin-outcomes';
import type { Clock } from '../subscriptions';
import { CLOCK_ADMIN, parseAdvanceMs } from './clock-advance';

/**
 * Readiness says whether THIS replica can serve: it booted (the admin port listens only after the service is
 * built) and it is not draining. A dependency every replica shares (Redis) is reported in `degraded` but does
 * not fail readiness: a Redis outage would otherwise take every replica out of the Service at once, and the
 * reads that keep working without Redis (contract guarantee 5) would become unreachable. docs/deploy.md.
 */
export interface Readiness {
  /** True once SIGTERM arrived: the load balancer must stop sending traffic. */
  draining(): boolean;
  /** Shared dependencies that are down right now (e.g. `redis`): informational, the replica stays ready. */
  degraded(): string[];
}

/** The admin port: liveness, readiness, Prometheus metrics and the operator's settle action; never exposed through the Ingress. */
export function createAdminApp(deps: { metrics: Metrics; readiness: Readiness; logger: Logger; clock?: Clock; outcomes?: { settler: HandSettler; authenticate: express.RequestHandler } }): Express {
  const app = express();
  app.disable('x-powered-by');
  // Like the public port (contract: every response carries X-Request-Id; errors share one envelope).
  app.use(requestId(deps.logger));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const degraded = deps.readiness.degraded();
    if (deps.readiness.draining()) res.status(503).json({ status: 'not_ready', problems: ['draining'], degraded });
    else res.json({ status: 'ready', problems: [], degraded });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
  // An operator settles an unknown outcome the gateway's records cannot decide (issue 42; a JWT, admin-outcomes.ts).
  if (deps.outcomes) app.use(adminOutcomesRouter(deps.outcomes));
  // tokengate's clock (contract, "Subscriptions"): moved forward for every replica sharing the Redis, outside
  // production only (there the clock cannot move and these routes do not exist: 404).
  const clock = deps.clock;
  if (clock?.movable) {
    app.get('/test/clock', async (_req, res) => {
      res.json({ now: new Date(await clock.now()).toISOString() });
    });
    app.post('/test/clock', express.json({ limit: '1kb' }), async (req, res) => {
      res.json({ now: new Date(await clock.advance(parseAdvanceMs(req.body, CLOCK_ADMIN))).toISOString() });
    });
  }
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
