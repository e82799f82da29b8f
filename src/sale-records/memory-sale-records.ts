import { fromCents } from '../gateway/money';
import { decodeSaleFields, encodeSaleFields, SALE_FIELD_NAMES } from './fields';
import { adjusted, refundMoved } from './memory-money';
import { markVoided, mergeRefunds } from './refunds';
import { changesOfHeard, changesOfRefresh, hearResultOf } from './changes';
import { ACH_RANK, type AchStatus } from './types';
import type { Heard, ListedSaleRefund, RecordChange, RecordChangeSink, ReserveResult, ReservedOp, SaleFields, SaleRecord, SaleRecords, SaleState } from './types';

interface Reservation {
  op: ReservedOp;
  cents: number;
  unknown: boolean;
  unknownSinceMs?: number;
  /** A void's: the state it restores when released. */
  before?: SaleState;
}

/** What the memory store keeps beside a record (the Redis hash's other fields). */
export interface Kept extends SaleRecord {
  reservations: Map<string, Reservation>;
  creditedRefunds: Set<string>;
  version: number;
  seenMs: number;
  settled: boolean;
  own: Map<string, ListedSaleRefund>;
  external: ListedSaleRefund[];
  /** Refunds voided at the gateway, with their cents ('rv:' in Redis). */
  voidedRefunds?: Map<string, number>;
}

/**
 * The fields as Redis would give them back after HSET of `fields` over `over`: through the same hash fields
 * (a value with a card number left out; one given sets that hash field and leaves the others).
 */
function kept(fields: SaleFields, over?: SaleFields, onlyMissing = false): SaleFields | undefined {
  const byName = new Map<string, string>();
  for (const f of over ? [over, fields] : [fields]) {
    const pairs = encodeSaleFields(f);
    for (let i = 0; i < pairs.length; i += 2) {
      const name = pairs[i] as string;
      if (!onlyMissing || f === over || !byName.get(name)) byName.set(name, pairs[i + 1] as string);
    }
  }
  return decodeSaleFields(SALE_FIELD_NAMES.map((n) => byName.get(n)));
}

/**
 * SaleRecords in process memory (development mode, tests): the Lua scripts' steps, each method synchronous to
 * completion (the same atomicity within one process).
 */
export function createMemorySaleRecords(options: { onChange?: RecordChangeSink; now?: () => number } = {}): SaleRecords {
  const records = new Map<string, Kept>();
  const batches = new Map<string, Set<string>>();
  /** The due index (batch → first seen ms), as the Redis store's `batches-due`. */
  const due = new Map<string, number>();
  const now = options.now ?? Date.now;
  const indexBatch = (saleKey: string, batch: string | undefined) => {
    if (!batch) return;
    if (!batches.has(batch)) due.set(batch, now());
    batches.set(batch, (batches.get(batch) ?? new Set()).add(saleKey));
  };
  const report = async (changes: RecordChange[]) => {
    if (changes.length > 0) await options.onChange?.(changes);
  };
  /** lua/hear.lua's steps: [result, state after, cents]. */
  const hearOne = (r: Kept | undefined, heard: Heard | { kind: 'settled' }): [string, string, number] => {
    if (!r) return ['absent', '', 0];
    const listedOwn = (key: string) => r.creditedRefunds.has(key) || [...r.own.values()].some((x) => x.key === key) || r.external.some((x) => x.key === key);
    switch (heard.kind) {
      case 'sale':
        return ['unchanged', r.state, 0];
      case 'voided':
        if (!['authorized', 'captured', 'capturing', 'voiding'].includes(r.state)) return ['unchanged', r.state, 0];
        r.state = 'voided';
        r.version += 1;
        return ['changed', r.state, 0];
      case 'captured':
        if (r.state !== 'authorized') return ['unchanged', r.state, 0];
        Object.assign(r, { state: 'captured', capturedCents: heard.capturedCents, version: r.version + 1 });
        if (heard.batch && r.fields) r.fields = kept({ ...r.fields, batch: heard.batch }) ?? r.fields;
        indexBatch(saleKeyOf(r), heard.batch?.key);
        return ['changed', r.state, 0];
      case 'settled':
        if (r.state !== 'captured' || r.settled) return ['unchanged', r.state, 0];
        Object.assign(r, { settled: true, version: r.version + 1 });
        return ['changed', r.state, 0];
      case 'refunded': {
        const { key, refnum, cents, created, statusCode } = heard.refund;
        if (listedOwn(key)) return ['listed', r.state, 0];
        if (r.pendingRefundCents !== 0) return ['busy', r.state, 0];
        if (r.state !== 'captured') return ['unchanged', r.state, 0];
        r.external.push({ key, refnum, cents, created, statusCode, method: 'refund', own: false });
        Object.assign(r, { refundedCents: Math.min(r.capturedCents, r.refundedCents + cents), version: r.version + 1 });
        return ['applied', r.state, cents];
      }
      case 'adjusted':
        return adjusted(r, heard.leftCents, saleKeyOf(r));
      case 'refund_voided':
      case 'refund_restored':
        return refundMoved(r, heard.kind, heard.refundKey);
      case 'unvoided':
        if (r.state === 'voiding') return ['busy', r.state, 0];
        if (r.state !== 'voided') return ['unchanged', r.state, 0];
        Object.assign(r, { state: r.capturedCents > 0 ? 'captured' : 'authorized', version: r.version + 1 });
        return ['changed', r.state, 0];
    }
  };
  const refundSales = new Map<string, string>();
  const keys = new WeakMap<Kept, string>();
  const saleKeyOf = (r: Kept) => keys.get(r) ?? '';
  const refreshing = new Map<string, number>();
  // Bounded like any memory a caller can fill: the oldest memories go first.
  const unknown = new Map<string, number>();
  const recordOf = (r: Kept): SaleRecord => {
    const { customer, state, authorizedCents, capturedCents, refundedCents, pendingRefundCents, fields, writer, seeded } = r;
    return {
      customer, state, authorizedCents, capturedCents, refundedCents, pendingRefundCents, ...(fields ? { fields: structuredClone(fields) } : {}),
      ...(writer ? { writer } : seeded ? { seeded: true } : {}),
    };
  };
  return {
    async get(saleKey) {
      const r = records.get(saleKey);
      return r && recordOf(r);
    },
    async view(saleKey) {
      const r = records.get(saleKey);
      if (!r) return undefined;
      const refunds = markVoided(mergeRefunds([...r.own.values()].map((x) => ({ ...x })), r.external.map((x) => ({ ...x }))), new Set(r.voidedRefunds?.keys()));
      return { record: recordOf(r), version: r.version, settled: r.settled, refunds, seenMs: r.seenMs, credited: new Set(r.creditedRefunds) };
    },
    async claimRefresh(saleKey, ttlMs) {
      const until = refreshing.get(saleKey) ?? 0;
      if (until > Date.now()) return false;
      refreshing.set(saleKey, Date.now() + ttlMs);
      return true;
    },
    async releaseRefresh(saleKey) {
      refreshing.delete(saleKey);
    },
    async saleOfRefund(key) {
      return refundSales.get(key);
    },
    async rememberUnknown(saleKey, ttlMs) {
      unknown.delete(saleKey);
      unknown.set(saleKey, Date.now() + ttlMs);
      if (unknown.size > 10_000) unknown.delete(unknown.keys().next().value as string);
    },
    async knownUnknown(saleKey) {
      const until = unknown.get(saleKey);
      if (until === undefined) return false;
      if (until > Date.now()) return true;
      unknown.delete(saleKey);
      return false;
    },
    async refresh(saleKey, version, seen) {
      const r = records.get(saleKey);
      if (!r || r.version !== version || r.state === 'capturing' || r.state === 'voiding' || r.pendingRefundCents !== 0) return false;
      const before = { refunded: r.refundedCents, settled: r.settled, listed: new Set(r.external.map((x) => x.key)) };
      const own = new Set([...r.creditedRefunds, ...[...r.own.values()].map((x) => x.key)]);
      let [voidedNow, unvoidedNow] = [false, false];
      if ((r.state === 'captured' || r.state === 'authorized') && seen.voided) [r.state, voidedNow] = ['voided', true];
      else if (r.state === 'voided' && !seen.voided && seen.restoreTo) [r.state, unvoidedNow] = [seen.restoreTo, true];
      if (r.state === 'captured' && !voidedNow) [r.refundedCents, r.capturedCents] = [seen.refundedCents, seen.capturedCents];
      for (const x of seen.gatewayRefunds) refundSales.set(x.key, saleKey);
      if (seen.settled) r.settled = true;
      r.external = seen.gatewayRefunds.map((x) => ({ key: x.key, refnum: x.refnum, cents: x.cents, created: x.created, statusCode: x.statusCode, method: 'refund', own: false }));
      r.seenMs = Date.now();
      r.version += 1;
      const fresh = r.external.map((x) => x.key).filter((k) => !before.listed.has(k) && !own.has(k));
      await report(changesOfRefresh(saleKey, {
        voidedNow, unvoidedNow, settledNow: seen.settled && !before.settled, refundedBefore: before.refunded, refundedAfter: r.refundedCents, capturedCents: r.capturedCents, state: r.state, fresh,
      }, seen));
      return true;
    },
    async create(saleKey, record, opts = {}) {
      const { fields, writer, seeded, ...rest } = record;
      const stored = fields && kept(fields);
      const existing = records.get(saleKey);
      if (existing) {
        // lua/create.lua: a writer claims a seed (no writer yet), adding only what the seed lacks.
        if (writer === undefined) return false;
        if (existing.writer !== undefined || !existing.seeded) return existing.writer === writer;
        existing.writer = writer;
        delete existing.seeded;
        if (existing.customer === '') existing.customer = record.customer;
        if (stored) existing.fields = existing.fields ? kept(stored, existing.fields, true) ?? existing.fields : stored;
        existing.version += 1;
        indexBatch(saleKey, stored?.batch?.key);
        return true;
      }
      const r: Kept = {
        ...rest, ...(writer ? { writer } : seeded ? { seeded: true } : {}), ...(stored ? { fields: stored } : {}), pendingRefundCents: 0, reservations: new Map(), creditedRefunds: new Set(),
        version: 1, seenMs: opts.stale ? 0 : Date.now(), settled: false, own: new Map(), external: [],
      };
      records.set(saleKey, r);
      keys.set(r, saleKey);
      indexBatch(saleKey, stored?.batch?.key);
      return true;
    },
    async hear(saleKey, heard) {
      const [result, state, cents] = hearOne(records.get(saleKey), heard);
      if (heard.kind === 'refunded' && result === 'applied') refundSales.set(heard.refund.key, saleKey);
      await report(changesOfHeard(saleKey, heard, result, state, cents));
      return hearResultOf(result);
    },
    async settleBatch(batch) {
      const sales = [...(batches.get(batch) ?? [])];
      const changes = sales.flatMap((saleKey): RecordChange[] => (hearOne(records.get(saleKey), { kind: 'settled' })[1] === 'captured' ? [{ saleKey, kind: 'settled' }] : []));
      await report(changes);
      return sales.length;
    },
    async dueBatches(seenBeforeMs, limit) {
      return [...due].filter(([, ms]) => ms <= seenBeforeMs).sort((a, b) => a[1] - b[1]).slice(0, limit).map(([batch, seenMs]) => ({ batch, seenMs }));
    },
    async batchSales(batch) {
      return [...(batches.get(batch) ?? [])];
    },
    async swept(batch) {
      due.delete(batch);
    },
    async backfillDue() {
      return 0; // one process: every batch was indexed with the due index
    },
    async reserve(saleKey, op, reservation, asked): Promise<ReserveResult> {
      const r = records.get(saleKey);
      if (!r) return { ok: false, reason: 'absent', availableCents: 0 };
      if (op === 'void') {
        if (r.state === 'voided' || r.state === 'declined') return { ok: false, reason: 'not_voidable', availableCents: 0 };
        // A bank payment is voidable only while pending (lua/reserve.lua).
        const ach = r.fields?.bank?.ach_status;
        if (ach !== undefined && ach !== 'P' && ach !== 'M') return { ok: false, reason: 'not_voidable', availableCents: 0 };
        if ((r.state !== 'authorized' && r.state !== 'captured') || r.pendingRefundCents !== 0) return { ok: false, reason: 'busy', availableCents: 0 };
        r.reservations.set(reservation, { op, cents: 0, unknown: false, before: r.state });
        r.state = 'voiding';
        r.version += 1;
        return { ok: true, amountCents: 0, whole: false };
      }
      if (op === 'capture') {
        if (r.state !== 'authorized') return { ok: false, reason: 'not_capturable', availableCents: 0 };
        const amount = asked ?? r.authorizedCents;
        if (amount <= 0 || amount > r.authorizedCents) return { ok: false, reason: 'not_capturable', availableCents: r.authorizedCents };
        r.state = 'capturing';
        r.reservations.set(reservation, { op, cents: amount, unknown: false });
        r.version += 1;
        return { ok: true, amountCents: amount, whole: false };
      }
      if (r.fields?.bank?.ach_status === 'R' || r.fields?.bank?.ach_status === 'E') return { ok: false, reason: 'returned', availableCents: 0 };
      if (r.fields?.bank && [undefined, 'P', 'M'].includes(r.fields.bank.ach_status)) return { ok: false, reason: 'pending', availableCents: 0 };
      const available = r.state === 'captured' ? r.capturedCents - r.refundedCents - r.pendingRefundCents : 0;
      const amount = asked ?? available;
      if (amount <= 0 || amount > available) return { ok: false, reason: 'exceeds', availableCents: Math.max(available, 0) };
      const whole = amount === available;
      r.pendingRefundCents += amount;
      r.reservations.set(reservation, { op, cents: amount, unknown: false });
      r.version += 1;
      return { ok: true, amountCents: amount, whole };
    },
    async settle(saleKey, _op, reservation, how, applied, refundKey, listed) {
      const r = records.get(saleKey);
      const res = r?.reservations.get(reservation);
      if (!r || !res) return;
      r.version += 1;
      if (how === 'unknown') {
        if (!res.unknown) Object.assign(res, { unknown: true, unknownSinceMs: Date.now() });
        return;
      }
      r.reservations.delete(reservation);
      if (how === 'applied') r.seenMs = Date.now();
      if (res.op === 'refund') {
        r.pendingRefundCents -= res.cents;
        if (how === 'applied') {
          r.refundedCents += applied ?? res.cents;
          if (refundKey) r.creditedRefunds.add(refundKey);
          const key = refundKey ?? listed?.key;
          if (key && key !== saleKey) refundSales.set(key, saleKey);
          if (listed) {
            const created = String(Math.floor(Date.now() / 1000));
            r.own.set(reservation, { key: listed.key, refnum: listed.refnum, cents: applied ?? res.cents, created, method: listed.method, own: true });
          }
        }
      } else if (res.op === 'void') {
        if (how === 'applied') r.state = 'voided';
        else if (r.state === 'voiding') r.state = res.before ?? 'captured';
      } else if (how === 'applied') {
        r.state = 'captured';
        r.capturedCents = applied ?? res.cents;
      } else if (r.state === 'capturing') {
        r.state = 'authorized';
      }
    },
    async moves(saleKey) {
      const r = records.get(saleKey);
      const reservations = [...(r?.reservations ?? new Map<string, Reservation>())].map(([id, { before: _before, ...x }]) => ({ id, ...x }));
      const applied = new Map([...(r?.own ?? new Map<string, ListedSaleRefund>())].map(([id, x]) => [id, { key: x.key, refnum: x.refnum, cents: x.cents, method: x.method }]));
      return { reservations, creditedRefunds: new Set(r?.creditedRefunds), applied };
    },
    async markVoided(saleKey) {
      const r = records.get(saleKey);
      if (r) {
        r.state = 'voided';
        r.version += 1;
      }
    },
    async advanceAch(saleKey, status, returned) {
      const r = records.get(saleKey);
      const bank = r?.fields?.bank;
      if (!r?.fields || !bank) return undefined;
      const before: AchStatus = bank.ach_status ?? 'P';
      if (ACH_RANK[status] <= ACH_RANK[before]) return { before, after: before };
      const next = { ...bank, ach_status: status };
      if (status === 'R') {
        if (returned?.code) next.return_code = returned.code;
        if (returned?.date) next.returned_at = returned.date;
        next.amount_returned = fromCents(r.capturedCents);
      }
      r.fields = { ...r.fields, bank: next };
      if (status === 'V') {
        r.state = 'voided';
        r.version += 1;
      }
      return { before, after: status };
    },
    async observe(saleKey, wasRefundedCents, seen) {
      const r = records.get(saleKey);
      if (!r || (r.state !== 'captured' && r.state !== 'authorized') || r.pendingRefundCents !== 0 || r.refundedCents !== wasRefundedCents) return false;
      let changed = false;
      if (r.state === 'captured' && seen.refundedCents > r.refundedCents) {
        r.refundedCents = seen.refundedCents;
        changed = true;
      }
      if (seen.voided) {
        r.state = 'voided';
        changed = true;
      }
      return changed;
    },
    async describe(saleKey, fields, how) {
      const r = records.get(saleKey);
      if (!r || (how === 'fill' && r.fields)) return;
      const merged = kept(fields, r.fields, how === 'complete');
      if (merged) r.fields = merged;
      indexBatch(saleKey, fields.batch?.key);
    },
  };
}

