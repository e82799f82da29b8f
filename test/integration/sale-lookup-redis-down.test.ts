import Redis from 'ioredis';
import { clientFor } from '../support/gateway';
import { freePort } from '../support/ports';
import { createMemoryScheduler, limiterSettings } from '../../src/limiter';
import { silentLogger } from '../../src/observability/logger';
import { createRedisSaleRecords } from '../../src/sale-records';
import { createFollowUpService } from '../../src/sales/follow-up-service';
import { createSaleLookup } from '../../src/sales/sale-lookup';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { StoreUnavailableError } from '../../src/idempotency';

/**
 * Guarantee 5 for the lifecycle: with the sale records' Redis unreachable, a sale can still be read (ownership
 * from the gateway's own record), and a refund refuses before anything is sent.
 */
describe('sale lookups while Redis is unreachable', () => {
  let sandbox: RunningSandbox;
  let redis: Redis;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    // Nothing listens on this port: every command fails as it would with Redis down.
    redis = new Redis({ port: await freePort(), lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  });
  afterAll(async () => {
    redis.disconnect();
    await sandbox.close();
  });

  it('when the records cannot be reached, then a sale is located and read from the gateway\'s record, and a refund throws StoreUnavailableError without a gateway call', async () => {
    const logger = silentLogger();
    const gateway = clientFor(sandbox);
    const { limits, classes } = limiterSettings({
      gateway: { ratePerMinute: 1000, rateWindowMs: 60_000, ratePerDay: 100_000, rateDayWindowMs: 86_400_000, rateMarginMs: 100 },
      limiter: { saleMaxWaitMs: 1000, readMaxWaitMs: 1000, saleReservedSlots: 0, expectedReplicas: 1 },
    } as Parameters<typeof limiterSettings>[0]);
    const budget = createMemoryScheduler({ endpointKey: 'v2', limits, classes, logger });
    const records = createRedisSaleRecords({ redis, keyPrefix: 'tgtest:down', opTimeoutMs: 300 });
    const lookup = createSaleLookup({ gateway, budget, records, logger, settings: { freshMs: 60_000, unknownKeyTtlMs: 60_000 } });
    const followUps = createFollowUpService({ gateway, budget, records, logger, fold: lookup.fold, voidWaitMs: 1000 });
    // Guarantee 5 degrades to the gateway's word for any caller: a bound shopper reads its own sale, not another's.
    const shopper = (custkey: string) => ({ sub: 'shopper', custkey, anyCustomer: false });
    try {
      const cust = sandbox.fixtures.firstCustomer().key;
      const pm = (sandbox.fixtures.paymentMethods(cust).find((p) => p.number.endsWith('2224')) as { key: string }).key;
      const sale = (await gateway.sale({ cardref: sandbox.fixtures.cardrefFor(cust, pm), amount: '5.00', custkey: cust })).value;
      const found = await lookup.locate(shopper(cust), sale.key);
      expect(found.record).toMatchObject({ customer: cust, state: 'captured', capturedCents: 500 });
      expect(found.detail?.key).toBe(sale.key);
      const read = await lookup.read(shopper(cust), sale.key);
      expect(read).toMatchObject({ freshness: { kind: 'bypass' }, facts: { key: sale.key, status: 'pending_settlement', capturedCents: 500 } });
      await expect(lookup.read(shopper('someone-else'), sale.key)).rejects.toMatchObject({ code: 'not_found' });
      await expect(followUps.refund(sale.key, 100, 'redis-down-refund')).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(sandbox.ledger.operations().filter((o) => o.trankey === sale.key)).toHaveLength(0);
    } finally {
      await budget.close();
      gateway.close();
    }
  });
});
