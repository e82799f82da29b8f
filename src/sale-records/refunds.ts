import type { ListedSaleRefund } from './types';

/** The refunds a record lists: 'rf:<id>' (tokengate's own) and 'rx:<key>' (seen at the gateway), oldest first. */
export function listedRefundsOf(hash: Record<string, string>): ListedSaleRefund[] {
  const out: ListedSaleRefund[] = [];
  const seen = new Map<string, ListedSaleRefund>();
  for (const [name, value] of Object.entries(hash)) {
    if (name.startsWith('rf:')) {
      const [key = '', refnum = '', cents = '0', created = '0', method = 'refund'] = value.split('|');
      out.push({ key, refnum, cents: Number(cents), created, method: method === 'void' ? 'void' : 'refund', own: true });
    } else if (name.startsWith('rx:')) {
      const [refnum = '', cents = '0', created = '', statusCode = ''] = value.split('|');
      seen.set(name.slice(3), { key: name.slice(3), refnum, cents: Number(cents), created, statusCode, method: 'refund', own: false });
    }
  }
  const voided = new Set(Object.keys(hash).filter((name) => name.startsWith('rv:')).map((name) => name.slice(3)));
  return markVoided(mergeRefunds(out, [...seen.values()]), voided);
}

/** Refunds voided at the gateway (`rv:<key>`, lua/hear.lua) are listed as voided, with its status code V. */
export function markVoided(refunds: ListedSaleRefund[], voided: ReadonlySet<string>): ListedSaleRefund[] {
  return voided.size === 0 ? refunds : refunds.map((r) => (voided.has(r.key) ? { ...r, voided: true, statusCode: 'V' } : r));
}

/** A sortable "YYYY-MM-DD hh:mm:ss" for either form of `created` (tokengate's own refunds keep Unix seconds). */
export function createdText(created: string): string {
  return /^\d+$/.test(created) ? new Date(Number(created) * 1000).toISOString().slice(0, 19).replace('T', ' ') : created;
}

/** Oldest first, whatever form `created` has. */
export function sortRefunds(refunds: ListedSaleRefund[]): ListedSaleRefund[] {
  return refunds.sort((a, b) => createdText(a.created).localeCompare(createdText(b.created)));
}

/**
 * tokengate's own refunds (as answered) with what the gateway last listed: an own refund the gateway lists takes
 * its status and `created`; the gateway's others are refunds made outside tokengate. Oldest first.
 */
export function mergeRefunds(own: ListedSaleRefund[], listed: ListedSaleRefund[]): ListedSaleRefund[] {
  const byKey = new Map(listed.map((r) => [r.key, r]));
  const merged = own.map((r) => {
    const there = byKey.get(r.key);
    if (!there) return r;
    byKey.delete(r.key);
    return { ...r, created: there.created, ...(there.statusCode ? { statusCode: there.statusCode } : {}) };
  });
  return sortRefunds([...merged, ...byKey.values()]);
}
