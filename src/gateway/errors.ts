import type { RateLimitInfo } from './types';

/**
 * Gateway failures as classes with stable codes (modelled on stripe-node's Error.ts): callers branch on
 * `code` or `instanceof`, never on messages. A decline is NOT an error: it is a Transaction with result_code D.
 *
 * `outcome` says what we know about a call that may have had effects:
 *   - 'not_processed': the gateway certainly did not act (connection refused, 429/155, auth failure);
 *   - 'unknown': the request may have reached the gateway (timeout or reset after sending).
 *   - 'processed_error': the gateway answered with an error; a sale must still not be re-sent (a 5xx is no
 *     proof that nothing happened; gateway-facts.md, Rate limits).
 */
export type CallOutcome = 'not_processed' | 'unknown' | 'processed_error';

export type GatewayErrorCode =
  | 'gateway_rate_limited'
  | 'gateway_access_denied'
  | 'gateway_auth_failed'
  | 'gateway_not_found'
  | 'gateway_bad_request'
  | 'gateway_server_error'
  | 'gateway_unreadable'
  | 'gateway_timeout'
  | 'gateway_connection_reset'
  | 'gateway_unavailable'
  | 'gateway_refused';

export interface GatewayErrorInit {
  status?: number;
  errorcode?: number;
  rateLimit?: RateLimitInfo;
  host?: string;
  cause?: unknown;
}

export abstract class GatewayError extends Error {
  abstract readonly code: GatewayErrorCode;
  abstract readonly outcome: CallOutcome;
  readonly status: number | undefined;
  /** The gateway's numeric `errorcode`/`error_code` when it sent one. */
  readonly errorcode: number | undefined;
  readonly rateLimit: RateLimitInfo | undefined;
  readonly host: string | undefined;

  constructor(message: string, init: GatewayErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.errorcode = init.errorcode;
    this.rateLimit = init.rateLimit;
    this.host = init.host;
  }
}

/** 429 with errorcode 155: not processed, may be sent again through the limiter. */
export class GatewayRateLimitedError extends GatewayError {
  readonly code = 'gateway_rate_limited';
  readonly outcome = 'not_processed';
}

/** 401 with errorcode 156: our IP is not on the endpoint's allow-list. */
export class GatewayAccessDeniedError extends GatewayError {
  readonly code = 'gateway_access_denied';
  readonly outcome = 'not_processed';
}

/** 401 for bad merchant credentials (21002 hash mismatch, 23 unknown source key, 20010 PIN required). */
export class GatewayAuthFailedError extends GatewayError {
  readonly code = 'gateway_auth_failed';
  readonly outcome = 'not_processed';
}

/**
 * 404, or an errorcode that names a missing object at any status: 99999 "Customer Not Found", 40453 payment
 * method not found (gateway-facts.md, the wallet), so callers can answer 404.
 */
export class GatewayNotFoundError extends GatewayError {
  readonly code = 'gateway_not_found';
  readonly outcome = 'not_processed';
}

/** Other 4xx: the gateway refused the request as malformed. */
export class GatewayBadRequestError extends GatewayError {
  readonly code = 'gateway_bad_request';
  readonly outcome = 'processed_error';
}

/** 5xx, or a 429 without errorcode 155. */
export class GatewayServerError extends GatewayError {
  readonly code = 'gateway_server_error';
  readonly outcome = 'processed_error';
}

/** An answer that could not be parsed (not JSON, wrong shape, over the size cap). */
export class GatewayUnreadableError extends GatewayError {
  readonly code = 'gateway_unreadable';
  readonly outcome = 'unknown';
}

/** No answer within the timeout after the request was sent: outcome unknown. */
export class GatewayTimeoutError extends GatewayError {
  readonly code = 'gateway_timeout';
  readonly outcome = 'unknown';
}

/** The connection broke after the request was (or may have been) sent: outcome unknown. */
export class GatewayConnectionResetError extends GatewayError {
  readonly code = 'gateway_connection_reset';
  readonly outcome = 'unknown';
}

/** No host could be reached before sending anything (refused, DNS, connect timeout). */
export class GatewayUnavailableError extends GatewayError {
  readonly code = 'gateway_unavailable';
  readonly outcome = 'not_processed';
}

/**
 * Why the gateway refused a follow-up (capture, void, refund), op-aware so the BFF branches on one value:
 *   - not_found: no such original (35, 113, 10105, 20001);
 *   - not_capturable: capture of anything but an open authorization (voided, declined, captured, settled);
 *   - capture_exceeds: capture amount above what is authorized;
 *   - not_voidable: void of a voided or unapproved transaction (24, 83, 10125);
 *   - already_settled: void of a settled transaction (26, 103, 10126): a refund is the way back;
 *   - not_refundable: refund of an unsettled (115), voided or unapproved original;
 *   - refund_exceeds: more than what was captured and not yet refunded (114, 10133);
 *   - rejected: the gateway did not accept the call at all (20019 unknown command, 20020 unknown field, …).
 */
export type RefusalReason =
  | 'not_found' | 'not_capturable' | 'capture_exceeds' | 'not_voidable' | 'already_settled' | 'not_refundable' | 'refund_exceeds' | 'rejected';

export type FollowUpOperation = 'capture' | 'void' | 'refund';

const NOT_FOUND_CODES = new Set([35, 113, 10105, 20001]);
const SETTLED_CODES = new Set([26, 103, 10126]);
const EXCEEDS_CODES = new Set([114, 10133]);
const REJECTED_CODES = new Set([20019, 20020]);

export function refusalReason(op: FollowUpOperation, errorcode: number | undefined): RefusalReason {
  if (errorcode === undefined || REJECTED_CODES.has(errorcode)) return 'rejected';
  if (NOT_FOUND_CODES.has(errorcode)) return 'not_found';
  if (op === 'capture') return EXCEEDS_CODES.has(errorcode) ? 'capture_exceeds' : 'not_capturable';
  if (op === 'void') return SETTLED_CODES.has(errorcode) ? 'already_settled' : 'not_voidable';
  return EXCEEDS_CODES.has(errorcode) ? 'refund_exceeds' : 'not_refundable';
}

/**
 * A follow-up answered `result_code` "E": the gateway looked at the original and refused; nothing moved, so
 * the outcome is 'not_processed' (sending it again would be refused again). `errorcode` keeps the gateway's
 * code, `reason` says what it means for the caller.
 */
export class GatewayRefusedError extends GatewayError {
  readonly code = 'gateway_refused';
  readonly outcome = 'not_processed';
  readonly reason: RefusalReason;
  readonly operation: FollowUpOperation;

  constructor(operation: FollowUpOperation, message: string, init: GatewayErrorInit = {}) {
    super(message, init);
    this.operation = operation;
    this.reason = refusalReason(operation, init.errorcode);
  }
}

/** The errorcodes that mean "no such customer or payment method" (gateway-facts.md, the wallet). */
export const NOT_FOUND_ERRORCODES: ReadonlySet<number> = new Set([99999, 40453]);

export function isGatewayError(err: unknown): err is GatewayError {
  return err instanceof GatewayError;
}
