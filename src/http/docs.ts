/**
 * `docsRouter()`: the public, unauthenticated documentation, mounted before authentication:
 *   app.use(docsRouter());
 * GET /openapi.json (the same file validation.ts compiles), GET /docs (HTML), /docs/app.js and
 * /docs/style.css (same origin, so helmetOptions' `script-src 'self'` CSP holds).
 */
import { createHash } from 'node:crypto';
import { Router, type Response } from 'express';
import openapi from './openapi.json';
import { DOCS_CSS, DOCS_HTML, DOCS_JS } from './docs-assets';

/**
 * A static asset with a strong ETag computed once: `no-cache` makes browsers revalidate, and express answers
 * 304 when If-None-Match matches (the app turns express's per-response ETag hashing off for the API).
 */
function asset(type: string, body: string): (req: unknown, res: Response) => void {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return (_req, res) => {
    res.set({ 'Cache-Control': 'no-cache', ETag: etag }).type(type).send(body);
  };
}

export function docsRouter(): Router {
  const router = Router();
  router.get('/openapi.json', asset('application/json', JSON.stringify(openapi)));
  router.get('/docs', asset('html', DOCS_HTML));
  router.get('/docs/app.js', asset('application/javascript', DOCS_JS));
  router.get('/docs/style.css', asset('text/css', DOCS_CSS));
  return router;
}
