import type { PaymentMethod } from '../gateway/types';
import type { CustomerIdClaim, CustomerRecord, WalletSnapshot, WalletStore } from './types';

interface Flight {
  pmkey: string;
  state: 'sending' | 'waiting';
  untilMs: number;
}

/** One customer's view and guard, as the Redis hashes hold them. */
interface Kept {
  version: number;
  seenMs?: number;
  customer?: CustomerRecord;
  methods: Map<string, PaymentMethod>;
  chosenDefault?: string;
  deleted: boolean;
  removed: Set<string>;
  flights: Map<string, Flight>;
  refreshUntil: number;
  /** The fields of a removed customer (its customerid is freed when the removal finishes). */
  removedCustomer?: CustomerRecord;
}

const copy = <T>(v: T): T => structuredClone(v);

/**
 * WalletStore in process memory (development mode): the Lua scripts' steps, each method synchronous to
 * completion (the same atomicity within one process). Nothing expires: a development session is short.
 */
export function createMemoryWalletStore(now: () => number = Date.now): WalletStore {
  const customers = new Map<string, Kept>();
  const claims = new Map<string, string>();
  const owners = new Map<string, string>();
  const closed = new Set<string>();
  const of = (custkey: string): Kept => {
    let k = customers.get(custkey);
    if (!k) {
      k = { version: 0, methods: new Map(), deleted: false, removed: new Set(), flights: new Map(), refreshUntil: 0 };
      customers.set(custkey, k);
    }
    return k;
  };
  const gone = (k: Kept, pmkey: string) => k.deleted || (pmkey !== '' && k.removed.has(pmkey));

  return {
    async read(custkey): Promise<WalletSnapshot> {
      const k = of(custkey);
      return {
        version: k.version, seenMs: k.deleted ? undefined : k.seenMs, customer: k.customer && copy(k.customer), methods: [...k.methods.values()].map(copy),
        chosenDefault: k.chosenDefault, deleted: k.deleted,
      };
    },
    async refresh(custkey, version, customer, methods) {
      const k = of(custkey);
      if (k.deleted) return 'deleted';
      if (k.version !== version) return 'stale';
      for (const m of methods) owners.set(m.key, custkey);
      k.customer = copy(customer);
      k.methods = new Map(methods.filter((m) => !k.removed.has(m.key)).map((m) => [m.key, copy(m)]));
      if (k.chosenDefault !== undefined && !k.methods.has(k.chosenDefault)) k.chosenDefault = undefined;
      k.seenMs = now();
      k.version += 1;
      return 'applied';
    },
    async putMethod(custkey, pmkey, method, makeDefault) {
      const k = of(custkey);
      owners.set(pmkey, custkey);
      if (gone(k, pmkey)) return false;
      if (method && k.seenMs !== undefined) k.methods.set(pmkey, copy(method));
      if (makeDefault) k.chosenDefault = pmkey;
      k.version += 1;
      return true;
    },
    async putCustomer(custkey, customer, created) {
      const k = of(custkey);
      if (k.deleted) return;
      if (created) k.seenMs = now();
      if (k.seenMs !== undefined) k.customer = copy(customer);
      k.version += 1;
    },
    async forget(custkey) {
      const k = of(custkey);
      k.seenMs = undefined;
      k.version += 1;
    },
    async claimRefresh(custkey, ttlMs) {
      const k = of(custkey);
      if (k.refreshUntil > now()) return false;
      k.refreshUntil = now() + ttlMs;
      return true;
    },
    async enter(custkey, pmkey, attempt, state, leaseMs) {
      const k = of(custkey);
      if (gone(k, pmkey)) return false;
      k.flights.set(attempt, { pmkey, state, untilMs: now() + leaseMs });
      return true;
    },
    async leave(custkey, attempt) {
      of(custkey).flights.delete(attempt);
    },
    async isRemoved(custkey, pmkey) {
      return gone(of(custkey), pmkey);
    },
    async tombstone(custkey, pmkey) {
      const k = of(custkey);
      if (pmkey === '') {
        k.deleted = true;
        for (const key of k.methods.keys()) k.removed.add(key);
        k.methods.clear();
        k.removedCustomer ??= k.customer;
        k.customer = undefined;
        k.seenMs = undefined;
      } else {
        k.removed.add(pmkey);
        k.methods.delete(pmkey);
        if (k.chosenDefault === pmkey) k.chosenDefault = undefined;
      }
      k.version += 1;
      const sending: string[] = [];
      for (const [attempt, f] of k.flights) {
        if (f.untilMs <= now()) k.flights.delete(attempt);
        else if (f.state === 'sending' && (pmkey === '' || f.pmkey === pmkey)) sending.push(attempt);
      }
      return sending;
    },
    async removedOf(custkey) {
      const k = of(custkey);
      return { pmkeys: [...k.removed], customer: k.removedCustomer && copy(k.removedCustomer) };
    },
    async stillSending(custkey, attempts) {
      const k = of(custkey);
      return attempts.filter((a) => {
        const f = k.flights.get(a);
        return f !== undefined && f.state === 'sending' && f.untilMs > now();
      }).length;
    },
    async customerOf(pmkey) {
      return owners.get(pmkey);
    },
    async flagClosed(custkey, pmkey) {
      closed.add(`${custkey}\u0000${pmkey}`);
    },
    async isClosed(custkey, pmkey) {
      return closed.has(`${custkey}\u0000${pmkey}`);
    },
    async clearClosed(custkey, pmkey) {
      closed.delete(`${custkey}\u0000${pmkey}`);
    },
    async claimCustomerId(customerid, attempt): Promise<CustomerIdClaim> {
      const held = claims.get(customerid);
      if (held === undefined || held === `attempt:${attempt}`) {
        claims.set(customerid, `attempt:${attempt}`);
        return { kind: 'claimed' };
      }
      if (held.startsWith('custkey:')) return { kind: 'exists', custkey: held.slice('custkey:'.length) };
      return { kind: 'pending', attempt: held.slice('attempt:'.length) };
    },
    async settleCustomerId(customerid, attempt, custkey) {
      const held = claims.get(customerid);
      if (held === undefined || held === `attempt:${attempt}`) claims.set(customerid, `custkey:${custkey}`);
    },
    async releaseCustomerId(customerid, holder) {
      const value = 'attempt' in holder ? `attempt:${holder.attempt}` : `custkey:${holder.custkey}`;
      if (claims.get(customerid) === value) claims.delete(customerid);
    },
  };
}
