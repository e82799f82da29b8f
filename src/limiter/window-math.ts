/**
 * The scheduling rule shared by the memory backend and (mirrored line for line) scheduler.lua.
 *
 * Invariant: at most `cap` entries in ANY half-open span [a, a + span). Two entries share some span iff they
 * are less than `span` apart, so `cap + 1` entries violate it iff max - min < span. A token bucket or a fixed
 * window does not hold this (gateway-facts.md, Rate limits): only a log of start times does.
 */

/**
 * Earliest time r >= start at which one more entry keeps every span containing r at or under `cap` entries.
 * `sorted` is ascending; entries may lie after `start` (sales are placed between queued reads).
 *
 * Every `cap` consecutive entries e[j]..e[j+cap-1] less than `span` apart forbid the open interval
 * (e[j+cap-1] - span, e[j] + span); both ends grow with j, so one pass that jumps r past each interval it
 * falls in finds the earliest gap.
 */
export function earliestSlot(sorted: readonly number[], start: number, cap: number, span: number): number {
  if (cap < 1) return Number.POSITIVE_INFINITY;
  // Fewer than cap entries in all: no span can overflow. At the tail: only the span ending at r matters.
  if (sorted.length < cap) return start;
  if (start >= (sorted[sorted.length - 1] as number)) return Math.max(start, (sorted[sorted.length - cap] as number) + span);
  let r = start;
  let j = firstAbove(sorted, start - span);
  for (; j + cap - 1 < sorted.length; j++) {
    const first = sorted[j] as number;
    const last = sorted[j + cap - 1] as number;
    // Compared as sums, the form slots are made in (first + span): with the memory backend's float clock,
    // (first + span) - first can round below span and push a caller a whole window late (a flaky sale wait).
    if (r + span <= last) break;
    if (last < first + span && r < first + span) r = first + span;
  }
  return r;
}

/** Index of the first entry strictly greater than `t` (binary search). */
export function firstAbove(sorted: readonly number[], t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export function insertSorted(sorted: number[], t: number): void {
  sorted.splice(firstAbove(sorted, t), 0, t);
}

/** Removes one entry equal to `t`, if there is one. */
export function removeSorted(sorted: number[], t: number): void {
  const i = firstAbove(sorted, t) - 1;
  if (i >= 0 && sorted[i] === t) sorted.splice(i, 1);
}

/** Drops entries at or before `t` (callers pass now - span: such entries share no span with any time >= now). */
export function pruneUpTo(sorted: number[], t: number): void {
  const n = firstAbove(sorted, t);
  if (n > 0) sorted.splice(0, n);
}

/** Entries in (from, to]. */
export function countIn(sorted: readonly number[], from: number, to: number): number {
  return firstAbove(sorted, to) - firstAbove(sorted, from);
}

/**
 * Day pacing (issue 25): the earliest start at which one more entry of `own` (a class's entries in the day span)
 * keeps own ≤ floor(share × (perDay − others)), with `others` (the rest of `day`) as counted now. `hold`: others
 * alone fill the share's room, so no start can be promised; `from` is then only when the day starts to free
 * (a day span from `now` when the day holds nothing: a share too small for even one call).
 */
export function pacedStart(own: readonly number[], day: readonly number[], perDay: number, share: number, daySpan: number, now: number): { from: number; hold: boolean } {
  const mine = own.length;
  const allowed = Math.floor(share * (perDay - (day.length - mine)));
  if (mine < allowed) return { from: Number.NEGATIVE_INFINITY, hold: false };
  if (allowed >= 1) return { from: (own[mine - allowed] as number) + daySpan, hold: false };
  return { from: (day[0] ?? now) + daySpan, hold: true };
}
