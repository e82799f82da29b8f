import { hash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { guarded } from '../redis/guarded';
import { APPLIED_MARK_MS, EARLY_ACH_MAX, EARLY_ACH_MS, SALE_EVIDENCE_MS, type WebhookStore } from './types';

/** WebhookStore on Redis: `{<prefix>:webhooks}:ev:<event id>` marks and `:inv:<hash of the invoice>` lists. */
export function createRedisWebhookStore(options: { redis: Redis | Cluster; keyPrefix: string; opTimeoutMs?: number }): WebhookStore {
  const { redis } = options;
  const timeoutMs = options.opTimeoutMs ?? 2000;
  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`webhooks ${what}`, timeoutMs, op);
  const tag = `{${options.keyPrefix}:webhooks}`;
  // Hashed: an invoice is the caller's text and never lands in a key as written.
  const invoiceKey = (invoice: string) => `${tag}:inv:${hash('sha256', invoice, 'base64url').slice(0, 22)}`;
  return {
    async applied(eventId) {
      return (await call('applied', () => redis.exists(`${tag}:ev:${eventId}`))) === 1;
    },
    async markApplied(eventId) {
      await call('mark', () => redis.set(`${tag}:ev:${eventId}`, '1', 'PX', APPLIED_MARK_MS));
    },
    async keepSale(invoice, object) {
      const key = invoiceKey(invoice);
      await call('keep', () => redis.multi().rpush(key, JSON.stringify(object)).ltrim(key, -10, -1).pexpire(key, SALE_EVIDENCE_MS).exec());
    },
    async queueConfirm(item, dueMs) {
      await call('queue confirm', () => redis.zadd(`${tag}:confirm`, dueMs, item));
    },
    async doneConfirm(item) {
      await call('done confirm', () => redis.zrem(`${tag}:confirm`, item));
    },
    async takeDueConfirms(nowMs, limit) {
      const due = await call('due confirms', () => redis.zrangebyscore(`${tag}:confirm`, '-inf', nowMs, 'LIMIT', 0, limit));
      // ZREM answers 1 to one replica only: the one that takes the item.
      const taken = await Promise.all(due.map((item) => call('take confirm', () => redis.zrem(`${tag}:confirm`, item))));
      return due.filter((_, i) => taken[i] === 1);
    },
    async keepEarlyAch(saleKey, step, detail) {
      // `:early` scores each sale by when it was first kept; its steps live in `:early:<sale>` (both expire).
      const now = Date.now();
      const [, [, count]] = (await call('early count', () => redis.multi().zremrangebyscore(`${tag}:early`, '-inf', now - EARLY_ACH_MS).zcard(`${tag}:early`).exec())) as [unknown, [unknown, number]];
      if (count >= EARLY_ACH_MAX && (await call('early score', () => redis.zscore(`${tag}:early`, saleKey))) === null) return false;
      await call('early keep', () =>
        redis.multi().zadd(`${tag}:early`, 'NX', now, saleKey).hset(`${tag}:early:${saleKey}`, step, detail).pexpire(`${tag}:early:${saleKey}`, EARLY_ACH_MS).pexpire(`${tag}:early`, EARLY_ACH_MS).exec(),
      );
      return true;
    },
    async earlyAchSales(limit) {
      await call('early trim', () => redis.zremrangebyscore(`${tag}:early`, '-inf', Date.now() - EARLY_ACH_MS));
      return call('early sales', () => redis.zrange(`${tag}:early`, '0', String(limit - 1)));
    },
    async earlyAchOf(saleKey) {
      return call('early of', () => redis.hgetall(`${tag}:early:${saleKey}`));
    },
    async dropEarlyAch(saleKey) {
      await call('early drop', () => redis.multi().zrem(`${tag}:early`, saleKey).del(`${tag}:early:${saleKey}`).exec());
    },
    async salesByInvoice(invoice) {
      const items = await call('sales', () => redis.lrange(invoiceKey(invoice), 0, -1));
      return items.flatMap((item) => {
        try {
          return [JSON.parse(item) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
    },
  };
}

/** The same in process memory (development mode, tests). */
export function createMemoryWebhookStore(now: () => number = Date.now): WebhookStore {
  const marks = new Map<string, number>();
  const sales = new Map<string, { until: number; items: Record<string, unknown>[] }>();
  const confirms = new Map<string, number>();
  const early = new Map<string, { since: number; steps: Record<string, string> }>();
  const live = () => {
    for (const [sale, kept] of early) if (kept.since <= now() - EARLY_ACH_MS) early.delete(sale);
  };
  return {
    async keepEarlyAch(saleKey, step, detail) {
      live();
      const kept = early.get(saleKey);
      if (!kept && early.size >= EARLY_ACH_MAX) return false;
      early.set(saleKey, { since: kept?.since ?? now(), steps: { ...kept?.steps, [step]: detail } });
      return true;
    },
    async earlyAchSales(limit) {
      live();
      return [...early.keys()].slice(0, limit);
    },
    async earlyAchOf(saleKey) {
      return { ...early.get(saleKey)?.steps };
    },
    async dropEarlyAch(saleKey) {
      early.delete(saleKey);
    },
    async queueConfirm(item, dueMs) {
      confirms.set(item, dueMs);
    },
    async doneConfirm(item) {
      confirms.delete(item);
    },
    async takeDueConfirms(nowMs, limit) {
      const due = [...confirms].filter(([, at]) => at <= nowMs).slice(0, limit).map(([item]) => item);
      for (const item of due) confirms.delete(item);
      return due;
    },
    async applied(eventId) {
      return (marks.get(eventId) ?? 0) > now();
    },
    async markApplied(eventId) {
      marks.set(eventId, now() + APPLIED_MARK_MS);
      if (marks.size > 100_000) marks.delete(marks.keys().next().value as string);
    },
    async keepSale(invoice, object) {
      const kept = sales.get(invoice);
      const items = kept && kept.until > now() ? [...kept.items, structuredClone(object)].slice(-10) : [structuredClone(object)];
      sales.set(invoice, { until: now() + SALE_EVIDENCE_MS, items });
      if (sales.size > 100_000) sales.delete(sales.keys().next().value as string);
    },
    async salesByInvoice(invoice) {
      const kept = sales.get(invoice);
      return kept && kept.until > now() ? structuredClone(kept.items) : [];
    },
  };
}
