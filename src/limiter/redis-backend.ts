import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../observability/logger';
import { guarded } from '../redis/guarded';
import { luaIn, withScripts } from '../redis/scripts';
import { reservedSlots, type CallClass, type Grant, type LimiterClasses, type LimiterLimits, type ReservationBackend } from './types';

type LimiterCommand = (meta: string, minute: string, day: string, ...args: string[]) => Promise<unknown>;
const SCRIPT = luaIn(__dirname)('tokengateUpstreamBudget', 'scheduler.lua', 3);

function command(redis: Redis | Cluster): LimiterCommand {
  return withScripts<{ tokengateUpstreamBudget: LimiterCommand }>(redis, [SCRIPT]).tokengateUpstreamBudget.bind(redis);
}

/** Redis failed, or did not answer within the command timeout: the resilient backend falls back on it. */
export class LimiterRedisError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'LimiterRedisError';
  }
}

export interface RedisBackendOptions {
  redis: Redis | Cluster;
  keyPrefix: string;
  endpointKey: string;
  limits: LimiterLimits;
  classes: LimiterClasses;
  logger: Logger;
  /** A Redis that does not answer within this is treated as unreachable (ms). */
  commandTimeoutMs?: number;
}

export interface RedisBackend extends ReservationBackend {
  /** Records starts made outside Redis (the fallback) so the shared counts include them. */
  addStarts(minuteCount: number, dayCount: number): Promise<void>;
  /** ioredis says the connection is usable, or still being set up (commands queue until it is). */
  connected(): boolean;
}

/** Keys hash-tagged per endpoint key so the script's three keys share a slot on Redis Cluster. */
export function limiterKeys(keyPrefix: string, endpointKey: string): [string, string, string] {
  const tag = `{${keyPrefix}:${endpointKey}}:limiter`;
  return [`${tag}:meta`, `${tag}:minute`, `${tag}:day`];
}

export function createRedisBackend(opts: RedisBackendOptions): RedisBackend {
  const { redis, limits, classes, logger } = opts;
  const run = command(redis);
  const keys = limiterKeys(opts.keyPrefix, opts.endpointKey);
  const timeoutMs = opts.commandTimeoutMs ?? 1000;
  const span = limits.windowMs + limits.marginMs;
  const daySpan = limits.dayWindowMs + limits.marginMs;
  /** The epoch of the state we last saw: how the script tells "emptied" from "fresh" (issue 4, item 4). */
  let knownEpoch = '';
  const exec = (...args: (string | number)[]) => guarded('upstream budget', timeoutMs, () => run(...keys, ...args.map(String)), LimiterRedisError);

  return {
    async reserve(cls: CallClass, maxWaitMs: number): Promise<Grant> {
      const reply = (await exec(
        'reserve', cls, limits.perWindow, limits.perDay, reservedSlots(classes, cls), span, daySpan,
        Math.max(0, maxWaitMs), knownEpoch, randomUUID(),
      )) as [number, string, string, number, string, string];
      const [granted, delayUs, epoch, emptied, slotUs, member] = reply;
      if (emptied === 1) {
        logger.warn('upstream budget state was lost in Redis: no upstream call for one full window', {
          endpointKey: opts.endpointKey, windowMs: span,
        });
      }
      knownEpoch = epoch;
      const delayMs = Number(delayUs) / 1000;
      if (granted !== 1) return { ok: false, delayMs };
      const slot = Number(slotUs);
      return {
        ok: true,
        delayMs,
        async confirm() {
          // Lateness on Redis' clock: independent of how long the reservation's own reply took.
          const [blocked, nowUs] = (await exec('confirm')) as [number, string];
          return blocked === 1 ? { blocked: true } : { blocked: false, lateMs: (Number(nowUs) - slot) / 1000 };
        },
        async release() {
          await exec('release', member);
        },
      };
    },

    async reconcile(minuteUsed: number, dayUsed: number): Promise<number> {
      return Number(await exec(
        'reconcile', minuteUsed, dayUsed, limits.windowMs, limits.dayWindowMs, span, daySpan, limits.perWindow, limits.perDay,
      ));
    },

    async block(): Promise<void> {
      await exec('block', span);
    },

    async addStarts(minuteCount: number, dayCount: number): Promise<void> {
      if (dayCount > 0 || minuteCount > 0) await exec('add', minuteCount, dayCount, span, daySpan);
    },

    connected: () => !['reconnecting', 'close', 'end'].includes(redis.status),
    fallbackMode: () => 0,
    async close(): Promise<void> {},
  };
}
