/**
 * What the reconciler needs to know about a write whose outcome may become unknown (issue 12): enough to find
 * it in the gateway's own records without asking anyone. No card data: customer and sale keys, amounts and
 * the invoice (which the card guard has already checked). Serialised once as the member of the due set, so
 * the exact same string removes it again.
 */
export type WriteOperation = 'sale' | 'authonly' | 'capture' | 'void' | 'refund' | 'verify';

export interface PendingWrite {
  /** The idempotency scope (JWT `sub`) and key: together they name the record to resolve. */
  scope: string;
  key: string;
  op: WriteOperation;
  /** The customer charged (sales carry `custkey`), or the customer of the sale a follow-up acts on. */
  customer: string;
  /** The amount sent (decimal string), when the write carries one. */
  amount?: string;
  /** The invoice sent with a sale or authonly (always set: derived when the caller gave none). */
  invoice?: string;
  /** The gateway key of the sale a capture, void or refund acts on. */
  sale?: string;
  /** For refunds: the refund keys that already existed on the sale before this one was sent. */
  knownRefunds?: string[];
  /** When the attempt started (ms since the epoch, this replica's clock). */
  started: number;
}

const FIELDS: readonly (keyof PendingWrite)[] = ['scope', 'key', 'op', 'customer', 'amount', 'invoice', 'sale', 'knownRefunds', 'started'];

/** A stable encoding (fixed field order) so the member written at begin is the member removed at the end. */
export function encodePendingWrite(w: PendingWrite): string {
  const out: Record<string, unknown> = {};
  for (const f of FIELDS) if (w[f] !== undefined) out[f] = w[f];
  return JSON.stringify(out);
}

const OPS: ReadonlySet<string> = new Set<WriteOperation>(['sale', 'authonly', 'capture', 'void', 'refund', 'verify']);

/** Parses a member back; undefined for anything that is not one of ours (never throws on Redis content). */
export function decodePendingWrite(member: string): PendingWrite | undefined {
  let v: unknown;
  try {
    v = JSON.parse(member);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
  const scope = str(o.scope), key = str(o.key), op = str(o.op), customer = str(o.customer);
  if (scope === undefined || key === undefined || op === undefined || !OPS.has(op) || customer === undefined) return undefined;
  if (typeof o.started !== 'number' || !Number.isFinite(o.started)) return undefined;
  const known = Array.isArray(o.knownRefunds) && o.knownRefunds.every((k) => typeof k === 'string') ? (o.knownRefunds as string[]) : undefined;
  return {
    scope, key, op: op as WriteOperation, customer, started: o.started,
    ...(str(o.amount) !== undefined ? { amount: str(o.amount) } : {}),
    ...(str(o.invoice) !== undefined ? { invoice: str(o.invoice) } : {}),
    ...(str(o.sale) !== undefined ? { sale: str(o.sale) } : {}),
    ...(known ? { knownRefunds: known } : {}),
  };
}
