import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { RateLimitInfo } from '../gateway/types';
import type { Logger } from '../observability/logger';
import { guarded } from '../redis/guarded';
import { luaIn, withScripts } from '../redis/scripts';
import { callerCaps, dayShareOf, isPaced, probeTimes, reservedSlots, type CallClass, type CallOutcome, type DayUsage, type Grant, type LimiterClasses, type LimiterLimits, type RefusalReason, type ReservationBackend, type ReserveRequest, windowFull } from './types';

type LimiterCommand = (...keysThenArgs: string[]) => Promise<unknown>;
const SCRIPT = luaIn(__dirname)('tokengateUpstreamBudget', 'scheduler.lua', 7);

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

/**
 * Keys hash-tagged per endpoint key so the script's keys share a slot on Redis Cluster: meta, the minute log,
 * the day log, and the day's read and background calls (day pacing), the three day logs as counts per bucket
 * (issue 40: new names, `…:counts`, so a rollout never meets the sorted sets `day:read` and `day:background`,
 * which expire when idle).
 */
export function limiterKeys(keyPrefix: string, endpointKey: string): [string, string, string, string, string] {
  const tag = `{${keyPrefix}:${endpointKey}}:limiter`;
  return [`${tag}:meta`, `${tag}:minute`, `${tag}:day:counts`, `${tag}:day:read:counts`, `${tag}:day:background:counts`];
}

/**
 * One caller's logs (per-caller share), under the same tag; `callerId` is already a hash (callerId()): its
 * minute span's entries (a sorted set) and its day's counts per bucket (`…:day`).
 */
export function callerKey(keyPrefix: string, endpointKey: string, callerId: string): [string, string] {
  const key = `{${keyPrefix}:${endpointKey}}:limiter:caller:${callerId}`;
  return [key, `${key}:day`];
}

export function createRedisBackend(opts: RedisBackendOptions): RedisBackend {
  const { redis, limits, classes, logger } = opts;
  const run = command(redis);
  const keys = limiterKeys(opts.keyPrefix, opts.endpointKey);
  const caps = callerCaps(limits, classes);
  const timeoutMs = opts.commandTimeoutMs ?? 1000;
  const span = limits.windowMs + limits.marginMs;
  const daySpan = limits.dayWindowMs + limits.marginMs;
  const probe = probeTimes(limits);
  /** The epoch of the state we last saw: how the script tells "emptied" from "fresh" (issue 4, item 4). */
  let knownEpoch = '';
  // Every command names all seven keys (Redis Cluster routes by them); without a caller the last two are ones no
  // call uses.
  const noCaller = callerKey(opts.keyPrefix, opts.endpointKey, '');
  const execFor = (caller: [string, string], args: (string | number)[]) =>
    guarded('upstream budget', timeoutMs, () => run(...keys, ...caller, ...args.map(String)), LimiterRedisError);
  const exec = (...args: (string | number)[]) => execFor(noCaller, args);

  return {
    async reserve(cls: CallClass, maxWaitMs: number, request: ReserveRequest): Promise<Grant> {
      const caller = request.caller !== undefined && isPaced(cls) ? request.caller : '';
      const key = caller === '' ? noCaller : callerKey(opts.keyPrefix, opts.endpointKey, caller);
      const reply = (await execFor(key, [
        'reserve', cls, limits.perWindow, limits.perDay, reservedSlots(classes, cls, limits.perWindow), span, daySpan,
        Math.max(0, maxWaitMs), knownEpoch, randomUUID(), dayShareOf(classes, cls), request.promise ? 1 : 0, caller,
        caps.perWindow, caps.perDay, probe.pollMs,
      ])) as [number, string, string, number, string, string, (RefusalReason | 'probing')?, number?];
      const [granted, delayUs, epoch, emptied, slotUs, member, reason, isProbe] = reply;
      if (emptied === 1) {
        logger.warn('upstream budget state was lost in Redis: no upstream call for one full window', {
          endpointKey: opts.endpointKey, windowMs: span,
        });
      }
      knownEpoch = epoch;
      const delayMs = Number(delayUs) / 1000;
      if (granted !== 1) return { ok: false, delayMs, reason: reason ?? 'max_wait' };
      const slot = Number(slotUs);
      return {
        ok: true,
        delayMs,
        probe: isProbe === 1,
        async outcome(o: CallOutcome, rateLimit?: RateLimitInfo) {
          if (o === 'rate_limited') {
            await exec('block', member, probe.baseMs, probe.maxMs, rateLimit?.minuteUsed ?? '', windowFull(rateLimit) ? 1 : 0, limits.windowMs, span, limits.perWindow, daySpan);
          }
          else if (isProbe === 1) await exec('settle', member, o === 'answered' ? 1 : 0);
        },
        async confirm() {
          // Lateness on Redis' clock: independent of how long the reservation's own reply took.
          const [blocked, nowUs] = (await exec('confirm', member)) as [number, string];
          return blocked === 1 ? { blocked: true } : { blocked: false, lateMs: (Number(nowUs) - slot) / 1000 };
        },
        async release() {
          await execFor(key, ['release', member, slotUs, daySpan, cls]);
        },
      };
    },

    async reconcile(minuteUsed: number, dayUsed: number): Promise<number> {
      return Number(await exec(
        'reconcile', minuteUsed, dayUsed, limits.windowMs, limits.dayWindowMs, span, daySpan, limits.perWindow, limits.perDay,
      ));
    },

    async addStarts(minuteCount: number, dayCount: number): Promise<void> {
      if (dayCount > 0 || minuteCount > 0) await exec('add', minuteCount, dayCount, span, daySpan);
    },

    async dayUsage(): Promise<DayUsage> {
      const [total, read, background] = (await exec('usage', daySpan)) as [number, number, number];
      return { total, read, background };
    },

    connected: () => !['reconnecting', 'close', 'end'].includes(redis.status),
    fallbackMode: () => 0,
    async close(): Promise<void> {},
  };
}
