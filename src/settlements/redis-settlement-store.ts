import type { Cluster, Redis } from 'ioredis';
import { guarded } from '../redis/guarded';
import { withSettlementScripts } from './scripts';
import { SETTLEMENT_TTL_MS, type Settlement, type SettlementLine, type SettlementStore, type SettlementSummary } from './types';

export interface RedisSettlementStoreOptions {
  redis: Redis | Cluster;
  keyPrefix: string;
  ttlMs?: number;
  opTimeoutMs?: number;
  now?: () => number;
}

/**
 * SettlementStore on Redis, every key under one hash tag `{<prefix>:settlements}` (one Cluster slot, so each
 * script's keys share it): `:s:<batch>` (hash: summary, lines as JSON), `:list` (sorted set: the batch's close
 * ms → batch), `:claim:<batch>` (the replica reading it). Batch keys are the gateway's, URI-encoded.
 */
export function createRedisSettlementStore(options: RedisSettlementStoreOptions): SettlementStore {
  const redis = withSettlementScripts(options.redis);
  const ttlMs = options.ttlMs ?? SETTLEMENT_TTL_MS;
  const now = options.now ?? Date.now;
  const timeoutMs = options.opTimeoutMs ?? 2000;
  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`settlements ${what}`, timeoutMs, op);
  const tag = `{${options.keyPrefix}:settlements}`;
  const settlementKey = (batch: string) => `${tag}:s:${encodeURIComponent(batch)}`;
  const claimKey = (batch: string) => `${tag}:claim:${encodeURIComponent(batch)}`;
  const listKey = `${tag}:list`;
  const sweptKey = `${tag}:swept`;
  const sweepClaimKey = `${tag}:sweep`;

  return {
    async get(batch) {
      const [summary, lines] = await call('get', () => redis.hmget(settlementKey(batch), 'summary', 'lines'));
      if (!summary || !lines) return undefined;
      return { ...(JSON.parse(summary) as SettlementSummary), lines: JSON.parse(lines) as SettlementLine[] };
    },
    async list(after, limit) {
      let start = 0;
      if (after !== undefined) {
        const rank = await call('rank', () => redis.zrevrank(listKey, after));
        if (rank === null) return [];
        start = rank + 1;
      }
      const batches = await call('list', () => redis.zrevrange(listKey, start, start + limit - 1));
      if (batches.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const b of batches) pipeline.hget(settlementKey(b), 'summary');
      const replies = (await call('summaries', () => pipeline.exec())) ?? [];
      return replies.flatMap(([err, value]) => (err || typeof value !== 'string' ? [] : [JSON.parse(value) as SettlementSummary]));
    },
    async claim(batch, owner, claimTtlMs) {
      const answer = await call('claim', () => redis.tgSettleClaim(settlementKey(batch), claimKey(batch), owner, claimTtlMs));
      return answer === 'kept' || answer === 'busy' ? answer : 'claimed';
    },
    async save(settlement: Settlement, owner, closedMs) {
      const { lines, ...summary } = settlement;
      const kept = await call('save', () =>
        redis.tgSettleSave(settlementKey(settlement.batch), listKey, claimKey(settlement.batch), settlement.batch, JSON.stringify(summary), JSON.stringify(lines), closedMs, ttlMs, owner, now() - ttlMs),
      );
      return kept === 1;
    },
    async release(batch, owner) {
      await call('release', () => redis.tgSettleRelease(claimKey(batch), owner));
    },
    async amend(batch, lines) {
      if (lines.length === 0) return [];
      const changed = await call('amend', () => redis.tgSettleAmend(settlementKey(batch), JSON.stringify(lines)));
      // cjson writes an empty array as {}.
      const parsed = JSON.parse(String(changed)) as SettlementLine[] | Record<string, never>;
      return Array.isArray(parsed) ? parsed : [];
    },
    async claimSweep(owner, dueSinceMs, claimTtlMs) {
      return Number(await call('sweep claim', () => redis.tgSettleSweepClaim(sweptKey, sweepClaimKey, owner, dueSinceMs, claimTtlMs))) === 1;
    },
    async sweepDone(owner, endedMs) {
      await call('sweep done', () => redis.tgSettleSweepDone(sweptKey, sweepClaimKey, owner, endedMs, ttlMs));
    },
  };
}
