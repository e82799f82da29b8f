/** Money as the gateway writes it ("12.34") and as tokengate bounds it (integer cents). */

/** "12.3" → 1230. Only for strings of the gateway's or the API's money pattern. */
export function toCents(amount: string): number {
  const [whole = '0', frac = ''] = amount.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0').slice(0, 2));
}

/** 1230 → "12.30". */
export function fromCents(cents: number): string {
  const c = Math.max(0, Math.round(cents));
  return `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
}

/** "10.5" → "10.50", "5" → "5.00": the one way tokengate writes money, to callers and to the gateway. */
export function canonicalAmount(amount: string): string {
  return fromCents(toCents(amount));
}
