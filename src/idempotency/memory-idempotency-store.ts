import { randomUUID } from 'node:crypto';
import { inProgress } from './in-progress';
import { storedResponseJson } from './scrub';
import type { BeginOptions, BeginResult, CompleteResult, IdempotencyStore, IdempotencyStoreSettings, StoredResponse, TransitionResult, UnknownRecord, WriteContext } from './types';

export interface MemoryIdempotencyStoreOptions extends IdempotencyStoreSettings {
  /** Clock in ms; injectable for tests. */
  now?: () => number;
}

interface MemoryRecord {
  fp: string;
  state: 'in_progress' | 'completed' | 'unknown';
  owner: string | undefined;
  leaseUntil: number;
  invoice: string | undefined;
  attempts: number;
  reason: string;
  since: number;
  nextLook: number | undefined;
  context: WriteContext | undefined;
  started: number;
  /** JSON, as in Redis, so a replay can never alias an object the caller keeps mutating. */
  response: string | undefined;
  /** Completed, and what its write records beside the answer is to be re-applied (markFollowing). */
  follow?: boolean;
  expiresAt: number;
}

/**
 * IdempotencyStore in process memory (development mode, tests): the same transitions as the Lua scripts,
 * step for step (each method runs synchronously to completion, which gives the same atomicity).
 */
export function createMemoryIdempotencyStore(options: MemoryIdempotencyStoreOptions): IdempotencyStore {
  const now = options.now ?? Date.now;
  const { retentionMs, inProgressRetryAfterSec } = options;
  const records = new Map<string, MemoryRecord>();
  const id = (scope: string, key: string) => JSON.stringify([scope, key]);

  let ops = 0;
  /** Keys nobody sends again would stay forever in a long dev session: drop expired records now and then. */
  function sweep(): void {
    if (++ops % 256 !== 0) return;
    const t = now();
    for (const [k, rec] of records) if (rec.expiresAt <= t) records.delete(k);
  }
  function get(scope: string, key: string): MemoryRecord | undefined {
    const k = id(scope, key);
    const rec = records.get(k);
    if (rec && rec.expiresAt <= now()) {
      records.delete(k);
      return undefined;
    }
    return rec;
  }
  /** The owner's record, if `attempt` still owns an open key (in_progress, or unknown by lease expiry). */
  function owned(scope: string, key: string, attempt: string): MemoryRecord | undefined {
    const rec = get(scope, key);
    return rec && rec.owner === attempt && rec.state !== 'completed' ? rec : undefined;
  }

  function claim(scope: string, key: string, fp: string, opts: BeginOptions, resume: boolean): BeginResult {
    const t = now();
    const lease = Math.max(1, Math.floor(opts.leaseMs));
    const attempt = randomUUID();
    sweep();
    const rec = get(scope, key);
    if (!rec) {
      const invoice = opts.invoice || undefined;
      records.set(id(scope, key), {
        fp, state: 'in_progress', owner: attempt, leaseUntil: t + lease, invoice, attempts: 1,
        reason: '', since: 0, nextLook: undefined, response: undefined, expiresAt: t + Math.max(retentionMs, lease),
        context: opts.context ? { ...opts.context } : undefined, started: t,
      });
      return { kind: 'started', attempt, invoice, resumed: false };
    }
    if (rec.fp !== fp) return { kind: 'mismatch' };
    if (rec.state === 'completed') return { kind: 'completed', response: JSON.parse(rec.response ?? 'null') as StoredResponse, ...(rec.follow ? { following: true } : {}) };
    if (rec.state === 'in_progress') {
      if (rec.leaseUntil - t > 0) return inProgress(rec.leaseUntil - t, inProgressRetryAfterSec);
      expireLease(rec, t);
    }
    if (resume && rec.invoice) {
      Object.assign(rec, { state: 'in_progress', owner: attempt, leaseUntil: t + lease, attempts: rec.attempts + 1, started: t, expiresAt: t + Math.max(retentionMs, lease) });
      return { kind: 'started', attempt, invoice: rec.invoice, resumed: true };
    }
    return { kind: 'outcome_unknown', record: unknownRecord(rec, t) };
  }

  function unknownRecord(rec: MemoryRecord, t: number): UnknownRecord {
    return {
      invoice: rec.invoice, reason: rec.reason, sinceMs: rec.since, attempts: rec.attempts, context: rec.context && { ...rec.context }, startedMs: rec.started,
      nowMs: t, ...(rec.nextLook !== undefined ? { nextLookMs: rec.nextLook } : {}),
    };
  }

  /** Lease over: the owner may have sent the write before dying; it stays owner for a late complete(). */
  function expireLease(rec: MemoryRecord, t: number): void {
    Object.assign(rec, { state: 'unknown', reason: 'lease_expired', since: t, expiresAt: t + retentionMs });
  }

  /** The record the reconciler may still resolve or release: unknown, and not taken over since inspect. */
  function unknownAt(scope: string, key: string, attempts: number): MemoryRecord | undefined {
    const rec = get(scope, key);
    return rec && rec.state === 'unknown' && rec.attempts === attempts ? rec : undefined;
  }

  return {
    async begin(scope, key, fp, opts) {
      return claim(scope, key, fp, opts, false);
    },
    async retryUnknown(scope, key, fp, opts) {
      return claim(scope, key, fp, opts, true);
    },
    async complete(scope, key, attempt, response): Promise<CompleteResult> {
      const rec = owned(scope, key, attempt);
      if (!rec) return 'not_owner';
      const wasUnknown = rec.state === 'unknown';
      Object.assign(rec, { state: 'completed', response: storedResponseJson(response), owner: undefined, expiresAt: now() + retentionMs });
      return wasUnknown ? 'done_after_unknown' : 'done';
    },
    async markOutcomeUnknown(scope, key, attempt, record): Promise<TransitionResult> {
      const rec = owned(scope, key, attempt);
      if (!rec) return 'not_owner';
      const t = now();
      Object.assign(rec, { state: 'unknown', reason: record.reason, since: t, owner: undefined, expiresAt: t + retentionMs });
      if (record.invoice) rec.invoice = record.invoice;
      return 'done';
    },
    async abandon(scope, key, attempt): Promise<TransitionResult> {
      const rec = owned(scope, key, attempt);
      if (!rec) return 'not_owner';
      // A folding retry that sent nothing leaves the earlier attempt's unknown outcome in place.
      if (rec.attempts > 1) Object.assign(rec, { state: 'unknown', owner: undefined, expiresAt: now() + retentionMs });
      else records.delete(id(scope, key));
      return 'done';
    },
    async inspect(scope, key) {
      const rec = get(scope, key);
      if (!rec) return { state: 'absent' };
      if (rec.state === 'completed') {
        return rec.follow ? { state: 'completed', follow: { context: rec.context && structuredClone(rec.context), response: JSON.parse(rec.response ?? '') as StoredResponse } } : { state: 'completed' };
      }
      const t = now();
      if (rec.state === 'in_progress') {
        if (rec.leaseUntil - t > 0) return { state: 'in_progress', leaseRemainingMs: rec.leaseUntil - t };
        expireLease(rec, t);
      }
      return { state: 'unknown', record: unknownRecord(rec, t) };
    },
    async resolve(scope, key, attempts, response): Promise<TransitionResult> {
      const rec = unknownAt(scope, key, attempts);
      if (!rec) return 'not_owner';
      Object.assign(rec, { state: 'completed', response: storedResponseJson(response), owner: undefined, nextLook: undefined, expiresAt: now() + retentionMs, follow: true });
      return 'done';
    },
    async release(scope, key, attempts): Promise<TransitionResult> {
      if (!unknownAt(scope, key, attempts)) return 'not_owner';
      records.delete(id(scope, key));
      return 'done';
    },
    async setNextLook(scope, key, atMs) {
      const rec = get(scope, key);
      if (rec?.state === 'unknown') rec.nextLook = atMs;
    },
    async markFollowing(scope, key) {
      const rec = get(scope, key);
      if (rec?.state === 'completed') rec.follow = true;
    },
    async followed(scope, key) {
      const rec = get(scope, key);
      if (rec) delete rec.follow;
    },
  };
}
