import { decodeSaleFields, encodeSaleFields, SALE_FIELD_NAMES } from './fields';
import { mergeRefunds } from './refunds';
import type { ListedSaleRefund, ReserveResult, ReservedOp, SaleFields, SaleRecord, SaleRecords, SaleState } from './types';

interface Reservation {
  op: ReservedOp;
  cents: number;
  unknown: boolean;
  unknownSinceMs?: number;
  /** A void's: the state it restores when released. */
  before?: SaleState;
}

/** What the memory store keeps beside a record (the Redis hash's other fields). */
interface Kept extends SaleRecord {
  reservations: Map<string, Reservation>;
  creditedRefunds: Set<string>;
  version: number;
  seenMs: number;
  settled: boolean;
  own: Map<string, ListedSaleRefund>;
  external: ListedSaleRefund[];
}

/**
 * The fields as Redis would give them back after HSET of `fields` over `over`: through the same hash fields
 * (a value with a card number left out; one given sets that hash field and leaves the others).
 */
function kept(fields: SaleFields, over?: SaleFields): SaleFields | undefined {
  const byName = new Map<string, string>();
  for (const f of over ? [over, fields] : [fields]) {
    const pairs = encodeSaleFields(f);
    for (let i = 0; i < pairs.length; i += 2) byName.set(pairs[i] as string, pairs[i + 1] as string);
  }
  return decodeSaleFields(SALE_FIELD_NAMES.map((n) => byName.get(n)));
}

/**
 * SaleRecords in process memory (development mode, tests): the Lua scripts' steps, each method synchronous to
 * completion (the same atomicity within one process).
 */
export function createMemorySaleRecords(): SaleRecords {
  const records = new Map<string, Kept>();
  const refreshing = new Map<string, number>();
  // Bounded like any memory a caller can fill: the oldest memories go first.
  const unknown = new Map<string, number>();
  const recordOf = (r: Kept): SaleRecord => {
    const { customer, state, authorizedCents, capturedCents, refundedCents, pendingRefundCents, fields } = r;
    return { customer, state, authorizedCents, capturedCents, refundedCents, pendingRefundCents, ...(fields ? { fields: structuredClone(fields) } : {}) };
  };
  return {
    async get(saleKey) {
      const r = records.get(saleKey);
      return r && recordOf(r);
    },
    async view(saleKey) {
      const r = records.get(saleKey);
      if (!r) return undefined;
      const refunds = mergeRefunds([...r.own.values()].map((x) => ({ ...x })), r.external.map((x) => ({ ...x })));
      return { record: recordOf(r), version: r.version, settled: r.settled, refunds, seenMs: r.seenMs, credited: new Set(r.creditedRefunds) };
    },
    async claimRefresh(saleKey, ttlMs) {
      const until = refreshing.get(saleKey) ?? 0;
      if (until > Date.now()) return false;
      refreshing.set(saleKey, Date.now() + ttlMs);
      return true;
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
      if ((r.state === 'captured' || r.state === 'authorized') && seen.voided) r.state = 'voided';
      else if (r.state === 'captured' && seen.refundedCents > r.refundedCents) r.refundedCents = seen.refundedCents;
      if (seen.settled) r.settled = true;
      r.external = seen.gatewayRefunds.map((x) => ({ key: x.key, refnum: x.refnum, cents: x.cents, created: x.created, statusCode: x.statusCode, method: 'refund', own: false }));
      r.seenMs = Date.now();
      r.version += 1;
      return true;
    },
    async create(saleKey, record) {
      if (records.has(saleKey)) return;
      const { fields, ...rest } = record;
      const stored = fields && kept(fields);
      records.set(saleKey, {
        ...rest, ...(stored ? { fields: stored } : {}), pendingRefundCents: 0, reservations: new Map(), creditedRefunds: new Set(),
        version: 1, seenMs: Date.now(), settled: false, own: new Map(), external: [],
      });
    },
    async reserve(saleKey, op, reservation, asked): Promise<ReserveResult> {
      const r = records.get(saleKey);
      if (!r) return { ok: false, reason: 'absent', availableCents: 0 };
      if (op === 'void') {
        if (r.state === 'voided' || r.state === 'declined') return { ok: false, reason: 'not_voidable', availableCents: 0 };
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
      return { reservations, creditedRefunds: new Set(r?.creditedRefunds) };
    },
    async markVoided(saleKey) {
      const r = records.get(saleKey);
      if (r) {
        r.state = 'voided';
        r.version += 1;
      }
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
      const merged = kept(fields, r.fields);
      if (merged) r.fields = merged;
    },
  };
}

