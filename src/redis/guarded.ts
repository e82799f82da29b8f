import { StoreUnavailableError } from './errors';

/** The error a store raises when Redis fails or is too slow (a class taking a message and the cause). */
export type UnavailableError = new (message: string, cause?: unknown) => Error;

/**
 * One Redis operation of a store, bounded: any Redis failure, or no answer within `timeoutMs`, becomes the
 * store's unavailable error (StoreUnavailableError by default), so a write answers 503 quickly (and frees its
 * key) instead of waiting through ioredis's reconnect attempts. `what` names the operation, never a value.
 */
export function guarded<T>(what: string, timeoutMs: number, op: () => Promise<T>, Unavailable: UnavailableError = StoreUnavailableError): Promise<T> {
  // One promise and one timer per call, no Promise.race: every Redis operation of every write comes through here.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Unavailable(`${what}: Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: unknown) => {
      clearTimeout(timer);
      reject(err instanceof Unavailable ? err : new Unavailable(`${what}: Redis failed (${(err as Error).message})`, err));
    };
    let pending: Promise<T>;
    try {
      pending = op();
    } catch (err) {
      fail(err);
      return;
    }
    pending.then((value) => {
      clearTimeout(timer);
      resolve(value);
    }, fail);
  });
}
