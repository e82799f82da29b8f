/**
 * What the HTTP edge attaches to every Express request. `id` and `log` are set by `requestId()` (mount it
 * first); `auth` only after `authenticate` ran, so handlers read it through `requireAuth(req)`.
 */
import type { Logger } from '../observability/logger';

/** The verified caller (contract.md, "Callers and JWTs"). */
export interface AuthContext {
  sub: string;
  scopes: ReadonlySet<string>;
  /** Set when the token is bound to one customer. */
  custkey?: string;
  /** True when the token carries `customers:any` and no `custkey` (internal services). */
  anyCustomer: boolean;
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
