/**
 * `docsRouter({ tryIt })`: the public, unauthenticated documentation, mounted before authentication:
 *   GET /openapi.json                the same file validation.ts compiles
 *   GET /docs                        Swagger UI (swagger-ui-dist, served from node_modules: no network)
 *   GET /docs/swagger-ui-bundle.js, /docs/swagger-ui.css, /docs/init.js
 * Every script is a file of this origin, so helmetOptions' `script-src 'self'` CSP holds unchanged. "Try it
 * out" is enabled in development only (`tryIt`), against this same origin.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Router, type Response } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import openapi from './openapi.json';

/**
 * A static asset with a strong ETag computed once: `no-cache` makes browsers revalidate, and express answers
 * 304 when If-None-Match matches (the app turns express's per-response ETag hashing off for the API).
 */
function asset(type: string, body: string | Buffer): (req: unknown, res: Response) => void {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return (_req, res) => {
    res.set({ 'Cache-Control': 'no-cache', ETag: etag }).type(type).send(body);
  };
}

const OWN = path.join(__dirname, 'docs');

export function docsRouter(options: { tryIt: boolean } = { tryIt: false }): Router {
  const router = Router();
  const dist = getAbsoluteFSPath();
  const html = readFileSync(path.join(OWN, 'index.html'), 'utf8').replace('__TRY_IT__', options.tryIt ? 'true' : 'false');
  router.get('/openapi.json', asset('application/json', JSON.stringify(openapi)));
  router.get('/docs', asset('html', html));
  router.get('/docs/init.js', asset('application/javascript', readFileSync(path.join(OWN, 'init.js'))));
  router.get('/docs/swagger-ui-bundle.js', asset('application/javascript', readFileSync(path.join(dist, 'swagger-ui-bundle.js'))));
  router.get('/docs/swagger-ui.css', asset('text/css', readFileSync(path.join(dist, 'swagger-ui.css'))));
  return router;
}
