import { GatewayError } from '../gateway/errors';
import type { LaterPart } from './keep-later';
import { StoreUnavailableError } from '../redis/errors';
import { LimiterUnavailableError, RateLimitExceededError } from '../limiter/errors';

/**
 * The write was certainly not sent: the failure came before the gateway call (a token lookup, a money-bounds
 * refusal decided in Redis, an ownership check). Wrapping an error in it frees the Idempotency-Key and releases
 * reservations; `cause` is what the caller is answered.
 */
export class WriteNotSentError extends Error {
  /**
   * `before`: writes of the use case's records that must be kept before the key is freed (a follow-up's release of
   * its sale's reservation that Redis could not take): freed first, a replica that died before keeping them would
   * leave the reservation held for good with no key left for the reconciler to resolve it from.
   */
  constructor(override readonly cause: unknown, readonly before: readonly LaterPart[] = []) {
    super('write not sent', { cause });
    this.name = new.target.name;
  }
}

/** What must be kept before a not-sent write's key is freed (WriteNotSentError.before, at any depth of the chain). */
export function keptBeforeFreeing(err: unknown): LaterPart[] {
  const out: LaterPart[] = [];
  for (let e = err; e instanceof WriteNotSentError; e = e.cause) out.push(...e.before);
  return out;
}

/** `cause` of a WriteNotSentError chain (possibly nested), else the error itself. */
export function unwrapNotSent(err: unknown): unknown {
  let e = err;
  while (e instanceof WriteNotSentError) e = e.cause;
  return e;
}

/**
 * Whether a failed write may have reached the gateway: the ONE classification every write uses (contract,
 * guarantee 2). Only failures that prove nothing was sent answer 'no' (budget refusal, Redis down before the
 * call, a gateway that was never reached or answered 429/155, a refusal decided before sending); anything
 * else (timeout, reset after sending, 5xx, unreadable answer, a bug after sending) answers 'maybe', and the
 * write is never re-sent.
 */
export function sentness(err: unknown): 'no' | 'maybe' {
  if (err instanceof WriteNotSentError) return 'no';
  if (err instanceof RateLimitExceededError || err instanceof LimiterUnavailableError || err instanceof StoreUnavailableError) return 'no';
  if (err instanceof GatewayError) return err.outcome === 'not_processed' ? 'no' : 'maybe';
  return 'maybe';
}
