import { StoreUnavailableError } from '../idempotency/errors';

/** The error a store raises when Redis fails or is too slow (a class taking a message and the cause). */
export type UnavailableError = new (message: string, cause?: unknown) => Error;

/**
 * One Redis operation of a store, bounded: any Redis failure, or no answer within `timeoutMs`, becomes the
 * store's unavailable error (StoreUnavailableError by default), so a write answers 503 quickly (and frees its
 * key) instead of waiting through ioredis's reconnect attempts. `what` names the operation, never a value.
 */
export async function guarded<T>(what: string, timeoutMs: number, op: () => Promise<T>, Unavailable: UnavailableError = StoreUnavailableError): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Unavailable(`${what}: Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([op(), timeout]);
  } catch (err) {
    if (err instanceof Unavailable) throw err;
    throw new Unavailable(`${what}: Redis failed (${(err as Error).message})`, err);
  } finally {
    clearTimeout(timer);
  }
}
