import { hash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { coalescer } from '../redis/coalesce';
import { guarded } from '../redis/guarded';
import { decodeSaleFields, encodeBatchFields, encodeSaleFields, SALE_FIELD_NAMES } from './fields';
import { listedRefundsOf } from './refunds';
import { changesOfHeard, changesOfRefresh, hearResultOf } from './changes';
import { withSaleRecordScripts, type ScriptedClient } from './scripts';
import { BATCH_INDEX_TTL_MS, type AchStatus, type OwnRefund, SALE_RECORD_TTL_MS, type RecordChangeSink, type Reservation, type ReserveResult, type SaleRecord, type SaleRecords, type SaleState } from './types';

export interface RedisSaleRecordsOptions {
  redis: Redis | Cluster;
  /** `redis.keyPrefix`. One hash per sale: `{<prefix>:sale:<key>}` (URI-encoded), so it works on Cluster. */
  keyPrefix: string;
  ttlMs?: number;
  /** Each call rejects with StoreUnavailableError after this long (ms, default 2000). */
  opTimeoutMs?: number;
  /** Where changes tokengate heard of (a webhook, a refresh) are reported: they become payment events. */
  onChange?: RecordChangeSink;
  /** tokengate's time (ms) a batch is first seen at, for the due index (its test clock in development and test). */
  now?: () => number;
}

const STATES: ReadonlySet<string> = new Set(['authorized', 'capturing', 'captured', 'voiding', 'voided', 'declined']);
const REASONS: ReadonlySet<string> = new Set(['absent', 'exceeds', 'not_capturable', 'not_voidable', 'busy', 'returned', 'pending']);

/** 'res:<id>' = '<op>:<cents>[:<state before a void>][:unknown[:<ms>]]' (lua/reserve.lua, lua/settle.lua). */
const RESERVATION = /^(capture|refund|void):(\d+)(?::(?:authorized|captured))?(:unknown(?::(\d+))?)?$/;

/**
 * The record's hash fields as a SaleRecord, or undefined when they are not one (no owner, unknown state).
 * `values` in the order customer, state, authorized, captured, refunded, pending_refund, then SALE_FIELD_NAMES, then
 * writer and seeded.
 */
function recordOf(values: readonly (string | null | undefined)[]): SaleRecord | undefined {
  const [customer, state, authorized, captured, refunded, pending] = values;
  if (customer === null || customer === undefined || !state || !STATES.has(state)) return undefined;
  const record: SaleRecord = {
    customer,
    state: state as SaleState,
    authorizedCents: Number(authorized ?? 0),
    capturedCents: Number(captured ?? 0),
    refundedCents: Number(refunded ?? 0),
    pendingRefundCents: Number(pending ?? 0),
  };
  const fields = decodeSaleFields(values.slice(6, 6 + SALE_FIELD_NAMES.length));
  if (fields) record.fields = fields;
  const writer = values[6 + SALE_FIELD_NAMES.length];
  if (writer) record.writer = writer;
  else if (values[7 + SALE_FIELD_NAMES.length] === '1') record.seeded = true;
  return record;
}



const RECORD_FIELDS = ['customer', 'state', 'authorized', 'captured', 'refunded', 'pending_refund', ...SALE_FIELD_NAMES, 'writer', 'seeded'] as const;

/** SaleRecords on Redis: every call is one command or one Lua script (one round trip). */
export function createRedisSaleRecords(options: RedisSaleRecordsOptions): SaleRecords {
  const redis: ScriptedClient = withSaleRecordScripts(options.redis);
  const ttlMs = options.ttlMs ?? SALE_RECORD_TTL_MS;
  const recordKey = (saleKey: string) => `{${options.keyPrefix}:sale:${encodeURIComponent(saleKey)}}`;
  // Hashed: a caller's made-up key never lands in Redis as written.
  const unknownKey = (saleKey: string) => `${options.keyPrefix}:nosale:${hash('sha256', saleKey, 'base64url').slice(0, 22)}`;

  const timeoutMs = options.opTimeoutMs ?? 2000;
  // The sales of each batch (its key from the sale's answer, a capture's, or a lookup): a batch's close event
  // names the batch, not its sales (gateway-facts.md, Webhooks), and this settles them with no gateway read.
  // Which sale each refund transaction belongs to (tokengate's own, or one listed on a sale): a refund's webhook
  // names no sale, so this is how `transaction.refund.*` finds its sale without guessing.
  const refundKey = (key: string) => `{${options.keyPrefix}:refund:${encodeURIComponent(key)}}`;
  const indexRefund = (saleKey: string, key: string | undefined) =>
    key && key !== saleKey ? call('refund index', () => redis.set(refundKey(key), saleKey, 'PX', ttlMs)) : undefined;
  const batchKey = (batch: string) => `{${options.keyPrefix}:batch:${encodeURIComponent(batch)}}`;
  // The sales of one batch answered in one turn of the event loop join it in one command (redis/coalesce.ts);
  // each still awaits it, so the index is written before the sale answers (it feeds sale.settled).
  // A batch's first sales also put the batch in the due index (`{<p>:batches-due}`, first seen ms → batch), which
  // the settlements' sweep reads for `missing` (issue 39): one command per batch, none per sale.
  const dueKey = `{${options.keyPrefix}:batches-due}`;
  const now = options.now ?? Date.now;
  const indexInBatch = coalescer<string>(async (batch, saleKeys) => {
    const fresh = await call('batch', () => redis.tgSaleIndexBatch(batchKey(batch), BATCH_INDEX_TTL_MS, ...saleKeys));
    if (Number(fresh) === 1) await call('due', () => redis.zadd(dueKey, 'NX', now(), batch));
  });
  const indexBatch = (saleKey: string, batch: string | undefined) => (batch ? indexInBatch(batch, saleKey) : undefined);
  const report = async (changes: Parameters<RecordChangeSink>[0]) => {
    if (changes.length > 0) await options.onChange?.(changes);
  };

  /** Any Redis failure or a slow answer is StoreUnavailableError: 503, and a write that has not sent is freed. */
  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`sale records ${what}`, timeoutMs, op);

  return {
    async get(saleKey) {
      return recordOf(await call('get', () => redis.hmget(recordKey(saleKey), ...RECORD_FIELDS)));
    },
    async view(saleKey) {
      const hash = await call('view', () => redis.hgetall(recordKey(saleKey)));
      const record = recordOf(RECORD_FIELDS.map((name) => hash[name]));
      if (!record) return undefined;
      const credited = new Set(Object.keys(hash).filter((name) => name.startsWith('rk:')).map((name) => name.slice(3)));
      return { record, version: Number(hash.ver ?? 0), settled: hash.settled === '1', refunds: listedRefundsOf(hash), seenMs: Number(hash.seen ?? 0), credited };
    },
    async claimRefresh(saleKey, ttlMs) {
      return (await call('claimRefresh', () => redis.set(`${recordKey(saleKey)}:refreshing`, '1', 'PX', ttlMs, 'NX'))) === 'OK';
    },
    async releaseRefresh(saleKey) {
      await call('releaseRefresh', () => redis.del(`${recordKey(saleKey)}:refreshing`));
    },
    async rememberUnknown(saleKey, ttlMs) {
      await call('rememberUnknown', () => redis.set(unknownKey(saleKey), '1', 'PX', ttlMs));
    },
    async knownUnknown(saleKey) {
      return (await call('knownUnknown', () => redis.exists(unknownKey(saleKey)))) === 1;
    },
    async refresh(saleKey, version, seen) {
      const external = seen.gatewayRefunds.flatMap((r) => [`rx:${r.key}`, `${r.refnum}|${r.cents}|${r.created}|${r.statusCode}`]);
      await Promise.all(seen.gatewayRefunds.map((r) => indexRefund(saleKey, r.key)));
      const reply = await call('refresh', () => redis.tgSaleRefresh(recordKey(saleKey), String(version), String(seen.refundedCents), seen.voided ? '1' : '0', seen.settled ? '1' : '0', String(seen.capturedCents), seen.restoreTo ?? '', ...external));
      if (!Array.isArray(reply)) return false;
      const r = reply.map(String);
      await report(changesOfRefresh(saleKey, {
        voidedNow: r[1] === '1', settledNow: r[2] === '1', refundedBefore: Number(r[3]), refundedAfter: Number(r[4]), capturedCents: Number(r[5]), state: r[6] ?? '', unvoidedNow: r[7] === '1', fresh: r.slice(8),
      }, seen));
      return true;
    },
    async create(saleKey, r: SaleRecord, opts = {}) {
      // A record made from a webhook's subset reads as stale (seen 0): its first read refreshes it in spare budget.
      // One made by no write is marked seeded; one with a writer claims such a seed in the same script (lua/create.lua).
      const fields = [...(r.fields ? encodeSaleFields(r.fields) : []), ...(opts.stale ? ['seen', '0'] : []), ...(r.writer ? ['writer', r.writer] : r.seeded ? ['seeded', '1'] : [])];
      const [made] = await Promise.all([
        call('create', () => redis.tgSaleCreate(recordKey(saleKey), r.customer, r.state, r.authorizedCents, r.capturedCents, r.refundedCents, ttlMs, ...fields)),
        indexBatch(saleKey, r.fields?.batch?.key),
      ]);
      return Number(made) > 0;
    },
    async hear(saleKey, heard) {
      const args: string[] = [heard.kind];
      if (heard.kind === 'captured') args.push(String(heard.capturedCents), ...(heard.batch ? encodeBatchFields(heard.batch) : []));
      if (heard.kind === 'refunded') args.push(heard.refund.key, `${heard.refund.refnum}|${heard.refund.cents}|${heard.refund.created}|${heard.refund.statusCode}`);
      if (heard.kind === 'adjusted') args.push(String(heard.leftCents), saleKey);
      if (heard.kind === 'refund_voided' || heard.kind === 'refund_restored') args.push(heard.refundKey);
      const [result, state, cents] = ((await call('hear', () => redis.tgSaleHear(recordKey(saleKey), ...args))) as unknown[]).map(String);
      if (heard.kind === 'captured' && result === 'changed') await indexBatch(saleKey, heard.batch?.key);
      if (heard.kind === 'refunded' && result === 'applied') await indexRefund(saleKey, heard.refund.key);
      await report(changesOfHeard(saleKey, heard, result ?? 'absent', state ?? '', Number(cents ?? 0)));
      return hearResultOf(result ?? 'absent');
    },
    async saleOfRefund(key) {
      return (await call('saleOfRefund', () => redis.get(refundKey(key)))) ?? undefined;
    },
    async settleBatch(batch) {
      const sales = await call('batch', () => redis.smembers(batchKey(batch)));
      const changes = [];
      for (let i = 0; i < sales.length; i += 200) {
        const chunk = sales.slice(i, i + 200);
        const replies = await Promise.all(chunk.map((saleKey) => call('settle batch', () => redis.tgSaleHear(recordKey(saleKey), 'settled')) as Promise<unknown[]>));
        // A captured sale in the closed batch is settled (whether this call or an earlier one marked it).
        changes.push(...chunk.flatMap((saleKey, n) => (String(replies[n]?.[1]) === 'captured' ? [{ saleKey, kind: 'settled' as const }] : [])));
      }
      await report(changes);
      return sales.length;
    },
    async dueBatches(seenBeforeMs, limit) {
      // Entries older than the batch index's own ttl have no sales left to sweep.
      await call('due trim', () => redis.zremrangebyscore(dueKey, '-inf', `(${now() - BATCH_INDEX_TTL_MS}`));
      const flat = await call('due', () => redis.zrangebyscore(dueKey, '-inf', seenBeforeMs, 'WITHSCORES', 'LIMIT', 0, limit));
      const out: Array<{ batch: string; seenMs: number }> = [];
      for (let i = 0; i + 1 < flat.length; i += 2) out.push({ batch: flat[i] as string, seenMs: Number(flat[i + 1]) });
      return out;
    },
    async batchSales(batch) {
      return call('batch', () => redis.smembers(batchKey(batch)));
    },
    async swept(batch) {
      await call('due', () => redis.zrem(dueKey, batch));
    },
    async backfillDue() {
      // One SCAN of the keyspace, once: the mark is set first (a replica that dies mid-way leaves the rest to the
      // batches' own ttl, 14 days; the due index is otherwise one command per batch, none per sale).
      if ((await call('due backfill', () => redis.set(`${dueKey}:backfilled`, '1', 'NX'))) !== 'OK') return 0;
      const match = `${batchKey('').replace(/[*?[\]\\]/g, '\\$&').slice(0, -1)}*}`;
      const head = batchKey('').slice(0, -1);
      const nodes = options.redis.isCluster ? (options.redis as Cluster).nodes('master') : [options.redis as Redis];
      let joined = 0;
      for (const node of nodes) {
        let cursor = '0';
        do {
          const [next, keys] = await call('due backfill scan', () => node.scan(cursor, 'MATCH', match, 'COUNT', 1000));
          cursor = next;
          for (const key of keys) {
            const batch = decodeURIComponent(key.slice(head.length, -1));
            // When its last sale joined it (the set's ttl is renewed by each): never before its first sight, so
            // the sweep looks at it no earlier than it should.
            const left = await call('due backfill ttl', () => redis.pttl(key));
            if (left <= 0) continue;
            const seenMs = now() - (BATCH_INDEX_TTL_MS - left);
            if (Number(await call('due backfill add', () => redis.zadd(dueKey, 'NX', seenMs, batch))) === 1) joined += 1;
          }
        } while (cursor !== '0');
      }
      return joined;
    },
    async reserve(saleKey, op, reservation, amountCents): Promise<ReserveResult> {
      const reply = (await call('reserve', () => redis.tgSaleReserve(recordKey(saleKey), op, reservation, amountCents === undefined ? '' : String(amountCents)))) as unknown[];
      if (Number(reply[0]) === 1) return { ok: true, amountCents: Number(reply[1]), whole: Number(reply[2]) === 1 };
      const reason = String(reply[1]);
      return { ok: false, reason: (REASONS.has(reason) ? reason : 'not_capturable') as 'not_capturable', availableCents: Number(reply[2] ?? 0) };
    },
    async settle(saleKey, _op, reservation, how, appliedCents, refundKey, listed) {
      const entry = listed ? `${listed.key}|${listed.refnum}|${listed.method}` : '';
      await Promise.all([
        call('settle', () => redis.tgSaleSettle(recordKey(saleKey), reservation, how, appliedCents === undefined ? '' : String(appliedCents), refundKey ?? '', entry)),
        how === 'applied' ? indexRefund(saleKey, refundKey ?? listed?.key) : undefined,
      ]);
    },
    async moves(saleKey) {
      const fields = await call('moves', () => redis.hgetall(recordKey(saleKey)));
      const reservations: Reservation[] = [];
      const creditedRefunds = new Set<string>();
      const applied = new Map<string, OwnRefund>();
      for (const [field, value] of Object.entries(fields)) {
        // No time after unknown: marked before the time was kept.
        const m = RESERVATION.exec(value);
        if (field.startsWith('res:') && m) {
          reservations.push({ id: field.slice(4), op: m[1] as Reservation['op'], cents: Number(m[2]), unknown: m[3] !== undefined, ...(m[4] ? { unknownSinceMs: Number(m[4]) } : {}) });
        }
        // 'rk:<refund key>' = the reservation credited with it (lua/settle.lua)
        if (field.startsWith('rk:')) creditedRefunds.add(field.slice(3));
        // 'rf:<reservation id>' = '<key>|<refnum>|<cents>|<unix s>|<method>' (lua/settle.lua)
        if (field.startsWith('rf:')) {
          const [key = '', refnum = '', cents = '0', , method] = value.split('|');
          applied.set(field.slice(3), { key, refnum, cents: Number(cents), method: method === 'void' ? 'void' : 'refund' });
        }
      }
      return { reservations, creditedRefunds, applied };
    },
    async markVoided(saleKey) {
      // Only an existing record changes (HSET on a missing key would create one without an owner).
      const key = recordKey(saleKey);
      if (await call('exists', () => redis.exists(key))) await call('markVoided', () => redis.multi().hset(key, 'state', 'voided').hincrby(key, 'ver', 1).exec());
    },
    async advanceAch(saleKey, status, returned) {
      const r = (await call('advanceAch', () => redis.tgSaleAch(recordKey(saleKey), status, returned?.code ?? '', returned?.date ?? ''))) as string[];
      return r[0] ? { before: r[0] as AchStatus, after: r[1] as AchStatus } : undefined;
    },
    async observe(saleKey, wasRefundedCents, seen) {
      const changed = await call('observe', () => redis.tgSaleObserve(recordKey(saleKey), String(wasRefundedCents), String(seen.refundedCents), seen.voided ? '1' : '0'));
      return Number(changed) === 1;
    },
    async describe(saleKey, fields, how) {
      await Promise.all([call('describe', () => redis.tgSaleDescribe(recordKey(saleKey), how, ...encodeSaleFields(fields))), indexBatch(saleKey, fields.batch?.key)]);
    },
  };
}
