/**
 * Why the idempotency protocol did not run a write: the other answers of begin. Stable codes; the HTTP edge
 * maps them to 409/422 (src/http/write-errors.ts).
 */

/** Another request with this key is still running → 409 idempotency_in_progress with Retry-After. */
export class WriteInProgressError extends Error {
  readonly code = 'idempotency_in_progress';
  constructor(readonly retryAfterSec: number) {
    super('a request with this Idempotency-Key is still in progress');
    this.name = 'WriteInProgressError';
  }
}

/** Same key, different request → 422 idempotency_key_reused. */
export class WriteKeyReusedError extends Error {
  readonly code = 'idempotency_key_reused';
  constructor() {
    super('Idempotency-Key reused for a different request');
    this.name = 'WriteKeyReusedError';
  }
}

/** An earlier attempt under this key may have reached the gateway → 409 outcome_unknown (guarantee 6). */
export class WriteOutcomeUnknownError extends Error {
  readonly code = 'outcome_unknown';
  /** When to ask again: the reconciler's next look at the gateway's records. */
  constructor(readonly retryAfterSec: number) {
    super('the first attempt with this Idempotency-Key has an unknown outcome');
    this.name = 'WriteOutcomeUnknownError';
  }
}
