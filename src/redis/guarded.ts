import { StoreUnavailableError } from '../idempotency/errors';

/**
 * One Redis operation of a store, bounded: any Redis failure, or no answer within `timeoutMs`, becomes
 * StoreUnavailableError, so a write answers 503 quickly (and frees its key) instead of waiting through
 * ioredis's reconnect attempts. `what` names the operation in the message (never a value).
 */
export async function guarded<T>(what: string, timeoutMs: number, op: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError(`${what}: Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([op(), timeout]);
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw err;
    throw new StoreUnavailableError(`${what}: Redis failed (${(err as Error).message})`, err);
  } finally {
    clearTimeout(timer);
  }
}
