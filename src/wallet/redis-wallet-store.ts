import { hash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { PaymentMethod } from '../gateway/types';
import { guarded } from '../redis/guarded';
import { withWalletScripts, type ScriptedClient } from './scripts';
import { WALLET_TTL_MS, type CustomerIdClaim, type CustomerRecord, type RefreshResult, type WalletSnapshot, type WalletStore } from './types';

export interface RedisWalletStoreOptions {
  redis: Redis | Cluster;
  /** `redis.keyPrefix`. Keys `{<prefix>:cust:<custkey>}:view|guard|refreshing` and `{<prefix>:custid:<hash>}`. */
  keyPrefix: string;
  /** Each call rejects with StoreUnavailableError after this long (ms, default 2000). */
  opTimeoutMs?: number;
}

/** The view's method and customer values are JSON of the parsed, masked gateway objects (no card data). */
function parseJson<T>(raw: string | undefined): T | undefined {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}

/** A view hash (HGETALL) as a snapshot. */
export function snapshotOf(hash: Record<string, string>, deleted: boolean): WalletSnapshot {
  const methods: PaymentMethod[] = [];
  for (const [name, value] of Object.entries(hash)) {
    if (!name.startsWith('pm:')) continue;
    const method = parseJson<PaymentMethod>(value);
    if (method) methods.push(method);
  }
  const seen = hash.seen === undefined ? undefined : Number(hash.seen);
  return {
    version: Number(hash.ver ?? 0),
    seenMs: deleted ? undefined : seen,
    customer: parseJson<CustomerRecord>(hash.cust),
    methods,
    chosenDefault: hash.def,
    deleted,
  };
}

/** WalletStore on Redis: every call is one command, one pipeline or one Lua script (one round trip). */
export function createRedisWalletStore(options: RedisWalletStoreOptions): WalletStore {
  const redis: ScriptedClient = withWalletScripts(options.redis);
  const timeoutMs = options.opTimeoutMs ?? 2000;
  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`wallet ${what}`, timeoutMs, op);
  // Encoded: no caller input can form another key or break the hash tag.
  const tag = (custkey: string) => `{${options.keyPrefix}:cust:${encodeURIComponent(custkey)}}`;
  const view = (custkey: string) => `${tag(custkey)}:view`;
  const guard = (custkey: string) => `${tag(custkey)}:guard`;
  // Hashed: the merchant's own id never lands in a key name as written.
  // The card updater's index: one key per method (no hot slot), written beside the customer's own writes.
  const pmIndex = (pmkey: string) => `{${options.keyPrefix}:pmcust:${encodeURIComponent(pmkey)}}`;
  const index = (custkey: string, pmkeys: readonly string[]) => pmkeys.map((pm) => redis.set(pmIndex(pm), custkey, 'PX', WALLET_TTL_MS));
  const claimKey = (customerid: string) => `{${options.keyPrefix}:custid:${hash('sha256', customerid, 'base64url').slice(0, 22)}}`;

  return {
    async read(custkey) {
      // Issued in one tick: auto-pipelined, one round trip.
      const [hash, deleted] = await call('read', () => Promise.all([redis.hgetall(view(custkey)), redis.hexists(guard(custkey), 'deleted')]));
      return snapshotOf(hash, deleted === 1);
    },
    async refresh(custkey, version, customer, methods): Promise<RefreshResult> {
      const pairs = methods.flatMap((m) => [m.key, JSON.stringify(m)]);
      // Issued in one tick with the index's writes: auto-pipelined, one round trip.
      const [out] = await call('refresh', () => Promise.all([redis.tgWalletRefresh(view(custkey), guard(custkey), String(version), WALLET_TTL_MS, JSON.stringify(customer), ...pairs), ...index(custkey, methods.map((m) => m.key))]));
      const reply = Number(out);
      return reply === 1 ? 'applied' : reply === -1 ? 'deleted' : 'stale';
    },
    async putMethod(custkey, pmkey, method, makeDefault) {
      const [out] = await call('putMethod', () => Promise.all([redis.tgWalletPutMethod(view(custkey), guard(custkey), pmkey, method ? JSON.stringify(method) : '', makeDefault ? '1' : '0', WALLET_TTL_MS), ...index(custkey, [pmkey])]));
      return Number(out) === 1;
    },
    async putCustomer(custkey, customer, created) {
      await call('putCustomer', () => redis.tgWalletPutCustomer(view(custkey), guard(custkey), JSON.stringify(customer), created ? '1' : '0', WALLET_TTL_MS));
    },
    async forget(custkey) {
      const key = view(custkey);
      await call('forget', () => redis.multi().hdel(key, 'seen').hincrby(key, 'ver', 1).pexpire(key, WALLET_TTL_MS).exec());
    },
    async claimRefresh(custkey, ttlMs) {
      return (await call('claimRefresh', () => redis.set(`${tag(custkey)}:refreshing`, '1', 'PX', ttlMs, 'NX'))) === 'OK';
    },
    async enter(custkey, pmkey, attempt, state, leaseMs) {
      return Number(await call('enter', () => redis.tgWalletEnter(guard(custkey), pmkey, attempt, Math.max(1, Math.ceil(leaseMs)), state))) === 1;
    },
    async leave(custkey, attempt) {
      await call('leave', () => redis.hdel(guard(custkey), `fly:${attempt}`));
    },
    async isRemoved(custkey, pmkey) {
      const [rm, deleted] = await call('isRemoved', () => redis.hmget(guard(custkey), `rm:${pmkey}`, 'deleted'));
      return rm !== null || deleted !== null;
    },
    async tombstone(custkey, pmkey, tombstoneTtlMs) {
      const reply = await call('tombstone', () => redis.tgWalletTombstone(guard(custkey), view(custkey), pmkey, tombstoneTtlMs, WALLET_TTL_MS));
      return Array.isArray(reply) ? reply.map(String) : [];
    },
    async removedOf(custkey) {
      const hash = await call('removedOf', () => redis.hgetall(guard(custkey)));
      const pmkeys = Object.keys(hash).filter((name) => name.startsWith('rm:')).map((name) => name.slice(3));
      return { pmkeys, customer: parseJson<CustomerRecord>(hash.cust) };
    },
    async stillSending(custkey, attempts) {
      if (attempts.length === 0) return 0;
      return Number(await call('stillSending', () => redis.tgWalletSending(guard(custkey), ...attempts)));
    },
    async customerOf(pmkey) {
      return (await call('customerOf', () => redis.get(pmIndex(pmkey)))) ?? undefined;
    },
    async flagClosed(custkey, pmkey) {
      await call('flagClosed', () => redis.multi().hset(guard(custkey), `closed:${pmkey}`, '1').pexpire(guard(custkey), WALLET_TTL_MS).exec());
    },
    async isClosed(custkey, pmkey) {
      return (await call('isClosed', () => redis.hexists(guard(custkey), `closed:${pmkey}`))) === 1;
    },
    async clearClosed(custkey, pmkey) {
      await call('clearClosed', () => redis.hdel(guard(custkey), `closed:${pmkey}`));
    },
    async claimCustomerId(customerid, attempt): Promise<CustomerIdClaim> {
      // SET NX GET (Redis 7): the holder's value when taken, null when this call took it.
      const held = await call('claimCustomerId', () => redis.call('SET', claimKey(customerid), `attempt:${attempt}`, 'NX', 'GET') as Promise<string | null>);
      if (held === null || held === `attempt:${attempt}`) return { kind: 'claimed' };
      if (held.startsWith('custkey:')) return { kind: 'exists', custkey: held.slice('custkey:'.length) };
      return { kind: 'pending', attempt: held.slice('attempt:'.length) };
    },
    async settleCustomerId(customerid, attempt, custkey) {
      const key = claimKey(customerid);
      // Only over this attempt's own claim (or none: the reconciler settling after a crash freed nothing).
      await call('settleCustomerId', () => redis.tgWalletSettleClaim(key, `attempt:${attempt}`, `custkey:${custkey}`, WALLET_TTL_MS));
    },
    async releaseCustomerId(customerid, holder) {
      const value = 'attempt' in holder ? `attempt:${holder.attempt}` : `custkey:${holder.custkey}`;
      await call('releaseCustomerId', () => redis.tgWalletReleaseClaim(claimKey(customerid), value));
    },
  };
}

