import { hash } from 'node:crypto';
import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { coalescer } from '../redis/coalesce';
import { guarded } from '../redis/guarded';
import { luaIn, withScripts } from '../redis/scripts';
import { entryIdOf, eventOf, type EntryFields } from './entries';
import type { DueEvent, EventDraft, EventLog, PaymentEvent } from './types';
import { jsonOf } from '../idempotency/json-once';

/**
 * The event log on Redis Streams (style.md: an ordered log several replicas share, with consumer groups): one
 * stream `{<prefix>:events}:log`, entries trimmed by MINID past `retentionMs` (at least 7 days, the contract's
 * bound), each change's mark `{<prefix>:events}:c:<hash>` kept as long (the dedupe). One consumer group per
 * destination (`d_<hash of the URL>`: the URL itself, which may hold credentials, never lands in Redis): new
 * events are taken with XREADGROUP, retries with XPENDING + XCLAIM in one script (lua/take-due.lua), so the
 * delivery count and the idle time the retry schedule reads are Redis's own. XAUTOCLAIM is not used: it claims
 * with one idle bound for all, and each attempt here has its own delay.
 */
export interface RedisEventLogOptions {
  redis: Redis | Cluster;
  keyPrefix: string;
  retentionMs: number;
  opTimeoutMs?: number;
}

interface Commands {
  tgEventAppend(log: string, mark: string, retentionMs: number, type: string, change: string, data: string): Promise<unknown>;
  /** `keyCount` (1 + events), the log, each event's mark, then the retention and type, change, data per event. */
  tgEventAppendMany(keyCount: number, ...keysThenArgs: Array<string | number>): Promise<unknown>;
  tgEventTakeDue(log: string, group: string, consumer: string, count: number, ...delays: number[]): Promise<unknown>;
}

const lua = luaIn(path.join(__dirname, 'lua'));
const SCRIPTS = [lua('tgEventAppend', 'append.lua', 2), lua('tgEventAppendMany', 'append-many.lua', -1), lua('tgEventTakeDue', 'take-due.lua', 1)];

/** The consumer group of a destination: a hash of its URL. */
export function groupOf(destination: string): string {
  return `d_${hash('sha256', destination, 'hex').slice(0, 16)}`;
}

/** XRANGE / XREADGROUP / XCLAIM entries ([id, [field, value, …]]) as fields by name. */
function fieldsOf(raw: unknown): EntryFields {
  const out: EntryFields = {};
  const list = Array.isArray(raw) ? (raw as unknown[]) : [];
  for (let i = 0; i + 1 < list.length; i += 2) out[String(list[i])] = String(list[i + 1]);
  return out;
}

export function createRedisEventLog(options: RedisEventLogOptions): EventLog {
  const redis = withScripts<Commands>(options.redis, SCRIPTS);
  const timeoutMs = options.opTimeoutMs ?? 2000;
  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`events ${what}`, timeoutMs, op);
  const tag = `{${options.keyPrefix}:events}`;
  const log = `${tag}:log`;
  const mark = (change: string) => `${tag}:c:${hash('sha256', change, 'base64url').slice(0, 22)}`;

  // The events of one turn of the event loop (the sales answered in one read, each with its event) in one command
  // (redis/coalesce.ts); each write still awaits it before it answers.
  const appendInTurn = coalescer<EventDraft>((_log, drafts) => {
    if (drafts.length === 1) {
      const d = drafts[0] as EventDraft;
      return call('append', () => redis.tgEventAppend(log, mark(d.change), options.retentionMs, d.type, d.change, jsonOf(d.data ?? null) as string));
    }
    const args = drafts.flatMap((d) => [d.type, d.change, jsonOf(d.data ?? null) as string]);
    return call('append', () => redis.tgEventAppendMany(1 + drafts.length, log, ...drafts.map((d) => mark(d.change)), options.retentionMs, ...args));
  });

  const events = (entries: unknown): PaymentEvent[] =>
    (Array.isArray(entries) ? (entries as unknown[][]) : []).flatMap((e) => {
      const event = eventOf(String(e[0]), fieldsOf(e[1]));
      return event ? [event] : [];
    });

  return {
    async append(drafts) {
      await Promise.all(drafts.map((d) => appendInTurn(log, d)));
    },
    async list(after, limit) {
      const start = after === undefined ? '-' : `(${entryIdOf(after)}`;
      return events(await call('list', () => redis.xrange(log, start, '+', 'COUNT', limit)));
    },
    async ensureDestination(destination) {
      try {
        await call('group', () => redis.xgroup('CREATE', log, groupOf(destination), '$', 'MKSTREAM'));
      } catch (err) {
        if (!/BUSYGROUP/.test(String((err as Error).message))) throw err;
      }
    },
    async takeNew(destination, consumer, count) {
      const reply = (await call('takeNew', () => redis.xreadgroup('GROUP', groupOf(destination), consumer, 'COUNT', count, 'STREAMS', log, '>'))) as [string, unknown[]][] | null;
      return events(reply?.[0]?.[1] ?? []).map((event) => ({ event, attempt: 1 }));
    },
    async takeDue(destination, consumer, dueAfterMs, count) {
      const delays = dueAfterMs.map((ms) => Math.max(0, Math.round(ms)));
      const reply = (await call('takeDue', () => redis.tgEventTakeDue(log, groupOf(destination), consumer, count, ...delays))) as unknown[][];
      return reply.flatMap((r): DueEvent[] => {
        const event = eventOf(String(r[0]), fieldsOf(r[2]));
        return event ? [{ event, attempt: Number(r[1]) }] : [];
      });
    },
    async stamp(destination, consumer, id, agoMs) {
      // XCLAIM … IDLE <ms> JUSTID: sets the idle time without counting a delivery (ioredis' typings want every option).
      await call('stamp', () => redis.call('XCLAIM', log, groupOf(destination), consumer, '0', entryIdOf(id), 'IDLE', String(Math.max(0, Math.round(agoMs))), 'JUSTID'));
    },
    async ack(destination, id) {
      await call('ack', () => redis.xack(log, groupOf(destination), entryIdOf(id)));
    },
    async backlog(destination) {
      const summary = (await call('backlog', () => redis.xpending(log, groupOf(destination)))) as [number, string | null, string | null, unknown];
      const oldest = summary[1] ? Number(summary[1].split('-')[0]) : undefined;
      return { pending: Number(summary[0] ?? 0), oldestMs: oldest === undefined ? undefined : Math.max(0, Date.now() - oldest) };
    },
  };
}
