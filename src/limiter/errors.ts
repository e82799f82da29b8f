/** Limiter failures with stable codes (style.md: callers branch on `code`, never on messages). */

/**
 * The upstream budget cannot start this call within its maximum wait, or the caller's own share is spent:
 * HTTP 429 `rate_limited`. Refused at once, never after waiting out the maximum (contract guarantee 9).
 */
export class RateLimitExceededError extends Error {
  readonly code = 'rate_limited';
  /**
   * When this caller could start (ms from the refusal): the earliest slot, spread one slot after the class's
   * last refused caller's (so a refused burst does not come back in the same second), or when the caller's
   * own share frees.
   */
  readonly retryAfterMs: number;
  /** `max_wait`: no slot in time for anyone of its class; `caller_share`: this caller's share is spent. */
  readonly reason: 'max_wait' | 'caller_share';

  constructor(retryAfterMs: number, message = 'upstream budget cannot start this call within its maximum wait', reason: 'max_wait' | 'caller_share' = 'max_wait') {
    super(message);
    this.name = 'RateLimitExceededError';
    this.retryAfterMs = Math.max(1, Math.ceil(retryAfterMs));
    this.reason = reason;
  }
}

/** A sale while the shared budget (Redis) is unreachable: HTTP 503, nothing charged (contract guarantee 5). */
export class LimiterUnavailableError extends Error {
  readonly code = 'limiter_unavailable';

  constructor(message = 'upstream budget unavailable (Redis unreachable)', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LimiterUnavailableError';
  }
}
