/**
 * `docsRouter({ tryIt })`: the public, unauthenticated documentation, mounted before authentication:
 *   GET /openapi.json                the same file validation.ts compiles
 *   GET /docs                        Swagger UI (swagger-ui-dist, served from node_modules: no network)
 *   GET /docs/swagger-ui-bundle.js, /docs/swagger-ui.css, /docs/init.js
 *   GET /                            where to start: /docs, /openapi.json, and /demo where it exists (issue 41:
 *                                    a bare 404 left a newcomer with nowhere to go)
 * Every script is a file of this origin, so helmetOptions' `script-src 'self'` CSP holds unchanged. "Try it
 * out" is enabled in development only (`tryIt`), against this same origin.
 * The router is mounted ahead of the app's cardGuard, so each route runs the guard itself (card data in the
 * query, path or headers is 422 here too, contract's card_data_forbidden row); a GET has no body to scan.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Router } from 'express';
// Not the package's index: that one evaluates the 1.4 MB browser bundle in Node (+10 MB heap, ~0.25 s startup).
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';
import { cardGuard } from './card-guard';
import openapi from './openapi.json';
import { staticAsset as asset } from './static-asset';

const OWN = path.join(__dirname, 'docs');

/** `GET /`'s answer: the API's own pages, by path on this origin. */
export function rootIndex(demo: boolean): Record<string, unknown> {
  return {
    name: 'tokengate',
    description: 'A payment backend-for-frontend: call /v1/… with a JWT (Authorization: Bearer …).',
    links: { docs: '/docs', openapi: '/openapi.json', ...(demo ? { demo: '/demo' } : {}) },
  };
}

export function docsRouter(options: { tryIt: boolean; demo?: boolean } = { tryIt: false }): Router {
  const router = Router();
  const dist = getAbsoluteFSPath();
  const html = readFileSync(path.join(OWN, 'index.html'), 'utf8').replace('__TRY_IT__', options.tryIt ? 'true' : 'false');
  const guard = cardGuard();
  router.get('/', guard, asset('application/json', JSON.stringify(rootIndex(options.demo === true))));
  router.get('/openapi.json', guard, asset('application/json', JSON.stringify(openapi)));
  router.get('/docs', guard, asset('html', html));
  router.get('/docs/init.js', guard, asset('application/javascript', readFileSync(path.join(OWN, 'init.js'))));
  router.get('/docs/swagger-ui-bundle.js', guard, asset('application/javascript', readFileSync(path.join(dist, 'swagger-ui-bundle.js'))));
  router.get('/docs/swagger-ui.css', guard, asset('text/css', readFileSync(path.join(dist, 'swagger-ui.css'))));
  return router;
}
