/**
 * Measurements over observed call start times, shared by the tests and the benchmark (issue 4, item 7).
 * Times are milliseconds on one clock.
 */

/** The largest number of starts inside any half-open span [a, a + windowMs). */
export function maxInAnyWindow(starts: readonly number[], windowMs: number): number {
  const s = [...starts].sort((a, b) => a - b);
  let best = 0;
  let j = 0;
  for (let i = 0; i < s.length; i++) {
    while (j < s.length && (s[j] as number) < (s[i] as number) + windowMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

/**
 * Starts made ÷ starts the limit allows between the first and the last start: a perfect "N per any window"
 * scheduler sends N at t, N at t + W, ... so over a span T it can send N × (1 + T / W).
 */
export function utilisation(starts: readonly number[], perWindow: number, windowMs: number): number {
  if (starts.length === 0) return 0;
  const span = Math.max(...starts) - Math.min(...starts);
  return starts.length / (perWindow * (1 + span / windowMs));
}

/**
 * Calls served out of order: calls overtaken by a call that arrived more than `toleranceMs` after them and
 * started more than `startToleranceMs` before them (arrivals closer than that race to Redis; starts of one slot
 * differ by timer and process jitter). Each overtaken call counts once, however many overtook it.
 */
export function orderViolations(
  calls: readonly { arrivedAt: number; startedAt: number }[],
  toleranceMs = 0,
  startToleranceMs = toleranceMs,
): number {
  return calls.filter((earlier) =>
    calls.some((later) => later.arrivedAt > earlier.arrivedAt + toleranceMs && later.startedAt + startToleranceMs < earlier.startedAt),
  ).length;
}

/**
 * Starts grouped into waves: a wave ends where the next start comes more than `gapMs` after the one before. A
 * saturated "N per window" scheduler sends full waves of N, one window apart; a test judges it by the waves'
 * sizes and by each wave coming in the window after the last (less than two windows later: a wasted window
 * would be two), so a busy machine that stretches the run cannot fail it, and a limiter that wastes slots or
 * windows still does (issue 41).
 */
export function waves(starts: readonly number[], gapMs: number): { at: number; size: number }[] {
  const s = [...starts].sort((a, b) => a - b);
  const out: { at: number; size: number }[] = [];
  for (let i = 0; i < s.length; i++) {
    const last = out[out.length - 1];
    if (last && (s[i] as number) - (s[i - 1] as number) <= gapMs) last.size++;
    else out.push({ at: s[i] as number, size: 1 });
  }
  return out;
}
