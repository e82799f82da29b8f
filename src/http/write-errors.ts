import { NotFoundError } from '../access';
import { GatewayError, GatewayRefusedError, type RefusalReason } from '../gateway/errors';
import { SaleRefusedError, type SaleRefusal } from '../sales/follow-up-service';
import { StoreUnavailableError } from '../idempotency';
import { LimiterUnavailableError, RateLimitExceededError } from '../limiter';
import { WriteInProgressError, WriteKeyReusedError, WriteOutcomeUnknownError, unwrapNotSent } from '../writes';
import { CustomerExistsError, RemovalPendingError, WalletWriteRefusedError } from '../wallet/errors';
import { SubscriptionInputError, SubscriptionNotActiveError } from '../subscriptions/errors';
import { SaleInputError } from '../sales/sale-errors';
import {
  ApiError, CustomerExists, InvalidRequest, GatewayErrorApi, IdempotencyInProgress, IdempotencyKeyReused, InternalError, NotFound, OutcomeUnknown, RateLimited, RefundExceedsSale, SaleNotRefundable,
  SaleNotCapturable, SaleNotVoidable, SubscriptionNotActive, Unavailable, fromGatewayError,
} from './errors';

/** A follow-up refused from tokengate's record (before sending) or by the gateway (result E), as the contract's codes. */
function refusal(reason: SaleRefusal | RefusalReason, err: unknown): ApiError {
  switch (reason) {
    case 'not_capturable':
    case 'capture_exceeds':
      return new SaleNotCapturable();
    case 'not_voidable':
    case 'already_settled':
      return new SaleNotVoidable();
    case 'refund_exceeds':
    case 'not_refundable':
      // Nothing (more) captured to give back: a void, a decline, an open authorization, or all refunded.
      return new RefundExceedsSale();
    case 'returned':
      return new SaleNotRefundable();
    case 'pending':
      return new SaleNotRefundable('The bank payment is still pending: void it instead; a refund is possible once it is submitted.');
    case 'not_found':
      return new NotFound();
    case 'busy':
      // Another follow-up of the sale is in flight or of unknown outcome: nothing was sent for this one.
      return new IdempotencyInProgress(5);
    case 'rejected':
      return new GatewayErrorApi('gateway_error', err);
  }
}

/**
 * The public answer to a failed write, whatever the write (contract, "Errors"): the one mapping from the
 * protocol's, the budget's, the store's and the gateway's failures to the error table.
 */
export function toApiError(err: unknown): ApiError {
  const e = unwrapNotSent(err);
  if (e instanceof ApiError) return e;
  // A removal left to the reconciler answers what stopped it now; a retry answers 409 outcome_unknown until done.
  if (e instanceof RemovalPendingError) return toApiError(e.cause);
  if (e instanceof CustomerExistsError) return new CustomerExists(e.custkey);
  // The gateway's own text may echo what was sent: a fixed message instead (issue 26, decision 7).
  if (e instanceof WalletWriteRefusedError) return new InvalidRequest([{ path: 'body', rule: 'refused_by_gateway' }], 'The gateway refused these fields.');
  if (e instanceof NotFoundError) return new NotFound();
  if (e instanceof SubscriptionNotActiveError) return new SubscriptionNotActive();
  if (e instanceof SubscriptionInputError || e instanceof SaleInputError) return new InvalidRequest([{ path: e.path, rule: e.rule }]);
  if (e instanceof WriteInProgressError) return new IdempotencyInProgress(e.retryAfterSec);
  if (e instanceof WriteKeyReusedError) return new IdempotencyKeyReused();
  if (e instanceof WriteOutcomeUnknownError) return new OutcomeUnknown(e.retryAfterSec);
  if (e instanceof SaleRefusedError) return refusal(e.reason, e);
  if (e instanceof GatewayRefusedError) return refusal(e.reason, e);
  if (e instanceof RateLimitExceededError) return new RateLimited(e.retryAfterMs / 1000);
  if (e instanceof LimiterUnavailableError || e instanceof StoreUnavailableError) return new Unavailable(5);
  if (e instanceof GatewayError) return fromGatewayError(e);
  return new InternalError();
}
