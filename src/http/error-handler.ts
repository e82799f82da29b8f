/**
 * The last two middlewares of the app:
 *   app.use(notFoundHandler);        // unknown routes → 404 not_found
 *   app.use(errorHandler(logger));   // every error → the contract's envelope
 * errorHandler maps ApiError as is, body-parser failures by their `type`, GatewayError through
 * fromGatewayError, and anything else to 500 internal_error (logged, never detailed to the caller).
 * No answer carries a stack trace or echoes input; body-parser errors hold the raw body in `err.body`, so
 * they are logged by `type` only.
 */
import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { isGatewayError } from '../gateway/errors';
import type { Logger } from '../observability/logger';
import { NotFoundError } from '../access';
import { StoreUnavailableError } from '../redis/errors';
import { LimiterUnavailableError, RateLimitExceededError } from '../limiter';
import { ApiError, InternalError, InvalidRequest, NotFound, PayloadTooLarge, RateLimited, Unavailable, fromGatewayError } from './errors';
import { REQUEST_ID_HEADER } from './request-id';
import './types';

export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new NotFound());
};

// body-parser (and raw-body) error types, https://github.com/expressjs/body-parser#errors
const BODY_ERRORS: Record<string, () => ApiError> = {
  'entity.too.large': () => new PayloadTooLarge(),
  'entity.parse.failed': () => new InvalidRequest([{ path: 'body', rule: 'malformed_json' }]),
  'charset.unsupported': () => new InvalidRequest([{ path: 'header.content-type', rule: 'unsupported_charset' }]),
  'encoding.unsupported': () => new InvalidRequest([{ path: 'header.content-encoding', rule: 'unsupported_encoding' }]),
  'request.aborted': () => new InvalidRequest([{ path: 'body', rule: 'aborted' }]),
  'request.size.invalid': () => new InvalidRequest([{ path: 'body', rule: 'size_mismatch' }]),
  'stream.encoding.set': () => new InvalidRequest([{ path: 'body', rule: 'unreadable' }]),
  'stream.not.readable': () => new InvalidRequest([{ path: 'body', rule: 'unreadable' }]),
};

function field(err: unknown, name: string): unknown {
  return err !== null && typeof err === 'object' ? (err as Record<string, unknown>)[name] : undefined;
}

/** Turns anything thrown into the public error, logging what operators need (never input values). */
export function toApiError(err: unknown, log: Logger): ApiError {
  if (err instanceof ApiError) {
    if (err.status >= 500) log.warn('request failed', { code: err.code, status: err.status });
    else log.debug('request refused', { code: err.code, status: err.status });
    return err;
  }
  // A use case's "unknown, or not the caller's": the same 404 either way.
  if (err instanceof NotFoundError) return new NotFound();
  // The budget's refusals on read routes (the sales route maps its own): a queued read refused while draining
  // or past its maximum wait must answer 503/429 with Retry-After, not 500.
  // Redis unreachable on a route that is not a write (the webhook intake, a view): 503 with Retry-After, so the
  // caller (the gateway's webhook delivery included) comes back, never a 500.
  if (err instanceof LimiterUnavailableError || err instanceof StoreUnavailableError) return toApiError(new Unavailable(5), log);
  if (err instanceof RateLimitExceededError) return toApiError(new RateLimited(err.retryAfterMs / 1000), log);
  if (isGatewayError(err)) {
    const mapped = fromGatewayError(err);
    log.warn('gateway call failed', { gateway_code: err.code, gateway_status: err.status, errorcode: err.errorcode, host: err.host, code: mapped.code });
    return mapped;
  }
  const type = field(err, 'type');
  if (typeof type === 'string' && type in BODY_ERRORS) {
    log.debug('request body refused', { body_error: type });
    return (BODY_ERRORS[type] as () => ApiError)();
  }
  // Other http-errors shaped failures (e.g. Express failing to decode a path parameter).
  const status = field(err, 'status') ?? field(err, 'statusCode');
  if (status === 400 || status === 415) {
    log.debug('request refused', { status });
    return new InvalidRequest();
  }
  if (status === 404) return new NotFound();
  if (status === 413) return new PayloadTooLarge();
  log.error('unhandled error', { err });
  return new InternalError();
}

/**
 * Answers with `apiError` in the contract's envelope: its status and headers, `Cache-Control: no-store`, the
 * request id. The error handler's last step; also called directly by a middleware that refuses before any
 * handler ran (auth.ts: Express's walk of the remaining layers to reach this handler cost ~8 % of a refused
 * request, issue 30).
 */
export function sendApiError(req: Request, res: Response, apiError: ApiError): void {
  let id = req.id;
  if (!id) {
    id = randomUUID();
    res.setHeader(REQUEST_ID_HEADER, id);
  }
  res.status(apiError.status).set(apiError.headers).set('Cache-Control', 'no-store').json(apiError.toBody(id));
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const log = req.log ?? logger;
    const apiError = toApiError(err, log);
    if (res.headersSent) {
      // Too late for a clean answer: cut the connection so the caller sees a failure, not a truncated 2xx.
      log.warn('error after the answer started', { code: apiError.code });
      req.socket.destroy();
      return;
    }
    sendApiError(req, res, apiError);
  };
}
