import http from 'node:http';
import type { Express, Request, Response } from 'express';

/**
 * The public port's timeouts (main.ts; the in-process test service uses the same): an idle keep-alive socket lives
 * 65 s, not Node's default 5 s, so a client reusing one seldom meets the server closing it (a request written as
 * the close arrives is reset: ECONNRESET).
 */
export const API_SERVER_OPTIONS: Readonly<http.ServerOptions> = { keepAliveTimeout: 65_000, headersTimeout: 66_000, requestTimeout: 120_000 };

/**
 * The HTTP server for an Express app, its requests and responses created with the app's prototypes.
 *
 * Express's app.handle() sets every request's and response's prototype to app.request / app.response, on Node's
 * freshly made objects. Changing an object's prototype after it is made is slow in V8 (expressjs/express#5998)
 * and, measured here, kept each request's objects alive past two scavenges, so they were promoted and died in
 * mark-compacts: a bare Express app cost 2.2x the CPU per request of the same app served by this server, and
 * tokengate's sales ~14 KB of promoted heap each. Born with the app's prototypes, Express's call changes
 * nothing (V8 returns at once when the prototype is already the one asked for). Everything Express and the
 * middleware read on req and res is unchanged: same prototype chain, same `app`.
 *
 * One server per app: app.request / app.response are replaced by the new classes' prototypes.
 */
export function createAppServer(app: Express, options: http.ServerOptions = {}): http.Server {
  class AppRequest extends http.IncomingMessage {}
  class AppResponse extends http.ServerResponse<AppRequest> {}
  adopt(AppRequest.prototype, app.request);
  adopt(AppResponse.prototype, app.response);
  app.request = AppRequest.prototype as unknown as Request;
  app.response = AppResponse.prototype as unknown as Response;
  return http.createServer({ ...options, IncomingMessage: AppRequest, ServerResponse: AppResponse }, app as unknown as http.RequestListener<typeof AppRequest, typeof AppResponse>);
}

/** `appProto` is Object.create(express's request or response, { app }): the class's prototype takes its place. */
function adopt(classProto: object, appProto: object): void {
  Object.setPrototypeOf(classProto, Object.getPrototypeOf(appProto) as object);
  const { constructor: _ignored, ...own } = Object.getOwnPropertyDescriptors(appProto);
  Object.defineProperties(classProto, own);
}
