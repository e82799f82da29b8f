import type { Redis } from 'ioredis';
import type { RedisClient } from './connect';
import { guarded } from './guarded';
import { StoreUnavailableError } from './errors';

/** While replicas are short, how often INFO may be asked whether they are back (ms). */
const RECHECK_MS = 250;

/** How many replicas the master's INFO replication lists as online. */
export function onlineReplicas(info: string): number {
  return (info.match(/^slave\d+:.*\bstate=online\b/gm) ?? []).length;
}

/**
 * Resolves once every write this client sent so far is held by `replicas` replicas (Redis `WAIT`), and rejects
 * with StoreUnavailableError when fewer acknowledge within `timeoutMs`. Replication is asynchronous: a master that
 * fails over right after acknowledging a write can lose it, and a lost claim lets a retry send the write again.
 * WAIT covers every earlier write of the connection, so one call after a write's claim (and one after its
 * answer) covers the records issued with it. Undefined when nothing is waited for (no replicas configured).
 *
 * WAIT holds the connection it is sent on until enough replicas acknowledge or its timeout ends, and every
 * command of this process queued behind it waits too: with the replicas gone, each write would add a whole
 * timeout, and reads would stall behind them all (a burst of 6 sales held a read 5 s,
 * test/integration/redis-write-replicas.test.ts). So at most one WAIT is in flight: the writes that ask while one
 * is share the next, sent when it returns (it covers every write sent before it, theirs included), or are refused
 * with it when it came back short. And once one comes back short, none is sent until the master's
 * `INFO replication` (which never blocks) lists enough replicas online again, asked at most every 250 ms, one at
 * a time; until then writes are refused at once.
 */
export function replicatedWrites(redis: RedisClient | undefined, replicas: number, timeoutMs: number): (() => Promise<void>) | undefined {
  if (!redis || replicas <= 0 || redis.isCluster) return undefined;
  const single = redis as Redis;
  const short = (why: string) => new StoreUnavailableError(`replication: ${why}`);
  /** Set while the replicas are short: when INFO was last asked, and the answer awaited now. */
  let shortState: { askedAt: number; asking?: Promise<boolean> } | undefined;
  const back = async (): Promise<boolean> => {
    const info = String(await guarded('replication info', timeoutMs + 1000, () => single.info('replication')));
    return onlineReplicas(info) >= replicas;
  };
  let inFlight: Promise<number> | undefined;
  let next: Promise<number> | undefined;
  /** Replicas that acknowledged a WAIT sent after every write this client has sent so far (0: refused unsent). */
  const acknowledged = (): Promise<number> => {
    if (!inFlight) {
      // guarded: a Redis that is away fails at once like any store call, not after WAIT's own timeout.
      inFlight = guarded('replication', timeoutMs + 1000, () => single.wait(replicas, timeoutMs)).then((reply) => {
        const acked = Number(reply);
        // Short: from now on no WAIT is sent (the writes waiting for the next one included) until INFO says so.
        if (acked < replicas) shortState ??= { askedAt: Date.now() };
        return acked;
      }).finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    }
    next ??= inFlight.catch(() => undefined).then(() => {
      next = undefined;
      return shortState ? 0 : acknowledged();
    });
    return next;
  };
  return async () => {
    if (shortState) {
      const state = shortState;
      if (!state.asking && Date.now() - state.askedAt >= RECHECK_MS) {
        state.askedAt = Date.now();
        state.asking = back().catch(() => false).finally(() => {
          state.asking = undefined;
        });
      }
      if (!(state.asking && (await state.asking))) throw short(`fewer than ${replicas} Redis replicas online`);
      if (shortState === state) shortState = undefined;
    }
    const acked = await acknowledged();
    if (acked < replicas) throw short(`${acked} of ${replicas} Redis replicas held the write within ${timeoutMs} ms`);
  };
}
