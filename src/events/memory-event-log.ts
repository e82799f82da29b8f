import { entryIdOf, eventOf, type EntryFields } from './entries';
import type { DueEvent, EventLog, PaymentEvent } from './types';
import { jsonOf } from '../idempotency/json-once';

interface Entry {
  id: string;
  ms: number;
  fields: EntryFields;
}

interface Pending {
  consumer: string;
  attempts: number;
  /** When the last attempt started (or was stamped as having started). */
  at: number;
}

interface Group {
  /** Index in `entries` of the first entry no consumer has taken. */
  next: number;
  pending: Map<string, Pending>;
}

/**
 * The event log in process memory (development mode and tests without Redis): the Redis log's steps, each
 * synchronous, with the same ids, dedupe, retention and delivery bookkeeping.
 */
export function createMemoryEventLog(options: { retentionMs: number; now?: () => number }): EventLog {
  const now = options.now ?? Date.now;
  let entries: Entry[] = [];
  const marks = new Map<string, { id: string; until: number }>();
  const groups = new Map<string, Group>();
  let lastMs = 0;
  let seq = 0;

  const compare = (a: string, b: string) => {
    const [am = 0, as = 0] = a.split('-').map(Number);
    const [bm = 0, bs = 0] = b.split('-').map(Number);
    return am - bm || as - bs;
  };
  const eventsOf = (list: Entry[]): PaymentEvent[] => list.flatMap((e) => eventOf(e.id, e.fields) ?? []);
  const trim = () => {
    const horizon = now() - options.retentionMs;
    const drop = entries.findIndex((e) => e.ms >= horizon);
    const n = drop < 0 ? entries.length : drop;
    if (n === 0) return;
    entries = entries.slice(n);
    for (const g of groups.values()) g.next = Math.max(0, g.next - n);
  };
  const groupOf = (destination: string): Group => {
    const g = groups.get(destination);
    if (!g) throw new Error('NOGROUP: the destination has no group');
    return g;
  };

  return {
    async append(drafts) {
      for (const d of drafts) {
        const t = now();
        const kept = marks.get(d.change);
        if (kept && kept.until > t) continue;
        if (t > lastMs) [lastMs, seq] = [t, 0];
        else seq += 1;
        const id = `${lastMs}-${seq}`;
        entries.push({ id, ms: lastMs, fields: { type: d.type, change: d.change, data: jsonOf(d.data ?? null) as string } });
        marks.set(d.change, { id, until: t + options.retentionMs });
        trim();
      }
    },
    async list(after, limit) {
      const from = after === undefined ? 0 : entries.findIndex((e) => compare(e.id, entryIdOf(after)) > 0);
      return from < 0 ? [] : eventsOf(entries.slice(from, from + limit));
    },
    async ensureDestination(destination) {
      if (!groups.has(destination)) groups.set(destination, { next: entries.length, pending: new Map() });
    },
    async takeNew(destination, consumer, count) {
      const g = groupOf(destination);
      const taken = entries.slice(g.next, g.next + count);
      g.next += taken.length;
      for (const e of taken) g.pending.set(e.id, { consumer, attempts: 1, at: now() });
      return eventsOf(taken).map((event) => ({ event, attempt: 1 }));
    },
    async takeDue(destination, consumer, dueAfterMs, count) {
      const g = groupOf(destination);
      const out: DueEvent[] = [];
      for (const [id, p] of [...g.pending].sort((a, b) => compare(a[0], b[0]))) {
        if (out.length >= count) break;
        const delay = dueAfterMs[Math.min(p.attempts, dueAfterMs.length) - 1] ?? 0;
        if (now() - p.at < delay) continue;
        const entry = entries.find((e) => e.id === id);
        if (!entry) {
          g.pending.delete(id); // trimmed meanwhile
          continue;
        }
        Object.assign(p, { consumer, attempts: p.attempts + 1, at: now() });
        const event = eventOf(entry.id, entry.fields);
        if (event) out.push({ event, attempt: p.attempts });
      }
      return out;
    },
    async stamp(destination, consumer, id, agoMs) {
      const p = groupOf(destination).pending.get(entryIdOf(id));
      if (p) Object.assign(p, { consumer, at: now() - agoMs });
    },
    async ack(destination, id) {
      groupOf(destination).pending.delete(entryIdOf(id));
    },
    async backlog(destination) {
      const g = groupOf(destination);
      const oldest = [...g.pending.keys()].sort(compare)[0];
      return { pending: g.pending.size, oldestMs: oldest === undefined ? undefined : Math.max(0, now() - Number(oldest.split('-')[0])) };
    },
  };
}
