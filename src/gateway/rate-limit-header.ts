import type { RateLimitInfo } from './types';

// "8 of 45/min; 8 of 5000/day"; some answers quote the whole value (gateway-facts.md, Rate limits).
const HEADER = /^\s*"?\s*(\d+)\s+of\s+(\d+)\s*\/\s*min\s*;\s*(\d+)\s+of\s+(\d+)\s*\/\s*day\s*"?\s*$/i;

/** Parses the X-Rate-Limit header; anything unrecognised gives undefined (never a guess). */
export function parseRateLimitHeader(value: string | string[] | undefined | null): RateLimitInfo | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string' || raw.length > 200) return undefined;
  const m = HEADER.exec(raw);
  if (!m) return undefined;
  const [minuteUsed, minuteLimit, dayUsed, dayLimit] = m.slice(1, 5).map(Number) as [number, number, number, number];
  if (![minuteUsed, minuteLimit, dayUsed, dayLimit].every(Number.isSafeInteger)) return undefined;
  return { minuteUsed, minuteLimit, dayUsed, dayLimit };
}

export function formatRateLimitHeader(info: RateLimitInfo): string {
  return `${info.minuteUsed} of ${info.minuteLimit}/min; ${info.dayUsed} of ${info.dayLimit}/day`;
}
