import Redis from 'ioredis';
import { Registry } from 'prom-client';
import { createRedisScheduler, type LimiterLimits } from '../../src/limiter';
import { silentLogger } from '../../src/observability/logger';
import { createRedisSaleRecords } from '../../src/sale-records';
import { createRedisWalletStore } from '../../src/wallet/redis-wallet-store';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis';

/**
 * What the sale path's scripts cost Redis (issue 40 item 1: Redis's own CPU per sale), counted exactly on a
 * redis-server of this file alone (INFO commandstats: every command, the ones Lua runs included), and that the
 * cheaper commands keep every TTL rule they replace: a key gets at least its TTL, never a shorter one.
 */
let server: PrivateRedis;
let redis: Redis;
beforeAll(async () => {
  server = await startPrivateRedis();
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

/** Commands Redis ran during `fn` (client and Lua), by name, INFO and the script call itself left out. */
async function commandsDuring(fn: () => Promise<unknown>): Promise<Record<string, number>> {
  const stats = async () => {
    const out: Record<string, number> = {};
    for (const line of (await redis.info('commandstats')).split('\n')) {
      const m = /^cmdstat_([^:]+):calls=(\d+),/.exec(line.trim());
      if (m) out[m[1]!] = Number(m[2]);
    }
    return out;
  };
  const before = await stats();
  await fn();
  const after = await stats();
  const out: Record<string, number> = {};
  for (const [cmd, n] of Object.entries(after)) {
    const d = n - (before[cmd] ?? 0);
    if (d > 0 && cmd !== 'info' && cmd !== 'evalsha' && cmd !== 'eval') out[cmd] = d;
  }
  return out;
}
const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);

describe('the removal guard a sale enters', () => {
  const store = () => createRedisWalletStore({ redis, keyPrefix: 'cost' });
  const guardKey = (c: string) => `{cost:cust:${c}}:guard`;

  it('when a sale enters a customer\'s guard, then Redis runs 4 commands (both tombstones in one read, the TTL in one command) and the guard gets its TTL', async () => {
    const commands = await commandsDuring(() => store().enter('c-fresh', 'pm1', 'a1', 'sending', 8000));
    expect(commands).toEqual({ hmget: 1, time: 1, hset: 1, pexpire: 1 });
    const ttl = await redis.pttl(guardKey('c-fresh'));
    expect(ttl).toBeGreaterThan(60_000);
    expect(ttl).toBeLessThanOrEqual(68_000);
  });

  it('when a guard already has a longer TTL (a tombstone\'s), then entering never shortens it; a shorter one is lengthened; one with none gets one', async () => {
    const s = store();
    await redis.hset(guardKey('c-long'), 'rm:other', '1');
    await redis.pexpire(guardKey('c-long'), 3_600_000);
    expect(await s.enter('c-long', 'pm1', 'a1', 'sending', 8000)).toBe(true);
    expect(await redis.pttl(guardKey('c-long'))).toBeGreaterThan(3_500_000);

    await redis.hset(guardKey('c-short'), 'fly:x', 'pm|sending|1');
    await redis.pexpire(guardKey('c-short'), 1000);
    expect(await s.enter('c-short', 'pm1', 'a1', 'sending', 8000)).toBe(true);
    expect(await redis.pttl(guardKey('c-short'))).toBeGreaterThan(60_000);

    await redis.hset(guardKey('c-none'), 'fly:x', 'pm|sending|1');
    expect(await s.enter('c-none', 'pm1', 'a1', 'sending', 8000)).toBe(true);
    expect(await redis.pttl(guardKey('c-none'))).toBeGreaterThan(60_000);
  });

  it('when the payment method or the customer was removed, then the sale is refused; a card not stored yet is refused only for the customer', async () => {
    const s = store();
    await redis.hset(guardKey('c-rm'), 'rm:pm1', '1');
    expect(await s.enter('c-rm', 'pm1', 'a1', 'sending', 8000)).toBe(false);
    expect(await s.enter('c-rm', 'pm2', 'a2', 'sending', 8000)).toBe(true);
    expect(await s.enter('c-rm', '', 'a3', 'sending', 8000)).toBe(true);
    await redis.hset(guardKey('c-rm'), 'deleted', '');
    expect(await s.enter('c-rm', 'pm2', 'a4', 'sending', 8000)).toBe(false);
    expect(await s.enter('c-rm', '', 'a5', 'sending', 8000)).toBe(false);
  });
});

describe('the record of a sale', () => {
  it('when a sale\'s record is made with its gateway fields, then Redis runs 4 commands (one HSET) and the record holds every field', async () => {
    const records = createRedisSaleRecords({ redis, keyPrefix: 'cost' });
    const record = { customer: 'c1', state: 'captured' as const, authorizedCents: 1000, capturedCents: 1000, refundedCents: 0, pendingRefundCents: 0, fields: { refnum: '7', result_code: 'A', result: 'Approved', authcode: 'x', amount: '10.00' } };
    const commands = await commandsDuring(() => records.create('s1', record as never));
    expect(commands).toEqual({ exists: 1, time: 1, hset: 1, pexpire: 1 });
    const got = await records.get('s1');
    expect(got).toMatchObject({ customer: 'c1', state: 'captured', capturedCents: 1000 });
    expect(got?.fields).toMatchObject({ refnum: '7', result: 'Approved', amount: '10.00' });
  });
});

describe('the budget slot of a sale', () => {
  const LIMITS: LimiterLimits = { perWindow: 1000, windowMs: 60_000, perDay: 100_000, dayWindowMs: 86_400_000, marginMs: 1000 };
  const ok = async () => ({ value: 'ok', rateLimit: undefined, host: 'test', status: 200 });

  it('when a sale reserves a slot, then the script runs 12 commands (no PTTL, the day bounds read once, one HSET of the meta) and every budget log keeps a TTL of at least its span, never a shorter one', async () => {
    const keyPrefix = 'cost-limiter';
    const s = createRedisScheduler({
      redis, keyPrefix, endpointKey: 'v2', limits: LIMITS, classes: { saleMaxWaitMs: 3000, readMaxWaitMs: 3000, saleReservedSlots: 1 },
      logger: silentLogger(), registry: new Registry(), expectedReplicas: 1, commandTimeoutMs: 1000, probeIntervalMs: 100,
    });
    try {
      // The first slot makes the logs: each gets its TTL.
      await s.run('sale', ok);
      const keys = await redis.keys(`*${keyPrefix}*`);
      const minute = keys.find((k) => k.endsWith(':limiter:minute'))!;
      const day = keys.find((k) => k.endsWith(':limiter:day:counts'))!;
      expect(await redis.pttl(minute)).toBeGreaterThan(60_000);
      expect(await redis.pttl(day)).toBeGreaterThan(86_400_000);
      // Later ones, several within one millisecond at saturation as here: one PEXPIRE per log, whatever the
      // clock says.
      for (let i = 0; i < 5; i++) {
        const commands = await commandsDuring(() => Promise.all([s.run('sale', ok), s.run('sale', ok), s.run('sale', ok)]));
        expect(commands).toMatchObject({ time: 3, pexpire: 6, hset: 3 });
        expect(commands.pttl).toBeUndefined();
      }
      const commands = await commandsDuring(() => s.run('sale', ok));
      expect(commands).toEqual({ time: 1, hmget: 2, zremrangebyscore: 1, zcard: 1, hincrby: 3, zadd: 1, pexpire: 2, hset: 1 });
      expect(total(commands)).toBe(12);
      expect(await redis.pttl(minute)).toBeGreaterThan(60_000);
      expect(await redis.pttl(day)).toBeGreaterThan(86_400_000);
      // A longer TTL is never shortened.
      await redis.pexpire(minute, 10_000_000);
      await redis.pexpire(day, 100_000_000);
      await s.run('sale', ok);
      expect(await redis.pttl(minute)).toBeGreaterThan(9_000_000);
      expect(await redis.pttl(day)).toBeGreaterThan(99_000_000);
    } finally {
      await s.close();
    }
  });
});
