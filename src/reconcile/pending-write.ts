/**
 * A write the reconciler watches, as a member of the due set: the idempotency scope (JWT `sub`) and key that
 * name its record. What the write was (operation, customer, sale, amount, invoice, start) lives in the record
 * itself (WriteContext, written by begin), so the record stays the one truth.
 */
export interface PendingWrite {
  scope: string;
  key: string;
}

/** A stable encoding, so the member written at begin is the member removed at the end. */
export function encodePendingWrite(w: PendingWrite): string {
  return JSON.stringify([w.scope, w.key]);
}

/** Parses a member back; undefined for anything that is not one of ours (never throws on Redis content). */
export function decodePendingWrite(member: string): PendingWrite | undefined {
  let v: unknown;
  try {
    v = JSON.parse(member);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== 'string' || typeof v[1] !== 'string') return undefined;
  return { scope: v[0], key: v[1] };
}
