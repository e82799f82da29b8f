/**
 * What the HTTP edge attaches to every Express request. `id` and `log` are set by `requestId()` (mount it
 * first); `auth` only after `authenticate` ran, so handlers read it through `requireAuth(req)`.
 */
import type { Caller } from '../access';
import type { Logger } from '../observability/logger';

/** The verified caller (contract.md, "Callers and JWTs"): who it is (src/access) and what it may do. */
export interface AuthContext extends Caller {
  scopes: ReadonlySet<string>;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The X-Request-Id of this exchange (the caller's if safe, else a new UUID). */
    id: string;
    /** A child logger carrying `request_id`. */
    log: Logger;
    auth?: AuthContext;
  }
}
