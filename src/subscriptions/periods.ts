import type { Interval } from './types';

const DAY_MS = 24 * 3600 * 1000;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/**
 * When period `n` falls due (contract, "Subscriptions"): the anchor plus n intervals, counted from the anchor
 * every time (never from the previous due date), so a month anchored on the 31st falls on the last day of a
 * shorter month and on the 31st again after (Jan 31, Feb 28, Mar 31); a year anchored on Feb 29 falls on Feb 28
 * in common years. The anchor's time of day is kept (UTC).
 */
export function dueAt(anchorMs: number, interval: Interval, intervalCount: number, n: number): number {
  const steps = n * intervalCount;
  if (interval === 'day') return anchorMs + steps * DAY_MS;
  if (interval === 'week') return anchorMs + steps * 7 * DAY_MS;
  const months = interval === 'month' ? steps : steps * 12;
  const a = new Date(anchorMs);
  const total = a.getUTCMonth() + months;
  const year = a.getUTCFullYear() + Math.floor(total / 12);
  const month = ((total % 12) + 12) % 12;
  const day = Math.min(a.getUTCDate(), daysInMonth(year, month));
  return Date.UTC(year, month, day, a.getUTCHours(), a.getUTCMinutes(), a.getUTCSeconds(), a.getUTCMilliseconds());
}

/** The first period whose due time is at or after `nowMs` (from `from` on): where a resumed subscription picks up. */
export function firstPeriodFrom(anchorMs: number, interval: Interval, intervalCount: number, from: number, nowMs: number): number {
  let n = from;
  // Bounded: a day interval paused for years is at most a few thousand steps.
  while (dueAt(anchorMs, interval, intervalCount, n) < nowMs && n < from + 100_000) n += 1;
  return n;
}
