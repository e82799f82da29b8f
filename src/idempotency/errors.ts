/**
 * The idempotency store could not be reached or did not answer in time. Sales answer 503 `unavailable`
 * and charge nothing (contract guarantee 5): without the store, a duplicate could not be recognised.
 */
export class StoreUnavailableError extends Error {
  readonly code = 'store_unavailable';
  readonly statusCode = 503;
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'StoreUnavailableError';
  }
}
