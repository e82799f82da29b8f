/** Limiter failures with stable codes (style.md: callers branch on `code`, never on messages). */

/** The upstream budget cannot start this call within its maximum wait: HTTP 429 `rate_limited`. */
export class RateLimitExceededError extends Error {
  readonly code = 'rate_limited';
  /** When retrying could fit within the maximum wait again (earliest slot minus the wait allowed), ms. */
  readonly retryAfterMs: number;

  constructor(retryAfterMs: number, message = 'upstream budget cannot start this call within its maximum wait') {
    super(message);
    this.name = 'RateLimitExceededError';
    this.retryAfterMs = Math.max(1, Math.ceil(retryAfterMs));
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
