/**
 * Why a wallet write was refused, as use-case errors with stable codes; the HTTP edge maps them to the contract's
 * answers (src/http/write-errors.ts).
 */

/** A customer with this `customerid` was already created through tokengate: 409 `customer_exists` naming it. */
export class CustomerExistsError extends Error {
  readonly code = 'customer_exists';
  constructor(readonly custkey: string) {
    super('a customer with this customerid was already created through tokengate');
    this.name = 'CustomerExistsError';
  }
}

/**
 * The gateway refused a wallet write's fields (a 4xx: nothing happened). 400 `invalid_request` with a neutral
 * message: the gateway's own text may echo what was sent, so it is never passed on.
 */
export class WalletWriteRefusedError extends Error {
  readonly code = 'refused_by_gateway';
  constructor(cause?: unknown) {
    super('the gateway refused the fields of this write', { cause });
    this.name = 'WalletWriteRefusedError';
  }
}

/**
 * A removal tombstoned its method (or customer) and could not finish (the budget, Redis, or a gateway call
 * whose outcome is unknown): the write is left to the reconciler, which finishes it (issue 26, guarantee 10
 * holds meanwhile: every charge checks the tombstone). `cause` is what the caller is answered now.
 */
export class RemovalPendingError extends Error {
  constructor(override readonly cause: unknown) {
    super('the removal is recorded and will be finished by the reconciler', { cause });
    this.name = 'RemovalPendingError';
  }
}
