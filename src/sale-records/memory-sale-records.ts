import { decodeSaleFields, encodeSaleFields, SALE_FIELD_NAMES } from './fields';
import type { ReserveResult, SaleFields, SaleRecord, SaleRecords } from './types';

interface Reservation {
  op: 'capture' | 'refund';
  cents: number;
  unknown: boolean;
  unknownSinceMs?: number;
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
  const records = new Map<string, SaleRecord & { reservations: Map<string, Reservation>; creditedRefunds: Set<string> }>();
  return {
    async get(saleKey) {
      const r = records.get(saleKey);
      if (!r) return undefined;
      const { reservations: _ignored, creditedRefunds: _credited, fields, ...record } = r;
      return fields ? { ...record, fields: structuredClone(fields) } : { ...record };
    },
    async create(saleKey, record) {
      if (records.has(saleKey)) return;
      const { fields, ...rest } = record;
      const stored = fields && kept(fields);
      records.set(saleKey, { ...rest, ...(stored ? { fields: stored } : {}), pendingRefundCents: 0, reservations: new Map(), creditedRefunds: new Set() });
    },
    async reserve(saleKey, op, reservation, asked): Promise<ReserveResult> {
      const r = records.get(saleKey);
      if (!r) return { ok: false, reason: 'absent', availableCents: 0 };
      if (op === 'capture') {
        if (r.state !== 'authorized') return { ok: false, reason: 'not_capturable', availableCents: 0 };
        const amount = asked ?? r.authorizedCents;
        if (amount <= 0 || amount > r.authorizedCents) return { ok: false, reason: 'not_capturable', availableCents: r.authorizedCents };
        r.state = 'capturing';
        r.reservations.set(reservation, { op, cents: amount, unknown: false });
        return { ok: true, amountCents: amount, whole: false };
      }
      const available = r.state === 'captured' ? r.capturedCents - r.refundedCents - r.pendingRefundCents : 0;
      const amount = asked ?? available;
      if (amount <= 0 || amount > available) return { ok: false, reason: 'exceeds', availableCents: Math.max(available, 0) };
      const whole = amount === available;
      r.pendingRefundCents += amount;
      r.reservations.set(reservation, { op, cents: amount, unknown: false });
      return { ok: true, amountCents: amount, whole };
    },
    async settle(saleKey, _op, reservation, how, applied, refundKey) {
      const r = records.get(saleKey);
      const res = r?.reservations.get(reservation);
      if (!r || !res) return;
      if (how === 'unknown') {
        if (!res.unknown) Object.assign(res, { unknown: true, unknownSinceMs: Date.now() });
        return;
      }
      r.reservations.delete(reservation);
      if (res.op === 'refund') {
        r.pendingRefundCents -= res.cents;
        if (how === 'applied') {
          r.refundedCents += applied ?? res.cents;
          if (refundKey) r.creditedRefunds.add(refundKey);
        }
      } else if (how === 'applied') {
        r.state = 'captured';
        r.capturedCents = applied ?? res.cents;
      } else if (r.state === 'capturing') {
        r.state = 'authorized';
      }
    },
    async moves(saleKey) {
      const r = records.get(saleKey);
      return { reservations: [...(r?.reservations ?? new Map<string, Reservation>())].map(([id, x]) => ({ id, ...x })), creditedRefunds: new Set(r?.creditedRefunds) };
    },
    async markVoided(saleKey) {
      const r = records.get(saleKey);
      if (r) r.state = 'voided';
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

