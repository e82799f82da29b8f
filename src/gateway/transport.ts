import {
  GatewayAccessDeniedError, GatewayAuthFailedError, GatewayBadRequestError, GatewayConnectionResetError, GatewayError, GatewayNotFoundError,
  GatewayRateLimitedError, GatewayRefusedError, GatewayServerError, GatewayTimeoutError, GatewayUnavailableError, GatewayUnreadableError,
  NOT_FOUND_ERRORCODES,
} from './errors';
import { ShapeError, parseErrorBody } from './parse';
import type { GatewayResult, RateLimitInfo } from './types';

/** What a finished or failed exchange means: transport failures classified by what they prove, answers by status. */

/** Errors of a connection that never carried the request: any call may go to the next host. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

/** The error code of a transport failure: undici's own, or the socket's (possibly inside an AggregateError). */
function transportCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] };
  for (const c of [e?.code, e?.cause?.code, e?.errors?.[0]?.code]) if (typeof c === 'string') return c;
  return undefined;
}

export function classifyTransportError(err: unknown, host: string, how: { timedOut: boolean; abandoned: boolean }): GatewayError {
  const code = transportCode(err);
  if (code && NOT_SENT.has(code)) return new GatewayUnavailableError('gateway unreachable', { host, cause: code });
  if (how.timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new GatewayTimeoutError(how.abandoned ? 'call abandoned by the caller' : 'no answer from the gateway in time', { host, cause: code ?? 'deadline' });
  }
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE' || code?.startsWith('HPE_')) {
    return new GatewayUnreadableError('gateway answer too large or malformed', { host, cause: code });
  }
  // UND_ERR_SOCKET (other side closed), ECONNRESET, EPIPE: the request may have been read and acted on.
  return new GatewayConnectionResetError('connection to the gateway broke', { host, cause: code ?? 'unknown' });
}

export function interpret<T>(answer: { status: number; text: string; rateLimit: RateLimitInfo | undefined; host: string }, parse: (body: unknown) => T): GatewayResult<T> {
  const { status, text, rateLimit, host } = answer;
  let body: unknown;
  let readable = true;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    readable = false;
  }
  const init = { status, rateLimit, host, ...parseErrorBody(body) };
  if (status >= 200 && status < 300) {
    if (!readable) throw new GatewayUnreadableError('gateway answer is not JSON', init);
    // An error object with a success status: real clients read `{error, errorcode}` whatever the status (the
    // PHP SDK's runCall), so a missing object is not found here too; any other is a refusal.
    if (isErrorObject(body)) {
      if (init.errorcode !== undefined && NOT_FOUND_ERRORCODES.has(init.errorcode)) throw new GatewayNotFoundError('gateway object not found', init);
      throw new GatewayBadRequestError('gateway refused the request', init);
    }
    try {
      return { value: parse(body), rateLimit, host, status };
    } catch (err) {
      if (err instanceof ShapeError) throw new GatewayUnreadableError(`gateway answer has an unexpected shape: ${err.message}`, init);
      // A follow-up's result_code E: carry the host and budget of this answer.
      if (err instanceof GatewayRefusedError) throw new GatewayRefusedError(err.operation, err.message, { ...init, errorcode: err.errorcode });
      throw err;
    }
  }
  if (status === 429) {
    // Only errorcode 155 proves the call was not processed (gateway-facts.md, Rate limits).
    if (init.errorcode === 155) throw new GatewayRateLimitedError('gateway rate limit exceeded', init);
    throw new GatewayServerError('gateway answered 429 without errorcode 155', init);
  }
  if (status === 401 || status === 403) {
    if (init.errorcode === 156) throw new GatewayAccessDeniedError('gateway refused our IP address', init);
    throw new GatewayAuthFailedError('gateway refused our credentials', init);
  }
  if (status === 404 || (init.errorcode !== undefined && NOT_FOUND_ERRORCODES.has(init.errorcode))) throw new GatewayNotFoundError('gateway object not found', init);
  if (status >= 400 && status < 500) throw new GatewayBadRequestError('gateway refused the request', init);
  if (status >= 300 && status < 400) throw new GatewayServerError('gateway answered a redirect', init);
  throw new GatewayServerError(`gateway answered ${status}`, init);
}

/** `{error, errorcode}` and nothing of an object: transaction answers carry their errors beside `result_code`. */
function isErrorObject(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const o = body as Record<string, unknown>;
  return typeof o.error === 'string' && o.errorcode !== undefined && o.result_code === undefined && o.type === undefined && o.key === undefined;
}
