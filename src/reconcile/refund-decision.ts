import type { TransactionDetail } from '../gateway/types';
import type { Reservation, SaleRecord } from '../sale-records';
import { shownCapturedCents, statusOf } from '../sales/sale-view';
import type { Credit } from './find-refund';

/**
 * Whether an unknown refund happened, from what the gateway documents only (issue 42, contract guarantee 6):
 * the sale's look-up (`status_code`: voided; `auth_amount`: what refund:adjust took off an unsettled capture) and
 * the credits of the batch lists (find-refund.ts), never a look-up's `refunds` list (the reference's look-up has
 * none). tokengate sends a refund one of three ways (src/sales/follow-up-service.ts), and each leaves its mark:
 *   refund:adjust (a part)         unsettled: the capture lowered (auth_amount); settled: a credit, tagged
 *   refund (all, sale settled)      a credit, tagged
 *   creditvoid (all, else)         unsettled: the sale voided; settled meanwhile: a credit, untagged
 * So:
 *   found   a credit carries this write's tag; or the look-up's returned money needs this refund in every
 *           explanation (a subset of the sale's unknown refunds without a tagged credit summing to it);
 *   absent  no explanation holds it AND no credit of its amount that could be it (untagged, or its own) is listed;
 *   wait    (NotYetError) otherwise: explanations disagree, or an untagged credit of its amount is listed (a
 *           console refund, or a gateway that dropped the tag): the outcome stays unknown and, past the
 *           deadline, an operator settles it (src/reconcile/settle-by-hand.ts). Never absent on a guess.
 */
export type RefundDecision =
  | { happened: true; key: string; refnum: string; method: 'refund' | 'void' }
  | { happened: false }
  | { happened: 'unknown'; why: string };

export interface RefundEvidence {
  tx: TransactionDetail;
  known: SaleRecord;
  mine: Reservation;
  /** The sale's other refunds of unknown outcome. */
  others: readonly Reservation[];
  /** None of them can still land (each unknown for longer than the longest processing time). */
  final: boolean;
  /** The batch lists' credits since before any of them began (empty when the sale is voided: none can follow). */
  credits: readonly Credit[];
  /** Credits already settled to a write (their gateway keys). */
  credited: ReadonlySet<string>;
  /** What settled refund:adjusts of this sale already took off its capture, cents. */
  settledAdjustCents: number;
}

export function decideRefund(e: RefundEvidence): RefundDecision {
  const { tx, known, mine, credits, credited } = e;
  const own = credits.find((c) => c.tag === mine.id);
  if (own) return { happened: true, key: own.key, refnum: own.refnum, method: 'refund' };
  // A refund whose credit is listed is explained by it: the look-up's money is someone else's.
  const tagged = new Set(credits.map((c) => c.tag).filter((t): t is string => t !== undefined));
  const others = e.others.filter((r) => !tagged.has(r.id));
  const voided = statusOf(tx) === 'voided';
  const shown = shownCapturedCents(tx);
  // A look-up without auth_amount cannot show what a refund:adjust took off an unsettled capture, and whether the
  // sale was unsettled when this refund landed is not documented either: neither found nor absent can be proven
  // from it. The outcome stays unknown; past the deadline an operator settles it (guarantee 6, never a guess).
  if (!voided && shown === undefined) return { happened: 'unknown', why: 'the sale\'s look-up carries no auth_amount: a refund:adjust of its capture cannot be seen' };
  // Money the look-up shows returned beyond the settled refunds that took it: a void returned all that was left;
  // otherwise what refund:adjust took off the capture, less the adjusts already settled.
  const unaccounted = voided ? known.capturedCents - known.refundedCents : Math.max(0, known.capturedCents - (shown ?? 0)) - e.settledAdjustCents;
  let holds: 'all' | 'none' | 'some';
  if (others.length === 0) holds = unaccounted >= mine.cents ? 'all' : 'none';
  else {
    holds = explanations(unaccounted, mine, others);
    // Equal explanations (two adjusts of one amount, one made) are decided by one rule on every replica once none
    // can land: money-wise they are the same, and each caller's retry makes the total right.
    if (holds === 'some' && e.final) holds = canonicalExplanation(unaccounted, mine, others) ?? 'some';
  }
  if (holds === 'all') return { happened: true, key: tx.key, refnum: tx.refnum, method: voided ? 'void' : 'refund' };
  if (holds === 'some') return { happened: 'unknown', why: 'the returned money does not yet tell which of this sale\'s unknown refunds happened' };
  const couldBeMine = credits.some((c) => c.cents === mine.cents && c.tag === undefined && !credited.has(c.key));
  if (couldBeMine) return { happened: 'unknown', why: 'a credit of this amount without tokengate\'s tag is in the batch lists: only an operator can tell whose it is' };
  return { happened: false };
}

/**
 * Whether `mine` happened, judged from the `unaccounted` cents the gateway returned beyond the sale's settled
 * refunds: an explanation is a subset of the unknown refunds (mine and others) summing to it exactly. 'all':
 * every explanation holds mine; 'none': some exist and none holds it; 'some': they disagree, or none exists (a
 * refund made elsewhere, or one still landing), which proves nothing either way.
 */
export function explanations(unaccounted: number, mine: Reservation, others: readonly Reservation[]): 'all' | 'none' | 'some' {
  const { fits, mineBit } = fittingSubsets(unaccounted, mine, others);
  const withMine = fits.some((m) => (m & mineBit) !== 0);
  const withoutMine = fits.some((m) => (m & mineBit) === 0);
  if (withMine && !withoutMine) return 'all';
  if (!withMine && withoutMine) return 'none';
  return 'some';
}

/**
 * Among the explanations of `unaccounted` (see explanations()), the one every replica picks: refunds in id order,
 * the earliest included whenever some explanation allows it. Stable as its members settle one by one (what is
 * left of it is the pick of what is left). Whether it holds mine; undefined when nothing explains the money.
 */
export function canonicalExplanation(unaccounted: number, mine: Reservation, others: readonly Reservation[]): 'all' | 'none' | undefined {
  const { fits, mineBit } = fittingSubsets(unaccounted, mine, others);
  if (fits.length === 0) return undefined;
  return (Math.max(...fits) & mineBit) !== 0 ? 'all' : 'none';
}

const byId = (a: Reservation, b: Reservation) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Every subset of the unknown refunds (a handful; 2^16 subsets at most bound the work) whose cents sum to
 * `unaccounted`, as masks over them in id order: bit n-1-i stands for the i-th, so the numerically largest
 * mask includes the earliest ids it can. `mineBit`: this refund's bit.
 */
function fittingSubsets(unaccounted: number, mine: Reservation, others: readonly Reservation[]): { fits: number[]; mineBit: number } {
  const sorted = [mine, ...others].slice(0, 16).sort(byId);
  const n = sorted.length;
  const fits: number[] = [];
  for (let mask = 0; mask < 1 << n; mask++) {
    let sum = 0;
    for (let i = 0; i < n; i++) if (mask & (1 << (n - 1 - i))) sum += (sorted[i] as Reservation).cents;
    if (sum === unaccounted) fits.push(mask);
  }
  return { fits, mineBit: 1 << (n - 1 - sorted.findIndex((r) => r.id === mine.id)) };
}

