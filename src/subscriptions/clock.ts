import type { Cluster, Redis } from 'ioredis';
import { guarded } from '../redis/guarded';

/**
 * tokengate's clock for everything that waits on dates (contract, "Subscriptions": `POST /test/clock`). In
 * production it is the wall clock and nothing else: no Redis read, no way to move it. In development and test an
 * offset (ms, only ever forward) is added, kept in Redis (`{<p>:clock}`) so every replica sharing the Redis sees
 * the same time; each replica reads it at most every `cacheMs` (its own advances are seen at once).
 */
export interface Clock {
  now(): Promise<number>;
  /** Moves the clock forward (development and test only); answers the new time. */
  advance(ms: number): Promise<number>;
  /** How far ahead of the wall clock it is (ms; 0 in production). */
  offset(): Promise<number>;
  readonly movable: boolean;
}

export function createWallClock(): Clock {
  return { now: async () => Date.now(), advance: async () => { throw new Error('the clock cannot move in production'); }, offset: async () => 0, movable: false };
}

export function createTestClock(options: { redis?: Redis | Cluster; keyPrefix: string; cacheMs?: number }): Clock {
  const { redis } = options;
  const key = `{${options.keyPrefix}:clock}`;
  const cacheMs = options.cacheMs ?? 200;
  let offset = 0;
  let readAt = -Infinity;
  const read = async (): Promise<number> => {
    if (!redis) return offset;
    if (Date.now() - readAt < cacheMs) return offset;
    const raw = await guarded('clock read', 2000, () => redis.get(key));
    offset = Number(raw ?? 0) || 0;
    readAt = Date.now();
    return offset;
  };
  return {
    movable: true,
    async now() {
      return Date.now() + (await read());
    },
    offset: read,
    async advance(ms) {
      if (redis) {
        offset = Number(await guarded('clock advance', 2000, () => redis.incrby(key, Math.floor(ms))));
        readAt = Date.now();
      } else offset += Math.floor(ms);
      return Date.now() + offset;
    },
  };
}

/**
 * The same clock, telling `seen` its offset whenever this replica reads or moves it: for what must stamp a time
 * synchronously (the settlements' due index, issue 39). The renewals read the clock every poll, so every replica
 * follows a jump within a poll; production's offset is always 0.
 */
export function observedClock(clock: Clock, seen: (offsetMs: number) => void): Clock {
  const note = async <T>(value: T): Promise<T> => {
    seen(await clock.offset());
    return value;
  };
  return {
    movable: clock.movable,
    offset: () => note(undefined).then(() => clock.offset()),
    now: async () => note(await clock.now()),
    advance: async (ms) => note(await clock.advance(ms)),
  };
}
