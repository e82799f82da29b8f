import { randomBytes } from 'node:crypto';
import { NotFoundError } from '../../src/access';
import { silentLogger } from '../../src/observability/logger';
import { createMemoryWalletStore } from '../../src/wallet/memory-wallet-store';
import { createRedisWalletStore } from '../../src/wallet/redis-wallet-store';
import type { WalletStore } from '../../src/wallet/types';
import { createSaleGuard } from '../../src/wallet/sale-guard';
import { unwrapNotSent, WriteNotSentError } from '../../src/writes';
import { declaredKeysOnly } from '../support/declared-keys';
import { connectRedis, suiteRedis } from '../support/redis';

/**
 * The sale's side of the removal guard (guarantee 10) on real Redis: a removal waits for the attempts `sending`
 * on its card, and an attempt that could not send at once (its token had to be loaded, or it waited for budget
 * past its lease) re-checks atomically right before sending, so a removal that answered meanwhile stops it.
 * The memory store (development mode) keeps the same rules.
 */
const { prefix, redis } = suiteRedis('sale-guard');
// Its scripts run checked too: a key one touches that its KEYS do not name fails it (support/declared-keys.ts).
const checked = declaredKeysOnly(connectRedis());
afterAll(() => checked.disconnect());
const customer = () => `cust${randomBytes(4).toString('hex')}`;
const TTL = 60_000;

async function refused(p: Promise<unknown>): Promise<boolean> {
  try {
    await p;
    return false;
  } catch (err) {
    return err instanceof WriteNotSentError && unwrapNotSent(err) instanceof NotFoundError;
  }
}

const STORES: [string, () => WalletStore][] = [
  ['Redis', () => createRedisWalletStore({ redis, keyPrefix: prefix })],
  ['Redis, every key a script touches declared', () => createRedisWalletStore({ redis: checked, keyPrefix: prefix })],
  ['memory (development)', () => createMemoryWalletStore()],
];

describe.each(STORES)('the removal guard, for a sale, on %s', (_name, make) => {
  const store = make();
  const guard = createSaleGuard(store, { leaseMs: 400, sendMarginMs: 200 }, silentLogger());

  it('when a sale enters on a card being sent, then the removal waits for it; once it leaves, the removal goes on', async () => {
    const c = customer();
    const sale = guard.enter(c, 'pm1');
    expect(await sale.entered).toBe(true);
    const sending = await store.tombstone(c, 'pm1', TTL);
    expect(sending).toHaveLength(1);
    expect(await store.stillSending(c, sending)).toBe(1);
    await sale.beforeSend(); // entered before the tombstone and within its lease: it sends, the removal waits
    await sale.leave();
    expect(await store.stillSending(c, sending)).toBe(0);
  });

  it('when a card is removed, then a sale entering after is refused and records nothing', async () => {
    const c = customer();
    await store.tombstone(c, 'pm1', TTL);
    const sale = guard.enter(c, 'pm1');
    expect(await sale.entered).toBe(false);
    const other = guard.enter(c, 'pm2'); // another card of the customer still sells
    expect(await other.entered).toBe(true);
    await other.leave();
    // Nothing in flight on the customer: the refused attempt recorded nothing.
    expect(await store.tombstone(c, '', TTL)).toEqual([]);
  });

  it('when a sale waits for its token, then the removal does not wait for it, and the sale is refused before it sends', async () => {
    const c = customer();
    const sale = guard.enter(c, 'pm1');
    expect(await sale.entered).toBe(true);
    sale.waiting();
    await new Promise((r) => setTimeout(r, 20));
    expect(await store.tombstone(c, 'pm1', TTL)).toEqual([]);
    expect(await refused(sale.beforeSend())).toBe(true);
  });

  it('when a sale waited for budget past its lease, then it re-checks before sending and the removal that answered meanwhile stops it', async () => {
    const c = customer();
    const sale = guard.enter(c, 'pm1');
    expect(await sale.entered).toBe(true);
    await new Promise((r) => setTimeout(r, 450)); // queued for a slot longer than its lease
    const sending = await store.tombstone(c, 'pm1', TTL);
    expect(await store.stillSending(c, sending)).toBe(0); // the removal no longer waits for it
    expect(await refused(sale.beforeSend())).toBe(true);
  });

  it('when a customer is removed, then sales of any of its cards, and of a new card, are refused', async () => {
    const c = customer();
    const before = guard.enter(c, 'pm1');
    expect(await before.entered).toBe(true);
    expect(await store.tombstone(c, '', TTL)).toHaveLength(1);
    for (const pm of ['pm1', 'pm2', '']) expect(await guard.enter(c, pm).entered).toBe(false);
    expect(await store.isRemoved(c, 'pm9')).toBe(true);
  });
});
