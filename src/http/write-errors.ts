import { GatewayError } from '../gateway/errors';
import { StoreUnavailableError } from '../idempotency';
import { LimiterUnavailableError, RateLimitExceededError } from '../limiter';
import { WriteInProgressError, WriteKeyReusedError, WriteOutcomeUnknownError, unwrapNotSent } from '../writes';
import { ApiError, IdempotencyInProgress, IdempotencyKeyReused, InternalError, OutcomeUnknown, RateLimited, Unavailable, fromGatewayError } from './errors';

/**
 * The public answer to a failed write, whatever the write (contract, "Errors"): the one mapping from the
 * protocol's, the budget's, the store's and the gateway's failures to the error table.
 */
export function toApiError(err: unknown): ApiError {
  const e = unwrapNotSent(err);
  if (e instanceof ApiError) return e;
  if (e instanceof WriteInProgressError) return new IdempotencyInProgress(e.retryAfterSec);
  if (e instanceof WriteKeyReusedError) return new IdempotencyKeyReused();
  if (e instanceof WriteOutcomeUnknownError) return new OutcomeUnknown(e.retryAfterSec);
  if (e instanceof RateLimitExceededError) return new RateLimited(e.retryAfterMs / 1000);
  if (e instanceof LimiterUnavailableError || e instanceof StoreUnavailableError) return new Unavailable(5);
  if (e instanceof GatewayError) return fromGatewayError(e);
  return new InternalError();
}
