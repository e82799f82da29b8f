import { StoreUnavailableError } from '../../src/redis/errors';
import { guarded } from '../../src/redis/guarded';

/** Every store's Redis operation is bounded: an answer, or the store's unavailable error (a 503, key freed). */
describe('guarded', () => {
  it('when Redis answers in time, then the answer comes back', async () => {
    await expect(guarded('op', 1000, async () => 42)).resolves.toBe(42);
  });

  it('when Redis does not answer in time, then the call fails with the unavailable error naming the operation only', async () => {
    const started = Date.now();
    const err = await guarded('idempotency begin', 50, () => new Promise<never>(() => undefined)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toBe('idempotency begin: Redis did not answer within 50 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('when the operation fails or throws at once, then the unavailable error carries it as the cause', async () => {
    const cause = new Error('READONLY You can\'t write against a read only replica.');
    for (const op of [() => Promise.reject(cause), () => { throw cause; }]) {
      const err = await guarded('cache get', 1000, op as () => Promise<unknown>).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as Error & { cause?: unknown }).cause).toBe(cause);
    }
  });

  it('when a caller names its own unavailable error, then that error is raised', async () => {
    class CacheDown extends Error {}
    await expect(guarded('x', 10, () => new Promise<never>(() => undefined), CacheDown)).rejects.toBeInstanceOf(CacheDown);
  });
});
