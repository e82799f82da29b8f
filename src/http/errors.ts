/**
 * The public error model (contract.md, "Errors"): one base class with a stable `code`, one subclass per row
 * of the contract's table, and `fromGatewayError` mapping upstream failures onto them (stripe-node's
 * Error.ts and fastify's errors.js are the models). Callers branch on `code`, never on `message`.
 *
 * Every body has the shape
 *   {"error": {"code": "...", "message": "...", "request_id": "...", "details"?: [{"path","rule"}]}}
 * and a 402 decline adds the transaction inside the same object:
 *   {"error": {"code": "card_declined", "message": "...", "request_id": "...", "transaction": {...}}}
 * Messages are fixed strings per class: they never echo caller input, values or upstream text.
 */
import { redactPansDeep } from '../card/pan';
import type { GatewayError } from '../gateway/errors';
import type { Scope } from './scopes';

export type ApiErrorCode =
  | 'invalid_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'idempotency_in_progress'
  | 'outcome_unknown'
  | 'card_declined'
  | 'payload_too_large'
  | 'card_data_forbidden'
  | 'bank_data_forbidden'
  | 'idempotency_key_reused'
  | 'rate_limited'
  | 'gateway_error'
  | 'gateway_access_denied'
  | 'gateway_auth_failed'
  | 'unavailable'
  | 'gateway_timeout'
  | 'sale_not_capturable'
  | 'sale_not_voidable'
  | 'refund_exceeds_sale'
  | 'sale_not_refundable'
  | 'customer_exists'
  | 'subscription_not_active'
  | 'internal_error';

/**
 * One problem: where (`body.amount`, `query.limit`, `header.idempotency-key`, `token.scope`) and which rule; a
 * 403's detail names the `scope` the token lacks.
 */
export interface ErrorDetail {
  path: string;
  rule: string;
  scope?: string;
}

export interface ErrorBody {
  error: {
    code: ApiErrorCode;
    message: string;
    request_id: string;
    details?: readonly ErrorDetail[];
    transaction?: object;
    /** customer_exists: the customer already created through tokengate with this customerid. */
    custkey?: string;
  };
}

interface ApiErrorInit {
  details?: readonly ErrorDetail[];
  retryAfterSec?: number;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly details: readonly ErrorDetail[] | undefined;
  /** Whole seconds for `Retry-After`; only set where the contract promises the header. */
  readonly retryAfterSec: number | undefined;

  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    init: ApiErrorInit = {},
  ) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.details = init.details;
    this.retryAfterSec = init.retryAfterSec === undefined ? undefined : Math.max(1, Math.ceil(init.retryAfterSec));
  }

  /** Headers this answer must carry besides the body (Retry-After for 409/429/503, WWW-Authenticate for 401). */
  get headers(): Readonly<Record<string, string>> {
    return this.retryAfterSec === undefined ? {} : { 'Retry-After': String(this.retryAfterSec) };
  }

  toBody(requestId: string): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message, request_id: requestId };
    if (this.details && this.details.length > 0) error.details = this.details;
    return { error };
  }
}

export class InvalidRequest extends ApiError {
  constructor(details: readonly ErrorDetail[] = [], message = 'The request is invalid.') {
    super(400, 'invalid_request', message, { details });
  }
}

/**
 * 401 with the challenge RFC 9110 §15.5.2 requires on every 401. Per RFC 6750 §3.1: `error="invalid_token"`
 * when a bearer token was sent and refused; plain `Bearer` (no error code) when none was sent, or another
 * scheme was. The challenge is fixed text: nothing of the token or the reason is ever in it.
 */
export class Unauthenticated extends ApiError {
  constructor(readonly tokenRejected = false) {
    super(401, 'unauthenticated', 'A valid bearer token is required.');
  }

  override get headers(): Readonly<Record<string, string>> {
    return { 'WWW-Authenticate': this.tokenRejected ? 'Bearer error="invalid_token"' : 'Bearer' };
  }
}

/**
 * 403: the token lacks a scope. The answer names it (issue 41), as RFC 6750 §3.1 does in the challenge:
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="refunds:create"`, and in `details`
 * (`{"path": "token.scope", "rule": "insufficient_scope", "scope": "refunds:create"}`). Scope names come from
 * the code's scope table, never from the token.
 */
export class Forbidden extends ApiError {
  constructor(readonly scopes: readonly Scope[] = []) {
    super(403, 'forbidden', scopes.length > 0 ? `The token does not allow this operation: it needs the scope ${scopes.join(' and ')}.` : 'The token does not allow this operation.', {
      details: scopes.map((scope) => ({ path: 'token.scope', rule: 'insufficient_scope', scope })),
    });
  }

  override get headers(): Readonly<Record<string, string>> {
    return this.scopes.length > 0 ? { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${this.scopes.join(' ')}"` } : {};
  }
}

/** Unknown route or object, or an object the caller is not bound to: deliberately the same answer. */
export class NotFound extends ApiError {
  constructor() {
    super(404, 'not_found', 'The resource was not found.');
  }
}

export class IdempotencyInProgress extends ApiError {
  constructor(retryAfterSec = 1) {
    super(409, 'idempotency_in_progress', 'A request with this Idempotency-Key is still in progress.', { retryAfterSec });
  }
}

export class OutcomeUnknown extends ApiError {
  /** Retry-After: when the reconciler looks at the gateway's records next (contract, guarantee 6). */
  constructor(retryAfterSec = 1) {
    super(409, 'outcome_unknown', 'The first attempt with this Idempotency-Key has an unknown outcome and is being reconciled with the gateway.', { retryAfterSec });
  }
}

/**
 * 402: the gateway declined (result_code D). The transaction (the sale object) rides inside the error
 * object so generic error handling still sees one envelope; digit runs that look like card numbers are
 * scrubbed as a last line of defence (the gateway already masks `creditcard.number`).
 */
export class CardDeclined extends ApiError {
  constructor(readonly transaction: object) {
    super(402, 'card_declined', 'The card was declined.');
  }

  override toBody(requestId: string): ErrorBody {
    const body = super.toBody(requestId);
    body.error.transaction = redactPansDeep(this.transaction, '[redacted]') as object;
    return body;
  }
}

/** Capture of something that is not an open authorization, or over the authorized amount. */
export class SaleNotCapturable extends ApiError {
  constructor() {
    super(409, 'sale_not_capturable', 'The sale is not an open authorization, or the amount exceeds what is authorized.');
  }
}

/** Void of a settled, voided or declined sale: a refund is the way back. */
export class SaleNotVoidable extends ApiError {
  constructor() {
    super(409, 'sale_not_voidable', 'The sale cannot be voided; refund it instead.');
  }
}

/** A refund that would take the refunded total over the captured amount (checked atomically across replicas). */
export class RefundExceedsSale extends ApiError {
  constructor() {
    super(422, 'refund_exceeds_sale', 'The refund would exceed the captured amount of the sale.');
  }
}

/** A refund of a bank payment that was returned or failed (contract, "Bank payments"): no money came to give back; or still pending (voided, not refunded). */
export class SaleNotRefundable extends ApiError {
  constructor(message = 'The bank payment was returned or failed: there is nothing to refund.') {
    super(409, 'sale_not_refundable', message);
  }
}

/** A customer with this customerid was already created through tokengate: the error object names it. */
export class CustomerExists extends ApiError {
  constructor(readonly custkey: string) {
    super(409, 'customer_exists', 'A customer with this customerid was already created; the error names it.');
  }

  override toBody(requestId: string): ErrorBody {
    const body = super.toBody(requestId);
    body.error.custkey = this.custkey;
    return body;
  }
}

/** A change to a canceled or completed subscription (contract, "Errors"). */
export class SubscriptionNotActive extends ApiError {
  constructor() {
    super(409, 'subscription_not_active', 'The subscription is canceled or completed.');
  }
}

export class PayloadTooLarge extends ApiError {
  constructor() {
    super(413, 'payload_too_large', 'The request body is too large.');
  }
}

export class CardDataForbidden extends ApiError {
  constructor() {
    super(422, 'card_data_forbidden', 'Raw card data is not accepted; use a stored payment method.');
  }
}

export class BankDataForbidden extends ApiError {
  constructor() {
    super(422, 'bank_data_forbidden', 'Raw bank account data is not accepted; collect it with the gateway\'s check form.');
  }
}

export class IdempotencyKeyReused extends ApiError {
  constructor() {
    super(422, 'idempotency_key_reused', 'This Idempotency-Key was already used for a different request.');
  }
}

export class RateLimited extends ApiError {
  constructor(retryAfterSec: number) {
    super(429, 'rate_limited', 'The upstream rate limit does not allow this call now.', { retryAfterSec });
  }
}

export type GatewayApiCode = 'gateway_error' | 'gateway_access_denied' | 'gateway_auth_failed';

const GATEWAY_MESSAGES: Record<GatewayApiCode, string> = {
  gateway_error: 'The payment gateway answered with an error.',
  gateway_access_denied: 'The payment gateway refused this service (IP access).',
  gateway_auth_failed: 'The payment gateway rejected the merchant credentials.',
};

export class GatewayErrorApi extends ApiError {
  constructor(code: GatewayApiCode = 'gateway_error', cause?: unknown) {
    super(502, code, GATEWAY_MESSAGES[code], { cause });
  }
}

export class Unavailable extends ApiError {
  constructor(retryAfterSec = 5) {
    super(503, 'unavailable', 'The service is temporarily unavailable.', { retryAfterSec });
  }
}

export class GatewayTimeout extends ApiError {
  constructor() {
    super(504, 'gateway_timeout', 'The payment gateway did not answer in time.');
  }
}

/** Not in the contract's table: the answer to a bug. Never carries detail. */
export class InternalError extends ApiError {
  constructor() {
    super(500, 'internal_error', 'An internal error occurred.');
  }
}

export interface FromGatewayOptions {
  /** Retry-After for a 429 that could not be re-queued; the gateway counts per minute, hence 60. */
  rateLimitedRetryAfterSec?: number;
  /** Retry-After when no gateway host could be reached. */
  unavailableRetryAfterSec?: number;
}

/** Maps an upstream failure to the public answer (contract.md, "Errors"). */
export function fromGatewayError(err: GatewayError, options: FromGatewayOptions = {}): ApiError {
  switch (err.code) {
    case 'gateway_rate_limited':
      return new RateLimited(options.rateLimitedRetryAfterSec ?? 60);
    case 'gateway_access_denied':
      return new GatewayErrorApi('gateway_access_denied', err);
    case 'gateway_auth_failed':
      return new GatewayErrorApi('gateway_auth_failed', err);
    case 'gateway_not_found':
      return new NotFound();
    case 'gateway_bad_request':
    case 'gateway_server_error':
    case 'gateway_unreadable':
    case 'gateway_refused': // the lifecycle routes map a refusal's `reason` (sale_not_capturable, …) first
      return new GatewayErrorApi('gateway_error', err);
    case 'gateway_timeout':
    case 'gateway_connection_reset':
      return new GatewayTimeout();
    case 'gateway_unavailable':
      return new Unavailable(options.unavailableRetryAfterSec ?? 5);
    default: {
      // Exhaustive: a new upstream code must be mapped here before it compiles.
      const unmapped: never = err.code;
      void unmapped;
      return new GatewayErrorApi('gateway_error', err);
    }
  }
}

