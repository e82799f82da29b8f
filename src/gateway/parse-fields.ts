/** The primitives every gateway answer parser shares: typed reads of one field, and the error they throw. */

/** Thrown by the parsers when an answer does not have the documented shape; the client turns it into GatewayUnreadableError. */
export class ShapeError extends Error {}

export type Obj = Record<string, unknown>;

export function obj(value: unknown, what: string): Obj {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ShapeError(`${what} is not an object`);
  return value as Obj;
}

export function str(o: Obj, field: string, required = true): string | undefined {
  const v = o[field];
  if (typeof v === 'string') return v;
  // Real answers send some documented strings as numbers (gateway-api-v2.md §2.5 "documented as number").
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (v === undefined || v === null) {
    if (required) throw new ShapeError(`field ${field} is missing`);
    return undefined;
  }
  throw new ShapeError(`field ${field} has the wrong type`);
}

export function int(o: Obj, field: string): number {
  const v = o[field];
  // Real list answers send `total` as a string (gateway-facts.md, Customers); the spec says integer.
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new ShapeError(`field ${field} is not a count`);
  return n;
}
