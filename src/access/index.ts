/**
 * Who may act on which customer (contract, "Callers and JWTs"), as every use case sees it: the HTTP edge verifies
 * the JWT and hands its caller down; nothing below the edge knows about tokens or requests.
 */
export interface Caller {
  /** The JWT's `sub`: idempotency keys and the per-caller share of the read budget are scoped by it. */
  sub: string;
  /** Set when the token is bound to one customer (a shopper's frontend). */
  custkey?: string;
  /** True when the token carries `customers:any` and no `custkey` (internal services). */
  anyCustomer: boolean;
}

/** Whether this caller may act for `custkey` (a bound token touches only its customer). */
export function canAccessCustomer(caller: Caller, custkey: string): boolean {
  if (caller.custkey !== undefined) return caller.custkey === custkey;
  return caller.anyCustomer;
}

/**
 * The thing asked for is unknown, or belongs to a customer the caller is not bound to: the same 404 either
 * way, with no hint which (contract: "anything else answers 404 exactly like an unknown sale").
 */
export class NotFoundError extends Error {
  readonly code = 'not_found';
  constructor(message = 'not found') {
    super(message);
    this.name = 'NotFoundError';
  }
}

/** Throws NotFoundError unless the caller may act for `custkey`. */
export function assertAccess(caller: Caller, custkey: string): void {
  if (!canAccessCustomer(caller, custkey)) throw new NotFoundError();
}
