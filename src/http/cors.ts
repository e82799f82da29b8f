/**
 * `cors(config)`: CORS for browser frontends, mounted early (after requestId):
 *   app.use(cors(config));
 * Only origins listed in `http.corsOrigins` (exact string match on the Origin header) get CORS headers,
 * and the allowed origin is echoed, never `*`. Credentials are never allowed: callers authenticate with a
 * bearer token, not cookies. A preflight (OPTIONS with Access-Control-Request-Method) is answered here with
 * 204; from an unlisted origin it gets no CORS headers, so the browser blocks the real call.
 */
import type { RequestHandler } from 'express';
import type { HttpConfig } from '../config/types';

export const CORS_ALLOWED_METHODS = ['GET', 'POST', 'OPTIONS'] as const;
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'] as const;
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'Idempotent-Replayed', 'Cache-Status', 'Retry-After', 'WWW-Authenticate'] as const;
const PREFLIGHT_MAX_AGE_SEC = 600;

export function cors(config: { http: Pick<HttpConfig, 'corsOrigins'> }): RequestHandler {
  // Origins are compared as browsers send them: scheme://host[:port], no path, no trailing slash.
  const allowed = new Set(config.http.corsOrigins.map((o) => o.replace(/\/+$/, '')));
  return (req, res, next) => {
    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    res.vary('Origin');
    const ok = typeof origin === 'string' && allowed.has(origin);
    if (ok) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(', '));
    }
    if (!preflight) return next();
    if (ok) {
      res.setHeader('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS.join(', '));
      res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '));
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SEC));
    }
    res.status(204).end();
  };
}
