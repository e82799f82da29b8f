/**
 * `docsRouter()`: the public, unauthenticated documentation, mounted before authentication:
 *   app.use(docsRouter());
 * GET /openapi.json (the same file validation.ts compiles), GET /docs (HTML), /docs/app.js and
 * /docs/style.css (same origin, so helmetOptions' `script-src 'self'` CSP holds).
 */
import { Router } from 'express';
import openapi from './openapi.json';
import { DOCS_CSS, DOCS_HTML, DOCS_JS } from './docs-assets';

export function docsRouter(): Router {
  const router = Router();
  const spec = JSON.stringify(openapi);
  router.get('/openapi.json', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('application/json').send(spec);
  });
  router.get('/docs', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('html').send(DOCS_HTML);
  });
  router.get('/docs/app.js', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('application/javascript').send(DOCS_JS);
  });
  router.get('/docs/style.css', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('text/css').send(DOCS_CSS);
  });
  return router;
}
