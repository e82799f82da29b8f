import express, { type Express } from 'express';
import type { Metrics } from '../../observability/metrics';

export interface Readiness {
  /** True once SIGTERM arrived: the load balancer must stop sending traffic. */
  draining(): boolean;
  /** Dependencies that must answer for the replica to take traffic (Redis). Resolves to problems, empty when ready. */
  check(): Promise<string[]>;
}

/** The admin port: liveness, readiness and Prometheus metrics; never exposed through the Ingress. */
export function createAdminApp(deps: { metrics: Metrics; readiness: Readiness }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const problems = deps.readiness.draining() ? ['draining'] : await deps.readiness.check().catch(() => ['check_failed']);
    res.status(problems.length === 0 ? 200 : 503).json({ status: problems.length === 0 ? 'ready' : 'not_ready', problems });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
  app.use((_req, res) => {
    res.status(404).json({ error: { code: 'not_found', message: 'Not found.' } });
  });
  return app;
}
