import { randomAlnum } from './fixtures';

/**
 * Settlement batches (gateway-facts.md, Looking transactions up): one batch is open at a time; sales,
 * captures and refunds join it; closing it settles what it holds and the next transaction opens a new one.
 * Voided transactions stay listed in the batch they were in (as voids). Uncaptured authorizations belong to
 * no batch.
 */

export interface BatchRecord {
  key: string;
  /** A number, increasing; sent as a number in a sale's answer and as a string in lookups (real answers). */
  batchrefnum: number;
  sequence: number;
  /** Epoch ms. */
  opened: number;
  closed?: number;
  /** Keys of the transactions it holds, in the order they joined. */
  members: string[];
}

/** The reference a transaction's answer carries. */
export interface BatchRef {
  type: 'batch';
  key: string;
  batchrefnum: number;
  sequence: string;
}

const REFNUM_EPOCH_MS = Date.UTC(2024, 0, 1);

export class Batches {
  /** Oldest first; the last one is the open batch when `open` is set. */
  private all: BatchRecord[] = [];
  private open: BatchRecord | undefined;
  private byKey = new Map<string, BatchRecord>();
  private lastRefnum = 0;

  /** The open batch, opened now when there is none. */
  current(now: number): BatchRecord {
    if (!this.open) {
      // Minutes since 2024-01-01 plus 400000: increasing across restarts and resets, 7 digits for decades.
      this.lastRefnum = Math.max(this.lastRefnum + 1, 400_000 + Math.floor((now - REFNUM_EPOCH_MS) / 60_000));
      this.open = { key: `ft${randomAlnum(13)}`, batchrefnum: this.lastRefnum, sequence: this.all.length + 1, opened: now, members: [] };
      this.all.push(this.open);
      this.byKey.set(this.open.key, this.open);
    }
    return this.open;
  }

  /** Adds a transaction to the open batch and returns the reference its answer carries. */
  join(txKey: string, now: number): BatchRef {
    const b = this.current(now);
    b.members.push(txKey);
    return refOf(b);
  }

  /** Closes the open batch (opening it first if none, as the gateway always has a current batch). */
  close(now: number): BatchRecord {
    const b = this.current(now);
    b.closed = now;
    this.open = undefined;
    return b;
  }

  /** True when the open batch has been open for `intervalMs` or more (the timer knob, checked on each call). */
  due(now: number, intervalMs: number): boolean {
    return intervalMs > 0 && this.open !== undefined && now - this.open.opened >= intervalMs;
  }

  /** The open batch's daily close when it has come (≤ now): the first `closeAt` after it opened; else undefined. */
  dailyCloseDue(now: number, closeAt: string): number | undefined {
    const at = this.open ? timeOfDayAfter(closeAt, this.open.opened) : undefined;
    return at !== undefined && at <= now ? at : undefined;
  }

  /** By key, or 'current'. */
  get(key: string, now: number): BatchRecord | undefined {
    return key === 'current' ? this.current(now) : this.byKey.get(key);
  }

  /** Newest first. */
  list(): BatchRecord[] {
    return [...this.all].reverse();
  }

  reset(): void {
    this.all = [];
    this.open = undefined;
    this.byKey.clear();
  }
}

/** The first time of day `closeAt` ("HH:MM", UTC) strictly after `after` (epoch ms); undefined when '' . */
export function timeOfDayAfter(closeAt: string, after: number): number | undefined {
  const m = /^(\d\d):(\d\d)$/.exec(closeAt);
  if (!m) return undefined;
  const day = new Date(after);
  const at = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), Number(m[1]), Number(m[2]));
  return at > after ? at : at + 86_400_000;
}

export function refOf(b: BatchRecord): BatchRef {
  return { type: 'batch', key: b.key, batchrefnum: b.batchrefnum, sequence: String(b.sequence) };
}
