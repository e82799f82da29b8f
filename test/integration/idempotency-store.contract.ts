import { randomBytes } from 'node:crypto';
import {
  fingerprintRequest,
  type BeginResult,
  type IdempotencyStore,
  type IdempotencyStoreSettings,
  type StoredResponse,
} from '../../src/idempotency';

/**
 * The idempotency store contract as a describe-factory, so the same tests hold every implementation: memory and
 * single-node Redis (idempotency-store-contract.test.ts), Redis Cluster (cluster-stores.test.ts).
 * `make` builds a store with the suite's settings ({ retentionMs: 60 s, inProgressRetryAfterSec: 2 }) plus overrides.
 */
export type MakeIdempotencyStore = (s?: Partial<IdempotencyStoreSettings>) => IdempotencyStore;

export const CONTRACT_SETTINGS: IdempotencyStoreSettings = { retentionMs: 60_000, inProgressRetryAfterSec: 2 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fp = fingerprintRequest('POST', '/v1/sales', { customer: 'c1', payment_method: 'pm1', amount: '10.00' });
const otherFp = fingerprintRequest('POST', '/v1/sales', { customer: 'c1', payment_method: 'pm1', amount: '11.00' });
const answer: StoredResponse = {
  status: 201,
  body: { type: 'transaction', key: 'tx1', result_code: 'A', creditcard: { number: 'xxxxxxxxxxxx2224' } },
  headers: { location: '/v1/sales/tx1' },
};
const lease = { leaseMs: 10_000, invoice: 'inv-1' };

function started(r: BeginResult): Extract<BeginResult, { kind: 'started' }> {
  if (r.kind !== 'started') throw new Error(`expected started, got ${r.kind}`);
  return r;
}

export function describeIdempotencyStoreContract(name: string, make: MakeIdempotencyStore): void {
  describe(`idempotency store (${name})`, () => {
    let store: IdempotencyStore;
    let key: string;
    beforeEach(() => {
      store = make();
      key = `k-${randomBytes(4).toString('hex')}`;
    });

    test('when a key is new, then begin starts it and a concurrent begin is told it is in progress', async () => {
      const first = started(await store.begin('u1', key, fp, lease));
      expect(first).toMatchObject({ invoice: 'inv-1', resumed: false });
      const second = await store.begin('u1', key, fp, lease);
      expect(second.kind).toBe('in_progress');
      if (second.kind === 'in_progress') {
        expect(second.retryAfterSec).toBe(2);
        expect(second.leaseRemainingMs).toBeGreaterThan(9_000);
      }
    });

    test('when the lease has less left than the configured hint, then Retry-After is capped by it', async () => {
      await store.begin('u1', key, fp, { leaseMs: 500 });
      expect(await store.begin('u1', key, fp, lease)).toMatchObject({ kind: 'in_progress', retryAfterSec: 1 });
    });

    test('when the attempt completed, then later begins replay the stored status, body and headers', async () => {
      const { attempt } = started(await store.begin('u1', key, fp, lease));
      expect(await store.complete('u1', key, attempt, answer)).toBe('done');
      expect(await store.begin('u1', key, fp, lease)).toEqual({ kind: 'completed', response: answer });
      expect(await store.begin('u1', key, fp, lease)).toEqual({ kind: 'completed', response: answer });
    });

    test('when the same key comes with a different request, then begin reports a mismatch in every state', async () => {
      const { attempt } = started(await store.begin('u1', key, fp, lease));
      expect(await store.begin('u1', key, otherFp, lease)).toEqual({ kind: 'mismatch' });
      await store.complete('u1', key, attempt, answer);
      expect(await store.begin('u1', key, otherFp, lease)).toEqual({ kind: 'mismatch' });
      expect(await store.retryUnknown('u1', key, otherFp, lease)).toEqual({ kind: 'mismatch' });
    });

    test('when two callers use the same key, then each has its own record (scoped by sub)', async () => {
      started(await store.begin('u1', key, fp, lease));
      started(await store.begin('u2', key, otherFp, lease));
    });

    test('when scope and key contain separators, then ("a:b","c") and ("a","b:c") never collide', async () => {
      started(await store.begin('a:b', `c${key}`, fp, lease));
      started(await store.begin('a', `b:c${key}`, otherFp, lease));
      started(await store.begin('{x}', `}{${key}`, fp, lease));
    });

    test('when the attempt abandons (nothing sent), then the next begin runs fresh', async () => {
      const { attempt } = started(await store.begin('u1', key, fp, lease));
      expect(await store.abandon('u1', key, attempt)).toBe('done');
      started(await store.begin('u1', key, otherFp, lease));
    });

    test('when the outcome is marked unknown, then begins report outcome_unknown and the attempt cannot complete', async () => {
      const { attempt } = started(await store.begin('u1', key, fp, lease));
      expect(await store.markOutcomeUnknown('u1', key, attempt, { reason: 'gateway_timeout' })).toBe('done');
      const again = await store.begin('u1', key, fp, lease);
      expect(again).toMatchObject({ kind: 'outcome_unknown', record: { invoice: 'inv-1', reason: 'gateway_timeout', attempts: 1 } });
      // A stamp of now, in ms since the epoch (not seconds, not zero): a minute's tolerance, so a busy box's stall
      // between the store's clock and this one is never taken for a wrong stamp (issue 41: it was 5 s).
      if (again.kind === 'outcome_unknown') expect(Math.abs(again.record.sinceMs - Date.now())).toBeLessThan(60_000);
      expect(await store.complete('u1', key, attempt, answer)).toBe('not_owner');
      expect(await store.abandon('u1', key, attempt)).toBe('not_owner');
      expect((await store.begin('u1', key, fp, lease)).kind).toBe('outcome_unknown');
    });

    test('when markOutcomeUnknown names an invoice, then it replaces the one given at begin', async () => {
      const { attempt } = started(await store.begin('u1', key, fp, lease));
      await store.markOutcomeUnknown('u1', key, attempt, { invoice: 'inv-2', reason: 'connection_reset' });
      expect(await store.begin('u1', key, fp, lease)).toMatchObject({ kind: 'outcome_unknown', record: { invoice: 'inv-2', reason: 'connection_reset' } });
    });

    test('when the owner vanishes and its lease expires, then begin reports outcome_unknown, never started', async () => {
      started(await store.begin('u1', key, fp, { leaseMs: 60, invoice: 'inv-1' }));
      await sleep(100);
      for (let i = 0; i < 3; i++) {
        expect(await store.begin('u1', key, fp, lease)).toMatchObject({ kind: 'outcome_unknown', record: { reason: 'lease_expired', invoice: 'inv-1' } });
      }
    });

    test('when a follow-up dies mid-call, then its unknown record keeps what a reconciler needs: op, customer, sale, amount, start', async () => {
      const before = Date.now();
      const context = { op: 'refund', customer: 'cust-9', sale: 'tx-original', amount: '2.50' };
      started(await store.begin('u1', key, fp, { leaseMs: 60, invoice: 'inv-7', context }));
      await sleep(100);
      const again = await store.begin('u1', key, fp, lease);
      expect(again).toMatchObject({ kind: 'outcome_unknown', record: { invoice: 'inv-7', reason: 'lease_expired', context } });
      if (again.kind === 'outcome_unknown') expect(Math.abs(again.record.startedMs - before)).toBeLessThan(60_000);
    });

    test('when a sale dies mid-call, then its unknown record keeps the payment method charged (a reconciled answer carries it), in begin and inspect alike', async () => {
      const context = { op: 'sale', customer: 'cust-9', amount: '12.00', payment_method: 'pm-42' };
      started(await store.begin('u1', key, fp, { leaseMs: 60, invoice: 'inv-8', context }));
      await sleep(100);
      expect(await store.begin('u1', key, fp, lease)).toMatchObject({ kind: 'outcome_unknown', record: { context } });
      expect(await store.inspect('u1', key)).toMatchObject({ state: 'unknown', record: { context } });
    });

    test('when a payment-key sale kept on the customer dies mid-call, then its unknown record says the key was kept (a bank method it saved is removed with its check), in begin and inspect alike', async () => {
      const context = { op: 'sale', customer: 'cust-9', amount: '31.00', save: true as const };
      started(await store.begin('u1', key, fp, { leaseMs: 60, invoice: 'inv-9', context }));
      await sleep(100);
      const again = await store.begin('u1', key, fp, lease);
      const inspected = await store.inspect('u1', key);
      expect([again.kind === 'outcome_unknown' && again.record.context, inspected.state === 'unknown' && inspected.record.context]).toEqual([context, context]);
    });

    test('when the lease expired but nobody took over, then the late complete still stores the real answer', async () => {
      const { attempt } = started(await store.begin('u1', key, fp, { leaseMs: 60 }));
      await sleep(100);
      expect((await store.begin('u1', key, fp, lease)).kind).toBe('outcome_unknown');
      // Told apart from a timely completion: the writer must then close the reconciler's unknown entry too.
      expect(await store.complete('u1', key, attempt, answer)).toBe('done_after_unknown');
      expect(await store.begin('u1', key, fp, lease)).toEqual({ kind: 'completed', response: answer });
    });

    test('when a stranger attempt id is used, then every transition answers not_owner and changes nothing', async () => {
      started(await store.begin('u1', key, fp, lease));
      expect(await store.complete('u1', key, 'nope', answer)).toBe('not_owner');
      expect(await store.markOutcomeUnknown('u1', key, 'nope', { reason: 'x' })).toBe('not_owner');
      expect(await store.abandon('u1', key, 'nope')).toBe('not_owner');
      expect(await store.complete('u1', `${key}-absent`, 'nope', answer)).toBe('not_owner');
      expect((await store.begin('u1', key, fp, lease)).kind).toBe('in_progress');
    });

    test('when folding retries an unknown outcome, then it starts once with the same invoice and replays after', async () => {
      const first = started(await store.begin('u1', key, fp, lease));
      await store.markOutcomeUnknown('u1', key, first.attempt, { reason: 'gateway_timeout' });
      const retry = started(await store.retryUnknown('u1', key, fp, lease));
      expect(retry).toMatchObject({ invoice: 'inv-1', resumed: true });
      expect(retry.attempt).not.toBe(first.attempt);
      expect((await store.retryUnknown('u1', key, fp, lease)).kind).toBe('in_progress');
      expect((await store.begin('u1', key, fp, lease)).kind).toBe('in_progress');
      expect(await store.complete('u1', key, retry.attempt, answer)).toBe('done');
      expect(await store.retryUnknown('u1', key, fp, lease)).toEqual({ kind: 'completed', response: answer });
    });

    test('when a folding retry abandons, then the key goes back to outcome_unknown (the first attempt may have charged)', async () => {
      const first = started(await store.begin('u1', key, fp, lease));
      await store.markOutcomeUnknown('u1', key, first.attempt, { reason: 'gateway_timeout' });
      const retry = started(await store.retryUnknown('u1', key, fp, lease));
      expect(await store.abandon('u1', key, retry.attempt)).toBe('done');
      expect(await store.begin('u1', key, fp, lease)).toMatchObject({ kind: 'outcome_unknown', record: { reason: 'gateway_timeout', attempts: 2 } });
    });

    test('when a folding retry dies past its lease, then the key is outcome_unknown again with both attempts counted', async () => {
      const first = started(await store.begin('u1', key, fp, lease));
      await store.markOutcomeUnknown('u1', key, first.attempt, { reason: 'gateway_timeout' });
      started(await store.retryUnknown('u1', key, fp, { leaseMs: 60 }));
      await sleep(100);
      expect(await store.begin('u1', key, fp, lease)).toMatchObject({ kind: 'outcome_unknown', record: { reason: 'lease_expired', attempts: 2 } });
    });

    test('when the unknown key has no invoice, then folding refuses to re-send it', async () => {
      const first = started(await store.begin('u1', key, fp, { leaseMs: 10_000 }));
      expect(first.invoice).toBeUndefined();
      await store.markOutcomeUnknown('u1', key, first.attempt, { reason: 'gateway_timeout' });
      expect(await store.retryUnknown('u1', key, fp, lease)).toMatchObject({ kind: 'outcome_unknown', record: { invoice: undefined } });
    });

    test('when retryUnknown meets a new key, then it simply starts it', async () => {
      expect(started(await store.retryUnknown('u1', key, fp, lease))).toMatchObject({ invoice: 'inv-1', resumed: false });
    });

    test('when an answer to store carries a full card number, then it is redacted before it is kept', async () => {
      const { attempt } = started(await store.begin('u1', key, fp, lease));
      const leaky: StoredResponse = { status: 201, body: { note: 'card 4000 1000 1111 2224', n: 4000100011112224, ok: 'xxxxxxxxxxxx2224' }, headers: {} };
      await store.complete('u1', key, attempt, leaky);
      const replay = await store.begin('u1', key, fp, lease);
      expect(JSON.stringify(replay)).not.toMatch(/4000.?1000.?1111.?2224/);
      expect(replay).toMatchObject({ kind: 'completed', response: { body: { ok: 'xxxxxxxxxxxx2224' } } });
    });

    describe('the reconciler transitions (issue 12)', () => {
      async function unknownKey(): Promise<number> {
        const { attempt } = started(await store.begin('u1', key, fp, lease));
        await store.markOutcomeUnknown('u1', key, attempt, { reason: 'gateway_timeout' });
        const seen = await store.inspect('u1', key);
        if (seen.state !== 'unknown') throw new Error(`expected unknown, got ${seen.state}`);
        return seen.record.attempts;
      }

      test('when a key is absent, completed or running, then inspect says so', async () => {
        expect(await store.inspect('u1', key)).toEqual({ state: 'absent' });
        const { attempt } = started(await store.begin('u1', key, fp, lease));
        expect(await store.inspect('u1', key)).toMatchObject({ state: 'in_progress' });
        await store.complete('u1', key, attempt, answer);
        expect(await store.inspect('u1', key)).toEqual({ state: 'completed' });
      });

      test('when the owner died past its lease, then inspect turns the key unknown, as a retry would', async () => {
        started(await store.begin('u1', key, fp, { leaseMs: 30 }));
        await sleep(60);
        expect(await store.inspect('u1', key)).toMatchObject({ state: 'unknown', record: { reason: 'lease_expired', attempts: 1 } });
        expect(await store.begin('u1', key, fp, lease)).toMatchObject({ kind: 'outcome_unknown', record: { reason: 'lease_expired' } });
      });

      test('when the write is found, then resolve makes every retry replay the real answer', async () => {
        const attempts = await unknownKey();
        expect(await store.resolve('u1', key, attempts, answer)).toBe('done');
        // Marked in the same step: the reconciler's follow-through re-applies what the write records beside its answer.
        expect(await store.inspect('u1', key)).toMatchObject({ state: 'completed', follow: { response: { status: 201, body: { key: 'tx1' } } } });
        expect(await store.begin('u1', key, fp, lease)).toMatchObject({ kind: 'completed', following: true, response: { status: 201, body: { key: 'tx1' } } });
        expect(await store.resolve('u1', key, attempts, answer)).toBe('not_owner');
        await store.followed('u1', key);
        expect(await store.inspect('u1', key)).toEqual({ state: 'completed' });
      });

      test('when the write is proven absent, then release frees the key and a retry starts fresh', async () => {
        const attempts = await unknownKey();
        expect(await store.release('u1', key, attempts)).toBe('done');
        started(await store.begin('u1', key, fp, lease));
        expect(await store.release('u1', key, attempts)).toBe('not_owner');
      });

      test('when a folding retry took the key over after inspect, then resolve and release are refused', async () => {
        const attempts = await unknownKey();
        started(await store.retryUnknown('u1', key, fp, lease));
        expect(await store.release('u1', key, attempts)).toBe('not_owner');
        expect(await store.resolve('u1', key, attempts, answer)).toBe('not_owner');
        expect(await store.inspect('u1', key)).toMatchObject({ state: 'in_progress' });
      });

      test('when the reconciler plans its next look, then an outcome_unknown begin reports it with the store clock', async () => {
        await unknownKey();
        const at = Date.now() + 90_000;
        await store.setNextLook('u1', key, at);
        const again = await store.begin('u1', key, fp, lease);
        expect(again).toMatchObject({ kind: 'outcome_unknown', record: { nextLookMs: at } });
        if (again.kind === 'outcome_unknown') expect(Math.abs((again.record.nowMs ?? 0) - Date.now())).toBeLessThan(60_000);
      });

      test('when a completed key\'s follow-through is marked pending, then inspect hands the reconciler its answer and context, a replay says so, and followed clears it; a key not completed is never marked', async () => {
        const context = { op: 'sale', customer: 'c1', amount: '10.00', payment_method: 'pm1' };
        await store.markFollowing('u1', key);
        expect(await store.inspect('u1', key)).toEqual({ state: 'absent' });
        const { attempt } = started(await store.begin('u1', key, fp, { ...lease, context }));
        await store.markFollowing('u1', key);
        expect(await store.inspect('u1', key)).toMatchObject({ state: 'in_progress' });
        await store.complete('u1', key, attempt, answer);
        expect(await store.inspect('u1', key)).toEqual({ state: 'completed' });
        expect(await store.begin('u1', key, fp, lease)).not.toHaveProperty('following');
        await store.markFollowing('u1', key);
        expect(await store.inspect('u1', key)).toMatchObject({ state: 'completed', follow: { context, response: { status: 201, body: { key: 'tx1' } } } });
        expect(await store.begin('u1', key, fp, lease)).toMatchObject({ kind: 'completed', following: true, response: { status: 201 } });
        await store.followed('u1', key);
        expect(await store.inspect('u1', key)).toEqual({ state: 'completed' });
        expect(await store.begin('u1', key, fp, lease)).not.toHaveProperty('following');
      });

      test('when an owner past its lease completes late, then the reconciler can no longer release the key', async () => {
        const { attempt } = started(await store.begin('u1', key, fp, { leaseMs: 30 }));
        await sleep(60);
        const seen = await store.inspect('u1', key);
        expect(seen.state).toBe('unknown');
        await store.complete('u1', key, attempt, answer);
        expect(await store.release('u1', key, seen.state === 'unknown' ? seen.record.attempts : 0)).toBe('not_owner');
        expect((await store.begin('u1', key, fp, lease)).kind).toBe('completed');
      });
    });

    test('when the retention passes, then the key is forgotten', async () => {
      // Long enough that a stalled box still replays it before the retention ends.
      const short = make({ retentionMs: 800 });
      const { attempt } = started(await short.begin('u1', key, fp, { leaseMs: 400 }));
      await short.complete('u1', key, attempt, answer);
      expect((await short.begin('u1', key, fp, lease)).kind).toBe('completed');
      await sleep(900);
      started(await short.begin('u1', key, otherFp, lease));
    });
  });
}
