/**
 * `demoRouter(demo)`: the /demo checkout page (contract, development mode only; compose.ts mounts it only when
 * NODE_ENV=development with the embedded sandbox, so production answers 404):
 *   GET /demo, /demo/{page,wallet,bank,app}.js, plain files of ./demo, no build step
 *       /demo/style.css, /demo/favicon.svg
 *   GET /demo/session                          the shopper's dev token for the dev customer, 1 h, the page's
 *                                              scopes only: never refunds:create (contract: internal services)
 *   GET /demo/back-office/session              a 5-minute back-office token (its own sub, refunds:create) for
 *                                              the page's refund button, which stands in for the merchant's
 *                                              server; asked for at each refund, never kept by the page
 *   GET, POST /demo/clock {"advance_ms": N}    tokengate's clock, read and moved forward (the subscriptions
 *                                              panel): the page's server side calls the same clock the admin
 *                                              port's /test/clock moves (the embedded sandbox's follows it),
 *                                              so the page needs no admin port; see below for why it is open
 * The page's CSP is the app's strict one (helmetOptions) plus the sandbox origin in script-src (pay.js) and
 * frame-src (its card iframe); nothing else differs. The page never reaches the sandbox itself (connect-src
 * stays 'self'): the card goes from the iframe, on the sandbox's origin, to the sandbox.
 * The sessions hand out tokens to whoever asks: acceptable only because this router exists only in
 * development with the embedded sandbox, whose JWT secret is the printed dev default (anyone who can reach
 * the port can mint the same token) and whose customers and cards are the sandbox's test fixtures.
 * The clock route is as open as the sessions and for the same reason: it exists only where this router does,
 * where the admin port's /test/clock (unauthenticated, contract) moves the same clock; a page on another origin
 * cannot call it (a JSON body needs a CORS preflight, which tokengate never grants). It moves only forward.
 * Mounted ahead of the app's cardGuard, like the docs: each route runs the guard itself (docs.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { Router } from 'express';
import { cardGuard } from './card-guard';
import { CLOCK_DEMO, parseAdvanceMs } from './clock-advance';
import { helmetOptions } from './security';
import { staticAsset } from './static-asset';

export interface DemoOptions {
  /** The dev customer the page acts for. */
  customer: string;
  /** A short-lived dev token bound to that customer, with the scopes a shopper's page uses (no refunds). */
  token(): string;
  /** A shorter-lived back-office token with refunds:create, for the page's refund button only. */
  backOfficeToken(): string;
  /** Where Pay.js and its card form come from (the embedded sandbox). */
  payJsOrigin: string;
  /** tokengate's clock as the admin port's /test/clock moves it (the subscriptions panel moves time with it). */
  clock: { now(): Promise<number>; advance(ms: number): Promise<number> };
}

const DIR = path.join(__dirname, 'demo');

/** helmetOptions' CSP directives, serialised as helmet does, with `extra` sources appended per directive. */
export function demoCsp(payJsOrigin: string): string {
  const csp = helmetOptions.contentSecurityPolicy;
  const directives = typeof csp === 'object' && csp.directives ? csp.directives : {};
  const extra: Record<string, string[]> = { 'script-src': [payJsOrigin], 'frame-src': [payJsOrigin] };
  const names = [...new Set([...Object.keys(directives), ...Object.keys(extra)])];
  return names
    .map((name) => {
      const base = directives[name];
      const sources = [...(Array.isArray(base) ? base.map(String) : []), ...(extra[name] ?? [])];
      return `${name} ${sources.join(' ')}`;
    })
    .join('; ');
}

/** A file of ./demo, served with the page's CSP. */
function file(name: string, type: string, csp: string): ReturnType<typeof staticAsset> {
  return staticAsset(type, readFileSync(path.join(DIR, name), 'utf8'), { 'Content-Security-Policy': csp });
}

export function demoRouter(demo: DemoOptions): Router {
  const router = Router();
  const csp = demoCsp(demo.payJsOrigin);
  const guard = cardGuard();
  router.get('/demo', guard, file('index.html', 'html', csp));
  for (const script of ['page.js', 'wallet.js', 'subscriptions.js', 'app.js']) router.get(`/demo/${script}`, guard, file(script, 'application/javascript', csp));
  router.get('/demo/style.css', guard, file('style.css', 'text/css', csp));
  router.get('/demo/favicon.svg', guard, file('favicon.svg', 'image/svg+xml', csp));
  router.get('/demo/bank.js', guard, file('bank.js', 'application/javascript', csp));
  router.get('/demo/session', guard, (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ customer: demo.customer, token: demo.token() });
  });
  router.get('/demo/back-office/session', guard, (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ token: demo.backOfficeToken() });
  });
  router.get('/demo/clock', guard, async (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ now: new Date(await demo.clock.now()).toISOString() });
  });
  router.post('/demo/clock', guard, express.json({ limit: '1kb' }), async (req, res) => {
    res.set('Cache-Control', 'no-store').json({ now: new Date(await demo.clock.advance(parseAdvanceMs(req.body, CLOCK_DEMO))).toISOString() });
  });
  return router;
}
