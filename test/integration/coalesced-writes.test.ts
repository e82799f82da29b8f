import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type Redis from 'ioredis';
import { createRedisEventLog, type EventDraft } from '../../src/events';
import { createRedisSaleRecords, type SaleRecord } from '../../src/sale-records';
import { connectRedis, deletePrefix, uniquePrefix } from '../support/redis';

/**
 * Issue 40, item 1: the sales answered in one turn of the event loop share one command for their batch index and
 * one for their payment events (redis/coalesce.ts); each still has its own written before its promise resolves.
 * Counted on a real connection: the script calls it sends.
 */
describe('writes of one turn of the event loop, coalesced', () => {
  let redis: Redis;
  let prefix: string;
  let sent: string[];
  beforeEach(() => {
    redis = connectRedis();
    prefix = uniquePrefix('coalesce');
    sent = [];
    // Which scripts go out: the first line of an EVAL's source, or an EVALSHA's digest.
    for (const name of ['eval', 'evalsha'] as const) {
      const original = redis[name].bind(redis) as (...args: unknown[]) => Promise<unknown>;
      (redis as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
        sent.push(String(args[0]).split('\n')[0] as string);
        return original(...args);
      };
    }
  });
  afterEach(async () => {
    await deletePrefix(redis, prefix);
    await redis.quit();
  });

  it('when 40 sales of one batch are recorded in one turn, then one command indexes them all, and each is in the index once its create resolves', async () => {
    const records = createRedisSaleRecords({ redis, keyPrefix: prefix });
    const batch = { type: 'batch' as const, key: `b${randomBytes(3).toString('hex')}`, sequence: '1', batchrefnum: '9' };
    const sale = (cents: number): SaleRecord => ({
      customer: 'c1', state: 'captured', authorizedCents: cents, capturedCents: cents, refundedCents: 0, pendingRefundCents: 0,
      fields: { refnum: '1', result_code: 'A', result: 'Approved', authcode: '1', amount: '1.00', batch },
    });
    const keys = Array.from({ length: 40 }, (_, i) => `tx${randomBytes(4).toString('hex')}${i}`);
    // Each create checks the index as soon as its own promise resolves.
    const seen = await Promise.all(keys.map(async (k) => {
      await records.create(k, sale(100));
      return redis.sismember(`{${prefix}:batch:${batch.key}}`, k);
    }));
    expect(seen).toEqual(keys.map(() => 1));
    // A fresh connection sends each script's source first (EVAL: its first line names it), then its digest.
    const digest = createHash('sha1').update(readFileSync(path.join(__dirname, '../../src/sale-records/lua/index-batch.lua'), 'utf8')).digest('hex');
    expect(sent.filter((s) => /index-batch/.test(s) || s === digest)).toHaveLength(1);
    // The settled batch finds every sale.
    expect(await records.settleBatch(batch.key)).toBe(40);
  });

  it('when 30 events are appended in one turn, one of them twice, then one command appends 30 and the repeated change once', async () => {
    const log = createRedisEventLog({ redis, keyPrefix: prefix, retentionMs: 3_600_000 });
    const drafts: EventDraft[] = Array.from({ length: 30 }, (_, i) => ({ type: 'sale.succeeded', change: `sale:${prefix}:${i}`, data: { key: `s${i}` } }));
    await Promise.all([...drafts.map((d) => log.append([d])), log.append([drafts[3] as EventDraft])]);
    const listed = await log.list(undefined, 100);
    expect(listed.map((e) => e.data)).toEqual(drafts.map((d) => d.data));
    expect(sent.filter((s) => /append-many/.test(s))).toHaveLength(1);
    // A later turn: an event already in the log is not appended again.
    await log.append([drafts[0] as EventDraft]);
    expect(await log.list(undefined, 100)).toHaveLength(30);
  });
});
