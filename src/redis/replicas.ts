import type { Redis } from 'ioredis';
import type { RedisClient } from './connect';
import { guarded } from './guarded';
import { StoreUnavailableError } from '../idempotency/errors';

/**
 * Resolves once every write this client sent so far is held by `replicas` replicas (Redis `WAIT`), and rejects
 * with StoreUnavailableError when fewer acknowledge within `timeoutMs`. Replication is asynchronous: a master that
 * fails over right after acknowledging a write can lose it, and a lost claim lets a retry send the write again.
 * WAIT covers every earlier write of the connection, so one call after a write's claim (and one after its
 * answer) covers the records issued with it. Undefined when nothing is waited for (no replicas configured).
 */
export function replicatedWrites(redis: RedisClient | undefined, replicas: number, timeoutMs: number): (() => Promise<void>) | undefined {
  if (!redis || replicas <= 0 || redis.isCluster) return undefined;
  const single = redis as Redis;
  return async () => {
    // guarded: a Redis that is away fails at once like any store call, not after WAIT's own timeout.
    const acked = Number(await guarded('replication', timeoutMs + 1000, () => single.wait(replicas, timeoutMs)));
    if (acked < replicas) throw new StoreUnavailableError(`replication: ${acked} of ${replicas} Redis replicas held the write within ${timeoutMs} ms`);
  };
}
