/**
 * `docsRouter({ tryIt })`: the public, unauthenticated documentation, mounted before authentication:
 *   GET /openapi.json                the same file validation.ts compiles
 *   GET /docs                        Swagger UI (swagger-ui-dist, served from node_modules: no network)
 *   GET /docs/swagger-ui-bundle.js, /docs/swagger-ui.css, /docs/init.js
 * Every script is a file of this origin, so helmetOptions' `script-src 'self'` CSP holds unchanged. "Try it
 * out" is enabled in development only (`tryIt`), against this same origin.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Router } from 'express';
// Not the package's index: that one evaluates the 1.4 MB browser bundle in Node (+10 MB heap, ~0.25 s startup).
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';
import openapi from './openapi.json';
import { staticAsset as asset } from './static-asset';

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
