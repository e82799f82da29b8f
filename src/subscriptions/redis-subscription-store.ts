import type { Cluster, Redis } from 'ioredis';
import { guarded } from '../redis/guarded';
import { withSubscriptionScripts } from './scripts';
import { BANK_SALE_LINK_TTL_MS, SUBSCRIPTION_TTL_MS, type FirstCharge, type SaleLink, type SubscriptionRecord, type SubscriptionStore } from './types';

export interface RedisSubscriptionStoreOptions {
  redis: Redis | Cluster;
  /**
   * `redis.keyPrefix`. Keys, one hash tag so a record and the due set change in one script:
   * `{<p>:subs}:s:<key>` (the record, JSON), `{<p>:subs}:due` (sorted set: key → due ms), `{<p>:subs}:cust:<custkey>`
   * (sorted set: the customer's subscriptions by creation), `{<p>:subs}:claim:<key>` (a replica's renewal claim),
   * `{<p>:subs}:spill:<YYYY-MM-DD>` (how many of that day's renewals moved to the next day: judged once),
   * `{<p>:subs}:sale:<sale>` (a bank payment's subscription, period and attempt, JSON: its return reaches them),
   * `{<p>:subs}:first:<key>` (a first charge's terms, JSON: what its resolution creates).
   */
  keyPrefix: string;
  /** How long a first charge's terms are kept: as long as its write's answer may still be resolved or replayed. */
  firstChargeTtlMs?: number;
  opTimeoutMs?: number;
}

/** Two days: an unknown outcome kept a day (IDEMPOTENCY_RETENTION_MS' default), then its answer a day. */
const FIRST_CHARGE_TTL_MS = 2 * 24 * 3600 * 1000;

const dueArg = (r: SubscriptionRecord) => (r.due_ms === null ? '' : String(r.due_ms));

export function createRedisSubscriptionStore(options: RedisSubscriptionStoreOptions): SubscriptionStore {
  const redis = withSubscriptionScripts(options.redis);
  const timeoutMs = options.opTimeoutMs ?? 2000;
  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`subscriptions ${what}`, timeoutMs, op);
  const tag = `{${options.keyPrefix}:subs}`;
  // Encoded: no caller input can form another key or leave the hash tag.
  const record = (key: string) => `${tag}:s:${encodeURIComponent(key)}`;
  const due = `${tag}:due`;
  const customer = (custkey: string) => `${tag}:cust:${encodeURIComponent(custkey)}`;
  const claimKey = (key: string) => `${tag}:claim:${encodeURIComponent(key)}`;
  const firstKey = (key: string) => `${tag}:first:${encodeURIComponent(key)}`;
  const parse = (raw: string | null): SubscriptionRecord | undefined => (raw === null ? undefined : (JSON.parse(raw) as SubscriptionRecord));
  const readFirst = async (key: string): Promise<FirstCharge | undefined> => {
    const raw = await call('first', () => redis.get(firstKey(key)));
    return raw === null ? undefined : (JSON.parse(raw) as FirstCharge);
  };

  return {
    async create(r) {
      const [created, json] = await call('create', () =>
        redis.tgSubCreate(record(r.key), due, customer(r.customer), r.key, JSON.stringify(r), dueArg(r), SUBSCRIPTION_TTL_MS, r.created_ms));
      return { record: JSON.parse(json) as SubscriptionRecord, created: created === 1 };
    },
    async get(key) {
      return parse(await call('get', () => redis.get(record(key))));
    },
    async listByCustomer(custkey) {
      const keys = await call('list', () => redis.zrange(customer(custkey), '0', '999'));
      if (keys.length === 0) return [];
      const raws = await call('list', () => Promise.all(keys.map((k) => redis.get(record(k)))));
      return raws.map(parse).filter((r): r is SubscriptionRecord => r !== undefined);
    },
    async swap(next) {
      const applied = await call('swap', () => redis.tgSubSwap(record(next.key), due, next.key, String(next.version - 1), JSON.stringify(next), dueArg(next), SUBSCRIPTION_TTL_MS));
      return applied === 1;
    },
    async due(nowMs, limit) {
      return call('due', () => redis.zrangebyscore(due, '-inf', String(nowMs), 'LIMIT', 0, limit));
    },
    async dueCount(nowMs) {
      return call('due', () => redis.zcount(due, '-inf', String(nowMs)));
    },
    async dueBetween(fromMs, toMs) {
      return call('due', () => redis.zcount(due, String(fromMs), String(toMs)));
    },
    async linkSale(sale, link) {
      await call('link', () => redis.set(`${tag}:sale:${encodeURIComponent(sale)}`, JSON.stringify(link), 'PX', BANK_SALE_LINK_TTL_MS));
    },
    async saleLink(sale) {
      const raw = await call('link', () => redis.get(`${tag}:sale:${encodeURIComponent(sale)}`));
      return raw === null ? undefined : (JSON.parse(raw) as SaleLink);
    },
    async keepFirstCharge(first, replace) {
      const json = JSON.stringify(first);
      const ttl = options.firstChargeTtlMs ?? FIRST_CHARGE_TTL_MS;
      if (replace) {
        await call('first', () => redis.set(firstKey(first.record.key), json, 'PX', ttl));
        return first;
      }
      // Only the attempt owning the charge's key writes here: no other writer between the two commands.
      if ((await call('first', () => redis.set(firstKey(first.record.key), json, 'PX', ttl, 'NX'))) === 'OK') return first;
      return (await readFirst(first.record.key)) ?? first;
    },
    firstCharge: readFirst,
    async recordSpill(day, count) {
      return (await call('spill', () => redis.set(`${tag}:spill:${day}`, String(count), 'PX', SUBSCRIPTION_TTL_MS, 'NX'))) === 'OK';
    },
    async claim(key, owner, ttlMs) {
      return (await call('claim', () => redis.set(claimKey(key), owner, 'PX', ttlMs, 'NX'))) === 'OK';
    },
    async release(key, owner) {
      await call('release', () => redis.tgSubRelease(claimKey(key), owner));
    },
  };
}
