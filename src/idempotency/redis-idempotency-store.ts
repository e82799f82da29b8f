import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { guarded } from '../redis/guarded';
import { StoreUnavailableError } from '../redis/errors';
import { inProgress } from './in-progress';
import { withIdempotencyScripts, type ScriptedClient } from './scripts';
import { storedResponseJson } from './scrub';
import type { BeginOptions, BeginResult, CompleteResult, IdempotencyStore, IdempotencyStoreSettings, InspectResult, StoredResponse, TransitionResult, UnknownRecord, WriteContext } from './types';

export interface RedisIdempotencyStoreOptions extends IdempotencyStoreSettings {
  redis: Redis | Cluster;
  /** `redis.keyPrefix`. One hash per key: `{<prefix>:idem:<scope>:<key>}` (both parts URI-encoded). */
  keyPrefix: string;
  /**
   * Each call rejects with StoreUnavailableError after this long, so a sale answers 503 quickly instead of
   * waiting through ioredis's reconnect attempts.
   */
  opTimeoutMs?: number;
}

/**
 * IdempotencyStore on Redis: every operation is ONE atomic Lua script, so ONE round trip
 * (begin, retryUnknown, complete, markOutcomeUnknown, abandon). Any Redis failure or timeout rejects
 * with StoreUnavailableError.
 */
export function createRedisIdempotencyStore(options: RedisIdempotencyStoreOptions): IdempotencyStore {
  const redis: ScriptedClient = withIdempotencyScripts(options.redis);
  const { retentionMs, inProgressRetryAfterSec } = options;
  const timeoutMs = options.opTimeoutMs ?? 2000;
  // Encoding keeps `a:b`+`c` and `a`+`b:c` apart and keeps braces out of the hash tag.
  const recordKey = (scope: string, key: string) => `{${options.keyPrefix}:idem:${encodeURIComponent(scope)}:${encodeURIComponent(key)}}`;

  const call = (what: string, op: () => Promise<unknown>): Promise<unknown> => guarded(`idempotency ${what}`, timeoutMs, op);

  async function claim(scope: string, key: string, fingerprint: string, opts: BeginOptions, resume: boolean): Promise<BeginResult> {
    const rk = recordKey(scope, key);
    const attempt = randomUUID();
    const ctx = opts.context;
    let reply: unknown;
    try {
      reply = await call(resume ? 'retryUnknown' : 'begin', () =>
        redis.tgIdemBegin(
          rk, fingerprint, attempt, Math.max(1, Math.floor(opts.leaseMs)), retentionMs, opts.invoice ?? '', resume ? '1' : '0',
          ctx?.op ?? '', ctx?.customer ?? '', ctx?.sale ?? '', ctx?.amount ?? '', ctx?.payment_method ?? '',
          ctx?.bank?.authorization ?? '', ctx?.bank?.sec ?? '', ctx?.save ? '1' : '',
        ),
      );
    } catch (err) {
      // The script may still run once Redis answers (offline queue). This attempt will never send, so free
      // the key in case it did: queued behind begin on the same connection, it runs after it.
      call('abandon', () => redis.tgIdemAbandon(rk, attempt, retentionMs)).catch(() => undefined);
      throw err;
    }
    return parseBegin(reply, attempt, inProgressRetryAfterSec);
  }

  const transition = async (what: string, op: () => Promise<unknown>): Promise<TransitionResult> =>
    Number(await call(what, op)) === 1 ? 'done' : 'not_owner';

  return {
    begin: (scope, key, fingerprint, opts) => claim(scope, key, fingerprint, opts, false),
    retryUnknown: (scope, key, fingerprint, opts) => claim(scope, key, fingerprint, opts, true),
    async complete(scope, key, attempt, response: StoredResponse): Promise<CompleteResult> {
      const reply = Number(await call('complete', () => redis.tgIdemComplete(recordKey(scope, key), attempt, storedResponseJson(response), retentionMs)));
      return reply === 2 ? 'done_after_unknown' : reply === 1 ? 'done' : 'not_owner';
    },
    markOutcomeUnknown: (scope, key, attempt, record) =>
      transition('markOutcomeUnknown', () => redis.tgIdemMarkUnknown(recordKey(scope, key), attempt, record.invoice ?? '', record.reason, retentionMs)),
    abandon: (scope, key, attempt) => transition('abandon', () => redis.tgIdemAbandon(recordKey(scope, key), attempt, retentionMs)),
    inspect: async (scope, key) => parseInspect(await call('inspect', () => redis.tgIdemInspect(recordKey(scope, key), retentionMs))),
    resolve: (scope, key, attempts, response) =>
      transition('resolve', () => redis.tgIdemResolve(recordKey(scope, key), attempts, storedResponseJson(response), retentionMs)),
    release: (scope, key, attempts) => transition('release', () => redis.tgIdemRelease(recordKey(scope, key), attempts)),
    async setNextLook(scope, key, atMs) {
      await call('setNextLook', () => redis.tgIdemNextLook(recordKey(scope, key), Math.round(atMs)));
    },
    async markFollowing(scope, key) {
      await call('markFollowing', () => redis.tgIdemMarkFollowing(recordKey(scope, key)));
    },
    async followed(scope, key) {
      await call('followed', () => redis.hdel(recordKey(scope, key), 'follow'));
    },
  };
}

function parseBegin(reply: unknown, attempt: string, retryAfterSec: number): BeginResult {
  const r = Array.isArray(reply) ? (reply as unknown[]).map((v) => (v === null ? '' : String(v))) : [];
  switch (r[0]) {
    case 'started':
      return { kind: 'started', attempt, invoice: r[1] || undefined, resumed: r[2] === '1' };
    case 'in_progress':
      return inProgress(Number(r[1]), retryAfterSec);
    case 'completed':
      return { kind: 'completed', response: JSON.parse(r[1] ?? '') as StoredResponse, ...(r[2] === '1' ? { following: true } : {}) };
    case 'mismatch':
      return { kind: 'mismatch' };
    case 'unknown':
      return {
        kind: 'outcome_unknown',
        record: unknownRecord(r),
      };
    default:
      throw new StoreUnavailableError(`idempotency begin: unexpected reply from Redis`);
  }
}


/**
 * The stored context fields (op, customer, sale, amount, payment method, a bank payment's authorization and SEC code,
 * a payment key kept ('1'); '' = absent); undefined for a record without one.
 */
export function contextOf([op, customer, sale, amount, paymentMethod, bankAuthorization, bankSec, save]: readonly (string | undefined)[]): WriteContext | undefined {
  if (!op) return undefined;
  const ctx: WriteContext = { op, customer: customer ?? '' };
  if (sale) ctx.sale = sale;
  if (amount) ctx.amount = amount;
  if (paymentMethod) ctx.payment_method = paymentMethod;
  if (bankSec) ctx.bank = { authorization: bankAuthorization ?? '', sec: bankSec };
  if (save === '1') ctx.save = true;
  return ctx;
}

/**
 * The 'unknown' reply of begin and inspect (lua/begin.lua): invoice, reason, since, attempts, context (op,
 * customer, sale, amount), started, next look, now, then the context's payment method, a bank payment's
 * authorization and SEC code, and whether a payment key was kept (added last).
 */
function unknownRecord(r: readonly string[]): UnknownRecord {
  return {
    invoice: r[1] || undefined, reason: r[2] ?? '', sinceMs: Number(r[3]), attempts: Number(r[4]), context: contextOf([...r.slice(5, 9), r[12], r[13], r[14], r[15]]), startedMs: Number(r[9] ?? 0),
    ...(r[10] ? { nextLookMs: Number(r[10]) } : {}), ...(r[11] ? { nowMs: Number(r[11]) } : {}),
  };
}

function parseInspect(reply: unknown): InspectResult {
  const r = Array.isArray(reply) ? (reply as unknown[]).map((v) => (v === null ? '' : String(v))) : [];
  switch (r[0]) {
    case 'absent':
      return { state: 'absent' };
    case 'completed':
      return r[1] === '1' ? { state: 'completed', follow: { response: JSON.parse(r[2] ?? '') as StoredResponse, context: contextOf(r.slice(3, 11)) } } : { state: 'completed' };
    case 'in_progress':
      return { state: 'in_progress', leaseRemainingMs: Number(r[1]) };
    case 'unknown':
      return { state: 'unknown', record: unknownRecord(r) };
    default:
      throw new StoreUnavailableError('idempotency inspect: unexpected reply from Redis');
  }
}
