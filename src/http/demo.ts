/**
 * `demoRouter(demo)`: the /demo checkout page (contract, development mode only; compose.ts mounts it only when
 * NODE_ENV=development with the embedded sandbox, so production answers 404):
 *   GET /demo, /demo/app.js, /demo/style.css   plain files of ./demo, no build step
 *   GET /demo/session                          a dev token for the dev customer (development only, loopback)
 * The page's CSP is the app's strict one plus the sandbox origin for Pay.js: its script and its card iframe.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Router, type Request, type Response } from 'express';

export interface DemoOptions {
  /** The dev customer the page acts for. */
  customer: string;
  /** A short-lived dev token bound to that customer, with the scopes the page uses. */
  token(): string;
  /** Where Pay.js and its card form come from (the embedded sandbox). */
  payJsOrigin: string;
}

const DIR = path.join(__dirname, 'demo');

export function demoCsp(payJsOrigin: string): string {
  return [
    "default-src 'none'",
    `script-src 'self' ${payJsOrigin}`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `frame-src ${payJsOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function file(name: string, type: string, csp: string): (req: Request, res: Response) => void {
  const body = readFileSync(path.join(DIR, name), 'utf8');
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return (_req, res) => {
    res.set({ 'Cache-Control': 'no-cache', ETag: etag, 'Content-Security-Policy': csp }).type(type).send(body);
  };
}

export function demoRouter(demo: DemoOptions): Router {
  const router = Router();
  const csp = demoCsp(demo.payJsOrigin);
  router.get('/demo', file('index.html', 'html', csp));
  router.get('/demo/app.js', file('app.js', 'application/javascript', csp));
  router.get('/demo/style.css', file('style.css', 'text/css', csp));
  router.get('/demo/session', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ customer: demo.customer, token: demo.token() });
  });
  return router;
}
