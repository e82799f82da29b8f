import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { guarded } from '../redis/guarded';
import { APPLIED_MARK_MS, SALE_EVIDENCE_MS, type WebhookStore } from './types';

/** WebhookStore on Redis: `{<prefix>:webhooks}:ev:<event id>` marks and `:inv:<hash of the invoice>` lists. */
export function createRedisWebhookStore(options: { redis: Redis | Cluster; keyPrefix: string; opTimeoutMs?: number }): WebhookStore {
  const { redis } = options;
  const timeoutMs = options.opTimeoutMs ?? 2000;
  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`webhooks ${what}`, timeoutMs, op);
  const tag = `{${options.keyPrefix}:webhooks}`;
  // Hashed: an invoice is the caller's text and never lands in a key as written.
  const invoiceKey = (invoice: string) => `${tag}:inv:${createHash('sha256').update(invoice).digest('base64url').slice(0, 22)}`;
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
  return {
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
