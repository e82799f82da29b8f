import type { Kept } from './memory-sale-records';

/** The memory store's steps of lua/hear.lua that move money back and forth (the Redis script's twins). */

/** adjusted: the gateway's new amount, an authorization's hold or what a captured sale has left. */
export function adjusted(r: Kept, there: number, saleKey: string): [string, string, number] {
  if (r.state === 'authorized') {
    if (r.authorizedCents === there) return ['listed', r.state, 0];
    Object.assign(r, { authorizedCents: there, version: r.version + 1 });
    return ['applied', r.state, 0];
  }
  if (r.state !== 'captured') return ['unchanged', r.state, 0];
  if (r.pendingRefundCents !== 0) return ['busy', r.state, 0];
  // Standing credits (refunds with a transaction of their own) do not lower the sale's own amount (lua/hear.lua).
  const credits = [...r.own.values(), ...r.external].filter((x) => x.key !== saleKey && !r.voidedRefunds?.has(x.key)).reduce((sum, x) => sum + x.cents, 0);
  const left = r.capturedCents - (r.refundedCents - credits);
  if (there === left) return ['listed', r.state, 0];
  const captured = Math.max(r.capturedCents, there);
  Object.assign(r, { capturedCents: captured, refundedCents: Math.min(captured, credits + captured - there), version: r.version + 1 });
  return ['applied', r.state, left - there];
}

/** lua/hear.lua's refund_voided and refund_restored: a listed refund's amount given back, or counted again. */
export function refundMoved(r: Kept, kind: 'refund_voided' | 'refund_restored', key: string): [string, string, number] {
  const was = r.voidedRefunds?.get(key);
  if (kind === 'refund_restored') {
    if (was === undefined) return ['unchanged', r.state, 0];
    r.voidedRefunds?.delete(key);
    Object.assign(r, { refundedCents: Math.min(r.capturedCents, r.refundedCents + was), version: r.version + 1 });
    return ['applied', r.state, was];
  }
  if (was !== undefined) return ['listed', r.state, was];
  const cents = [...r.external, ...r.own.values()].find((x) => x.key === key)?.cents;
  if (cents === undefined) return ['unknown_refund', r.state, 0];
  (r.voidedRefunds ??= new Map()).set(key, cents);
  Object.assign(r, { refundedCents: Math.max(0, r.refundedCents - cents), version: r.version + 1 });
  return ['applied', r.state, cents];
}
