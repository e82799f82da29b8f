import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { guarded } from '../redis/guarded';
import { luaIn, withScripts } from '../redis/scripts';
import { decodePendingWrite, type PendingWrite } from './pending-write';

/**
 * The writes the reconciler watches (issue 12). Two sorted sets under one hash tag (one Cluster slot):
 *   due      member → when it should be looked at next (lease end, next look, or a claim's end)
 *   unknown  member → since when its outcome has been unknown (the open count and the oldest age)
 * Members are encoded PendingWrites. The sets are hints: the idempotency record is the truth, and the
 * reconciler drops an entry whose record is already final.
 */
export interface DueEntry {
  member: string;
  write: PendingWrite;
}

export interface PendingStats {
  open: number;
  /** Since when the oldest open unknown outcome has been unknown (ms since the epoch). */
  oldestSinceMs: number | undefined;
}

export interface PendingWrites {
  /**
   * An attempt starts (due when its lease ends, so a replica that dies mid-call is noticed), or its outcome
   * became unknown (due now). Only ever moves an entry's look EARLIER: a retry of a key whose next look is
   * planned never postpones it.
   */
  track(member: string, dueAtMs: number): Promise<void>;
  /** The attempt ended with a known answer, or proved nothing was sent: nothing to reconcile. */
  untrack(member: string): Promise<void>;
  /**
   * The attempt ended and its outcome was never unknown (the common completion): only its due entry exists.
   * Deferred and not awaited: removed with others in one ZREM within `flushMs`, off the write's path. Lost
   * (replica killed, Redis down), the entry falls due at the lease end and the reconciler drops it, the record
   * being final; a completed key never starts again, so a late removal can never hide a new attempt.
   */
  forget(member: string): void;
  /** Sends what forget() still holds (shutdown). */
  flush(): Promise<void>;
  /**
   * The outcome became unknown at `sinceMs` (kept if already set); the next look is at `lookAtMs`.
   * True when this call opened it (the first to see it), for counting each unknown outcome once.
   */
  markUnknown(member: string, sinceMs: number, lookAtMs: number): Promise<boolean>;
  reschedule(member: string, atMs: number): Promise<void>;
  /**
   * Up to `limit` entries whose look is due, each claimed for `claimMs` (its due time pushed forward) so that
   * no other replica takes it meanwhile and it comes back if this replica dies.
   */
  claimDue(limit: number, claimMs: number): Promise<DueEntry[]>;
  stats(): Promise<PendingStats>;
  /**
   * Whether some tracked write is due before `atMs` (an attempt is due at its lease end: one due before
   * start + lease began before start) or its outcome is unknown: a write tokengate may have sent but not heard of.
   */
  unresolvedBefore(atMs: number): Promise<boolean>;
  /** The open unknown outcomes, oldest first (at most `limit`), with since when each is unknown. */
  listUnknown(limit: number): Promise<Array<{ write: PendingWrite; sinceMs: number }>>;
  /**
   * Keeps an operator's decision on a write (issue 42: who decided what, and when), in `{<prefix>:reconcile}:decided`
   * (a hash: member → JSON), for as long as the deployment keeps it (operators' decisions are rare and audited).
   */
  keepDecision(member: string, decision: Record<string, unknown>): Promise<void>;
  /** The decision kept for a write, if any. */
  decisionOf(member: string): Promise<Record<string, unknown> | undefined>;
}

interface Commands {
  tgReconcileClaimDue(due: string, limit: number, claimMs: number): Promise<unknown>;
}
const SCRIPTS = [luaIn(path.join(__dirname, 'lua'))('tgReconcileClaimDue', 'claim-due.lua', 1)];

/** Splits claimed members into entries and members that are not ours (dropped, never retried forever). */
function decodeAll(members: string[]): { entries: DueEntry[]; invalid: string[] } {
  const entries: DueEntry[] = [];
  const invalid: string[] = [];
  for (const member of members) {
    const write = decodePendingWrite(member);
    if (write) entries.push({ member, write });
    else invalid.push(member);
  }
  return { entries, invalid };
}

/** [member, score, member, score, …] → the writes among them that are ours, with their scores. */
function pairs(flat: string[]): Array<{ write: PendingWrite; sinceMs: number }> {
  const out: Array<{ write: PendingWrite; sinceMs: number }> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const write = decodePendingWrite(flat[i] as string);
    if (write) out.push({ write, sinceMs: Number(flat[i + 1]) });
  }
  return out;
}

/** Every call is bounded like the idempotency store's: Redis trouble is StoreUnavailableError (503, key freed). */
export function createRedisPendingWrites(options: { redis: Redis | Cluster; keyPrefix: string; opTimeoutMs?: number; flushMs?: number }): PendingWrites {
  const client = withScripts<Commands>(options.redis, SCRIPTS);
  const timeoutMs = options.opTimeoutMs ?? 2000;
  const call = <T>(what: string, op: (r: typeof client) => Promise<T>) => guarded(`pending writes ${what}`, timeoutMs, () => op(client));
  const tag = `{${options.keyPrefix}:reconcile}`;
  const due = `${tag}:due`;
  const unknown = `${tag}:unknown`;
  const decided = `${tag}:decided`;
  const ms = (t: number) => String(Math.round(t));
  const flushMs = options.flushMs ?? 100;
  let forgotten = new Set<string>();
  let flushTimer: NodeJS.Timeout | undefined;
  async function flush(): Promise<void> {
    clearTimeout(flushTimer);
    flushTimer = undefined;
    const members = [...forgotten];
    forgotten = new Set();
    for (let i = 0; i < members.length; i += 500) {
      // A failure loses nothing that matters: the reconciler drops these entries at their lease end.
      await call('forget', (r) => r.zrem(due, ...members.slice(i, i + 500))).catch(() => undefined);
    }
  }
  return {
    async track(member, dueAtMs) {
      await call('track', (r) => r.zadd(due, 'LT', ms(dueAtMs), member));
    },
    async untrack(member) {
      await call('untrack', (r) => Promise.all([r.zrem(due, member), r.zrem(unknown, member)]));
    },
    forget(member) {
      forgotten.add(member);
      flushTimer ??= setTimeout(() => void flush(), flushMs).unref();
    },
    flush,
    async markUnknown(member, sinceMs, lookAtMs) {
      const [added] = await call('markUnknown', (r) => Promise.all([r.zadd(unknown, 'NX', ms(sinceMs), member), r.zadd(due, ms(lookAtMs), member)]));
      return Number(added) === 1;
    },
    async reschedule(member, atMs) {
      await call('reschedule', (r) => r.zadd(due, 'XX', ms(atMs), member));
    },
    async claimDue(limit, claimMs) {
      const reply = (await call('claimDue', (r) => r.tgReconcileClaimDue(due, limit, Math.round(claimMs)))) as string[];
      const { entries, invalid } = decodeAll(reply.filter((_, i) => i % 2 === 0));
      if (invalid.length > 0) await call('drop', (r) => r.zrem(due, ...invalid));
      return entries;
    },
    async stats() {
      const [open, oldest] = await call('stats', (r) => Promise.all([r.zcard(unknown), r.zrange(unknown, '0', '0', 'WITHSCORES')]));
      return { open, oldestSinceMs: oldest.length === 2 ? Number(oldest[1]) : undefined };
    },
    async unresolvedBefore(atMs) {
      const [open, due_] = await call('unresolvedBefore', (r) => Promise.all([r.zcard(unknown), r.zcount(due, '-inf', ms(atMs))]));
      return open > 0 || due_ > 0;
    },
    async listUnknown(limit) {
      const flat = await call('listUnknown', (r) => r.zrange(unknown, '0', String(Math.max(0, limit - 1)), 'WITHSCORES'));
      return pairs(flat);
    },
    async keepDecision(member, decision) {
      await call('keepDecision', (r) => r.hset(decided, member, JSON.stringify(decision)));
    },
    async decisionOf(member) {
      const raw = await call('decisionOf', (r) => r.hget(decided, member));
      return raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
    },
  };
}

/** The same in process memory (development mode, tests). */
export function createMemoryPendingWrites(options: { now?: () => number } = {}): PendingWrites {
  const now = options.now ?? Date.now;
  const due = new Map<string, number>();
  const unknown = new Map<string, number>();
  const decisions = new Map<string, string>();
  return {
    async track(member, dueAtMs) {
      const at = due.get(member);
      if (at === undefined || dueAtMs < at) due.set(member, dueAtMs);
    },
    async untrack(member) {
      due.delete(member);
      unknown.delete(member);
    },
    forget(member) {
      due.delete(member);
    },
    async flush() {},
    async markUnknown(member, sinceMs, lookAtMs) {
      const added = !unknown.has(member);
      if (added) unknown.set(member, sinceMs);
      due.set(member, lookAtMs);
      return added;
    },
    async reschedule(member, atMs) {
      if (due.has(member)) due.set(member, atMs);
    },
    async claimDue(limit, claimMs) {
      const t = now();
      const picked = [...due].filter(([, at]) => at <= t).sort((a, b) => a[1] - b[1]).slice(0, limit).map(([m]) => m);
      for (const m of picked) due.set(m, t + claimMs);
      const { entries, invalid } = decodeAll(picked);
      for (const m of invalid) due.delete(m);
      return entries;
    },
    async listUnknown(limit) {
      return pairs([...unknown].sort((a, b) => a[1] - b[1]).slice(0, limit).flatMap(([m, t]) => [m, String(t)]));
    },
    async keepDecision(member, decision) {
      decisions.set(member, JSON.stringify(decision));
    },
    async decisionOf(member) {
      const raw = decisions.get(member);
      return raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
    },
    async stats() {
      let oldest: number | undefined;
      for (const since of unknown.values()) if (oldest === undefined || since < oldest) oldest = since;
      return { open: unknown.size, oldestSinceMs: oldest };
    },
    async unresolvedBefore(atMs) {
      return unknown.size > 0 || [...due.values()].some((at) => at <= atMs);
    },
  };
}
