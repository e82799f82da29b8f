import type { GatewaySaleState, Heard, RecordChange } from './types';

/**
 * Which record changes are payment events (src/sales/sale-events.ts renders them), for both stores.
 *
 * After a webhook (`hear`): whatever the event means and the record now holds, changed by this call or not (a
 * redelivery after a replica died between the change and its event must still emit it; the log's dedupe by
 * `change` keeps it one event). A refund or capture tokengate's own write has in flight is left to that write.
 */
/** The script's result as the intake sees it (lua/hear.lua returns more kinds of "nothing new"). */
export function hearResultOf(result: string): import('./types').HearResult {
  if (result === 'absent' || result === 'busy' || result === 'unknown_refund') return result;
  return result === 'applied' || result === 'changed' ? 'applied' : 'known';
}

export function changesOfHeard(saleKey: string, heard: Heard, result: string, state: string, cents: number): RecordChange[] {
  if (result === 'absent') return [];
  switch (heard.kind) {
    case 'sale':
      return [{ saleKey, kind: 'sale', type: heard.type }];
    case 'voided':
      return state === 'voided' ? [{ saleKey, kind: 'voided' }] : [];
    case 'captured':
      return state === 'captured' ? [{ saleKey, kind: 'captured' }] : [];
    case 'refunded': {
      const { key, refnum, cents: refundCents } = heard.refund;
      return result === 'applied' || result === 'listed' ? [{ saleKey, kind: 'refunded', change: `refund:${key}`, refund: { key, refnum, cents: refundCents } }] : [];
    }
    case 'adjusted':
      // tokengate's own refund:adjust is its write's event (refund:<sale>:<write>); only one made elsewhere is new.
      return result === 'applied' ? [{ saleKey, kind: 'adjusted', change: adjustChange(saleKey, heard.leftCents) }] : [];
    case 'refund_voided':
      return result === 'applied' || result === 'listed' ? [{ saleKey, kind: 'refund_voided', refund: { key: heard.refundKey, cents } }] : [];
    case 'refund_restored':
      // What really happened: the refund stands; the money left is what it was before the webhook.
      return result === 'applied' ? [{ saleKey, kind: 'adjusted', change: `refund-restore:${heard.refundKey}` }] : [];
    case 'unvoided':
      return result === 'changed' ? [{ saleKey, kind: 'unvoided' }] : [];
  }
}

/** A part of an unsettled sale refunded at the gateway (no transaction of its own): named by what was left after. */
export const adjustChange = (saleKey: string, leftCents: number) => `adjust:${saleKey}:${leftCents}`;

/** What a refresh's script reported (lua/refresh.lua). */
export interface RefreshReport {
  voidedNow: boolean;
  settledNow: boolean;
  unvoidedNow: boolean;
  refundedBefore: number;
  refundedAfter: number;
  capturedCents: number;
  state: string;
  /** Refund keys listed for the first time and not tokengate's own. */
  fresh: string[];
}

/** After a refresh (a read of the gateway): only what this refresh changed (it runs again and again). */
export function changesOfRefresh(saleKey: string, r: RefreshReport, seen: GatewaySaleState): RecordChange[] {
  const out: RecordChange[] = [];
  if (r.voidedNow) out.push({ saleKey, kind: 'voided' });
  if (r.unvoidedNow) out.push({ saleKey, kind: 'unvoided' });
  if (r.settledNow && r.state === 'captured') out.push({ saleKey, kind: 'settled' });
  let listed = 0;
  for (const key of r.fresh) {
    const refund = seen.gatewayRefunds.find((x) => x.key === key);
    if (!refund || refund.statusCode === 'V' || refund.statusCode === 'E') continue;
    listed += refund.cents;
    out.push({ saleKey, kind: 'refunded', change: `refund:${key}`, refund: { key, refnum: refund.refnum, cents: refund.cents } });
  }
  const unlisted = r.refundedAfter - r.refundedBefore - listed;
  if (unlisted > 0 && r.state === 'captured') out.push({ saleKey, kind: 'refunded', change: adjustChange(saleKey, r.capturedCents - r.refundedAfter), refund: { key: saleKey, cents: unlisted } });
  // The gateway confirms less refunded than the record held (a voided refund, a webhook it contradicts): the
  // money is back, and the sale's events say so.
  if (r.refundedAfter < r.refundedBefore && r.state === 'captured') out.push({ saleKey, kind: 'adjusted', change: adjustChange(saleKey, r.capturedCents - r.refundedAfter) });
  return out;
}
