import { encodePendingWrite, type PendingWrite } from '../../src/reconcile/pending-write';
import { createMemoryPendingWrites, createRedisPendingWrites, type PendingWrites } from '../../src/reconcile/pending-writes';
import { declaredKeysOnly } from '../support/declared-keys';
import { connectRedis, suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/** The reconciler's due set: the same behaviour in memory and on a real Redis (issue 12). */
const { prefix, redis } = suiteRedis('pending');
// Its script runs checked too: a key it touches that its KEYS do not name fails it (support/declared-keys.ts).
const checked = declaredKeysOnly(connectRedis());
afterAll(() => checked.disconnect());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;
function write(over: Partial<PendingWrite> = {}): string {
  n += 1;
  return encodePendingWrite({ scope: 'u1', key: `k${n}-${Math.random()}`, ...over });
}

const factories: Array<[string, () => PendingWrites]> = [
  ['memory', () => createMemoryPendingWrites()],
  ['redis', () => createRedisPendingWrites({ redis, keyPrefix: `${prefix}:${Math.random()}`, flushMs: 50 })],
  ['redis, every key declared', () => createRedisPendingWrites({ redis: checked, keyPrefix: `${prefix}:${Math.random()}`, flushMs: 50 })],
];

for (const [name, make] of factories) {
  describe(`pending writes (${name})`, () => {
    let pending: PendingWrites;
    beforeEach(() => {
      pending = make();
    });

    test('when an attempt is tracked, then it is handed out only once its lease has ended', async () => {
      const m = write();
      await pending.track(m, Date.now() + 800);
      expect(await pending.claimDue(10, 1000)).toEqual([]);
      await sleep(900);
      const due = await pending.claimDue(10, 1000);
      expect(due.map((e) => e.member)).toEqual([m]);
      expect(due[0]?.write).toMatchObject({ scope: 'u1' });
    });

    test('when two replicas claim at once, then each due entry goes to exactly one of them', async () => {
      const members = Array.from({ length: 12 }, () => write());
      for (const m of members) await pending.track(m, Date.now() - 1);
      const [a, b] = await Promise.all([pending.claimDue(8, 5000), pending.claimDue(8, 5000)]);
      const all = [...a, ...b].map((e) => e.member).sort();
      expect(all).toEqual([...members].sort());
    });

    test('when the claiming replica dies, then the entry falls due again after the claim', async () => {
      const m = write();
      await pending.track(m, Date.now() - 1);
      expect(await pending.claimDue(10, 800)).toHaveLength(1);
      expect(await pending.claimDue(10, 800)).toHaveLength(0);
      await sleep(900);
      expect((await pending.claimDue(10, 800)).map((e) => e.member)).toEqual([m]);
    });

    test('when a retry tracks a key whose look is already planned, then the look is never postponed', async () => {
      const m = write();
      await pending.track(m, Date.now() + 60);
      await pending.track(m, Date.now() + 60_000);
      await sleep(100);
      expect((await pending.claimDue(10, 1000)).map((e) => e.member)).toEqual([m]);
    });

    test('when an attempt ends normally, then it is never handed out', async () => {
      const m = write();
      await pending.track(m, Date.now() - 1);
      await pending.untrack(m);
      expect(await pending.claimDue(10, 1000)).toEqual([]);
    });

    test('when attempts that were never unknown are forgotten, then their due entries go in one batch and unknown ones stay', async () => {
      const done = [write(), write(), write()];
      const open = write();
      const t = Date.now();
      for (const m of done) await pending.track(m, t - 1);
      await pending.markUnknown(open, t - 1000, t - 1);
      for (const m of done) pending.forget(m);
      pending.forget(open);
      // The batch goes within flushMs: nothing is handed out once it has (a claim would push the entries on).
      await eventually(async () => (await pending.claimDue(10, 0)).length === 0);
      expect(await pending.stats()).toEqual({ open: 1, oldestSinceMs: t - 1000 });
    });

    test('when outcomes become unknown, then they are counted once and the oldest is reported until resolved', async () => {
      const older = write();
      const newer = write();
      const t = Date.now();
      expect(await pending.markUnknown(older, t - 5000, t + 60_000)).toBe(true);
      expect(await pending.markUnknown(older, t, t + 60_000)).toBe(false);
      expect(await pending.markUnknown(newer, t - 1000, t + 60_000)).toBe(true);
      expect(await pending.stats()).toEqual({ open: 2, oldestSinceMs: t - 5000 });
      await pending.untrack(older);
      expect(await pending.stats()).toEqual({ open: 1, oldestSinceMs: t - 1000 });
      await pending.untrack(newer);
      expect(await pending.stats()).toEqual({ open: 0, oldestSinceMs: undefined });
    });

    test('when a look is rescheduled, then the entry waits until then', async () => {
      const m = write();
      await pending.track(m, Date.now() - 1);
      await pending.claimDue(10, 10);
      await pending.reschedule(m, Date.now() + 800);
      expect(await pending.claimDue(10, 1000)).toEqual([]);
      await sleep(900);
      expect(await pending.claimDue(10, 1000)).toHaveLength(1);
    });

    test('when outcomes are unknown, then they are listed oldest first; an operator\'s decision is kept and read back (issue 42)', async () => {
      const [a, b] = [write({ key: 'late' }), write({ key: 'early' })];
      await pending.markUnknown(a, 2000, Date.now() + 60_000);
      await pending.markUnknown(b, 1000, Date.now() + 60_000);
      expect((await pending.listUnknown(10)).map((u) => [u.write.key, u.sinceMs])).toEqual([['early', 1000], ['late', 2000]]);
      expect(await pending.listUnknown(1)).toHaveLength(1);
      expect(await pending.decisionOf(a)).toBeUndefined();
      await pending.keepDecision(a, { by: 'ops-alice', outcome: 'absent', reason: 'console' });
      expect(await pending.decisionOf(a)).toEqual({ by: 'ops-alice', outcome: 'absent', reason: 'console' });
    });
  });
}

test('when more members are forgotten than one command carries, then flush removes them all at once', async () => {
  const keyPrefix = `${prefix}:many`;
  const pending = createRedisPendingWrites({ redis, keyPrefix, flushMs: 60_000 });
  const members = Array.from({ length: 1200 }, () => write());
  for (const m of members) await pending.track(m, Date.now() + 60_000);
  for (const m of members) pending.forget(m);
  expect(await redis.zcard(`{${keyPrefix}:reconcile}:due`)).toBe(1200);
  await pending.flush();
  expect(await redis.zcard(`{${keyPrefix}:reconcile}:due`)).toBe(0);
});

test('when the due set holds something that is not a pending write, then it is dropped instead of retried forever', async () => {
  const keyPrefix = `${prefix}:junk`;
  const pending = createRedisPendingWrites({ redis, keyPrefix });
  await redis.zadd(`{${keyPrefix}:reconcile}:due`, '0', 'not json', '1', JSON.stringify({ scope: 'u1' }), '2', JSON.stringify(['u1']));
  expect(await pending.claimDue(10, 1000)).toEqual([]);
  expect(await redis.zcard(`{${keyPrefix}:reconcile}:due`)).toBe(0);
});
