/**
 * Redis could not be reached or did not answer in time (src/redis raises it: guarded.ts, replicas.ts; it lived in
 * src/idempotency until issue 41, the one import from src/redis up the layers). Sales answer 503 `unavailable`
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
