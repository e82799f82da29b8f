import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createAdminRouter } from './admin';
import { createApiHandler } from './api';
import type { SandboxCore } from './core';
import { ERRORS } from './errors';
import { payJsRouter } from './payjs-routes';
import { sendError } from './respond';

/** The emulator's Express app: /ping, the loopback-only admin routes, then the gateway API for everything else. */
export function createSandboxApp(core: SandboxCore): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const api = createApiHandler(core);

  app.use((req, res, next) => {
    const started = Date.now();
    // Method, path and status only: never headers (Authorization) or bodies (card data).
    res.on('close', () => core.logger.http('sandbox request', { method: req.method, path: req.path, status: res.statusCode, ms: Date.now() - started, finished: res.writableFinished }));
    next();
  });
  // Failover health checks want a text body starting "UP" (gateway-facts.md, Hosts).
  app.get('/ping', (_req, res) => void res.type('text/plain').send('UP'));
  app.use('/_sandbox', createAdminRouter(core, (req, res) => void api(req, res)));
  app.use(payJsRouter(core));
  app.use((req, res) => api(req, res));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    core.logger.error('sandbox handler failed', { error: err instanceof Error ? err.message : String(err) });
    if (!res.headersSent) sendError(res, ERRORS.internal);
    else res.destroy();
  });
  return app;
}
