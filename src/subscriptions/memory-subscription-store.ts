import type { FirstCharge, SaleLink, SubscriptionRecord, SubscriptionStore } from './types';

/** SubscriptionStore in memory (development without Redis): the same rules as the Redis one, one process. */
export function createMemorySubscriptionStore(): SubscriptionStore {
  const records = new Map<string, string>();
  const spills = new Set<string>();
  const links = new Map<string, SaleLink>();
  const firsts = new Map<string, string>();
  const claims = new Map<string, { owner: string; until: number }>();
  const copy = (raw: string | undefined) => (raw === undefined ? undefined : (JSON.parse(raw) as SubscriptionRecord));
  const all = () => [...records.values()].map((raw) => JSON.parse(raw) as SubscriptionRecord);

  return {
    async create(r) {
      const existing = copy(records.get(r.key));
      if (existing) return { record: existing, created: false };
      records.set(r.key, JSON.stringify(r));
      return { record: copy(records.get(r.key)) as SubscriptionRecord, created: true };
    },
    async get(key) {
      return copy(records.get(key));
    },
    async listByCustomer(custkey) {
      return all().filter((r) => r.customer === custkey).sort((a, b) => a.created_ms - b.created_ms);
    },
    async swap(next) {
      const stored = copy(records.get(next.key));
      if (!stored || stored.version !== next.version - 1) return false;
      records.set(next.key, JSON.stringify(next));
      return true;
    },
    async due(nowMs, limit) {
      return all().filter((r) => r.due_ms !== null && r.due_ms <= nowMs).sort((a, b) => (a.due_ms ?? 0) - (b.due_ms ?? 0)).slice(0, limit).map((r) => r.key);
    },
    async dueCount(nowMs) {
      return all().filter((r) => r.due_ms !== null && r.due_ms <= nowMs).length;
    },
    async dueBetween(fromMs, toMs) {
      return all().filter((r) => r.due_ms !== null && r.due_ms >= fromMs && r.due_ms <= toMs).length;
    },
    async linkSale(sale, link) {
      links.set(sale, { ...link });
    },
    async saleLink(sale) {
      const link = links.get(sale);
      return link && { ...link };
    },
    async keepFirstCharge(first, replace) {
      if (replace || !firsts.has(first.record.key)) firsts.set(first.record.key, JSON.stringify(first));
      return JSON.parse(firsts.get(first.record.key) as string) as FirstCharge;
    },
    async firstCharge(key) {
      const raw = firsts.get(key);
      return raw === undefined ? undefined : (JSON.parse(raw) as FirstCharge);
    },
    async recordSpill(day) {
      if (spills.has(day)) return false;
      spills.add(day);
      return true;
    },
    async claim(key, owner, ttlMs) {
      const held = claims.get(key);
      if (held && held.until > Date.now()) return false;
      claims.set(key, { owner, until: Date.now() + ttlMs });
      return true;
    },
    async release(key, owner) {
      if (claims.get(key)?.owner === owner) claims.delete(key);
    },
  };
}
