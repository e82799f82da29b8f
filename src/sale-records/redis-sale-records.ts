import type { Cluster, Redis } from 'ioredis';
import { guarded } from '../redis/guarded';
import { decodeSaleFields, encodeSaleFields, SALE_FIELD_NAMES } from './fields';
import { withSaleRecordScripts, type ScriptedClient } from './scripts';
import { SALE_RECORD_TTL_MS, type Reservation, type ReserveResult, type SaleRecord, type SaleRecords, type SaleState } from './types';

export interface RedisSaleRecordsOptions {
  redis: Redis | Cluster;
  /** `redis.keyPrefix`. One hash per sale: `{<prefix>:sale:<key>}` (URI-encoded), so it works on Cluster. */
  keyPrefix: string;
  ttlMs?: number;
  /** Each call rejects with StoreUnavailableError after this long (ms, default 2000). */
  opTimeoutMs?: number;
}

const STATES: ReadonlySet<string> = new Set(['authorized', 'capturing', 'captured', 'voided', 'declined']);

/** SaleRecords on Redis: every call is one command or one Lua script (one round trip). */
export function createRedisSaleRecords(options: RedisSaleRecordsOptions): SaleRecords {
  const redis: ScriptedClient = withSaleRecordScripts(options.redis);
  const ttlMs = options.ttlMs ?? SALE_RECORD_TTL_MS;
  const recordKey = (saleKey: string) => `{${options.keyPrefix}:sale:${encodeURIComponent(saleKey)}}`;

  const timeoutMs = options.opTimeoutMs ?? 2000;

  /** Any Redis failure or a slow answer is StoreUnavailableError: 503, and a write that has not sent is freed. */
  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`sale records ${what}`, timeoutMs, op);

  return {
    async get(saleKey) {
      const reply = await call('get', () => redis.hmget(recordKey(saleKey), 'customer', 'state', 'authorized', 'captured', 'refunded', 'pending_refund', ...SALE_FIELD_NAMES));
      const [customer, state, authorized, captured, refunded, pending] = reply;
      if (customer === null || customer === undefined || !state || !STATES.has(state)) return undefined;
      const record: SaleRecord = {
        customer,
        state: state as SaleState,
        authorizedCents: Number(authorized ?? 0),
        capturedCents: Number(captured ?? 0),
        refundedCents: Number(refunded ?? 0),
        pendingRefundCents: Number(pending ?? 0),
      };
      const fields = decodeSaleFields(reply.slice(6));
      if (fields) record.fields = fields;
      return record;
    },
    async create(saleKey, r: SaleRecord) {
      const fields = r.fields ? encodeSaleFields(r.fields) : [];
      await call('create', () => redis.tgSaleCreate(recordKey(saleKey), r.customer, r.state, r.authorizedCents, r.capturedCents, r.refundedCents, ttlMs, ...fields));
    },
    async reserve(saleKey, op, reservation, amountCents): Promise<ReserveResult> {
      const reply = (await call('reserve', () => redis.tgSaleReserve(recordKey(saleKey), op, reservation, amountCents === undefined ? '' : String(amountCents)))) as unknown[];
      if (Number(reply[0]) === 1) return { ok: true, amountCents: Number(reply[1]), whole: Number(reply[2]) === 1 };
      const reason = String(reply[1]);
      return { ok: false, reason: reason === 'absent' || reason === 'exceeds' ? reason : 'not_capturable', availableCents: Number(reply[2] ?? 0) };
    },
    async settle(saleKey, _op, reservation, how, appliedCents, refundKey) {
      await call('settle', () => redis.tgSaleSettle(recordKey(saleKey), reservation, how, appliedCents === undefined ? '' : String(appliedCents), refundKey ?? ''));
    },
    async moves(saleKey) {
      const fields = await call('moves', () => redis.hgetall(recordKey(saleKey)));
      const reservations: Reservation[] = [];
      const creditedRefunds = new Set<string>();
      for (const [field, value] of Object.entries(fields)) {
        // 'res:<id>' = '<op>:<cents>[:unknown[:<ms>]]' (lua/reserve.lua, lua/settle.lua; no time: marked before it was kept)
        const m = /^(capture|refund):(\d+)(:unknown(?::(\d+))?)?$/.exec(value);
        if (field.startsWith('res:') && m) {
          reservations.push({ id: field.slice(4), op: m[1] as Reservation['op'], cents: Number(m[2]), unknown: m[3] !== undefined, ...(m[4] ? { unknownSinceMs: Number(m[4]) } : {}) });
        }
        // 'rk:<refund key>' = the reservation credited with it (lua/settle.lua)
        if (field.startsWith('rk:')) creditedRefunds.add(field.slice(3));
      }
      return { reservations, creditedRefunds };
    },
    async markVoided(saleKey) {
      // Only an existing record changes (HSET on a missing key would create one without an owner).
      const key = recordKey(saleKey);
      if (await call('exists', () => redis.exists(key))) await call('markVoided', () => redis.hset(key, 'state', 'voided'));
    },
    async observe(saleKey, wasRefundedCents, seen) {
      const changed = await call('observe', () => redis.tgSaleObserve(recordKey(saleKey), String(wasRefundedCents), String(seen.refundedCents), seen.voided ? '1' : '0'));
      return Number(changed) === 1;
    },
    async describe(saleKey, fields, how) {
      await call('describe', () => redis.tgSaleDescribe(recordKey(saleKey), how, ...encodeSaleFields(fields)));
    },
  };
}
