import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * The least an `eventually` waits before it gives up: long enough for a box shared by several test runs (20 s was
 * not, at a load average of 17: a child process's first line came later; issue 41). A check that holds returns at once.
 */
export const CEILING_MS = 60_000;

/**
 * Polls `check` until it holds, for tests whose effect lands a moment later (a batched Redis write, a server
 * seeing a client's abort). A fixed sleep is a guess about the box's speed; a loaded CI box guesses wrong.
 */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = CEILING_MS, everyMs = 20): Promise<void> {
  // The ceiling is a safety net, never the test (issue 41: timing bounds failed suites on a busy laptop): at least
  // CEILING_MS whatever a caller asks, since a check that holds returns at once anyway.
  const until = Date.now() + Math.max(timeoutMs, CEILING_MS);
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * How late this process's timers have run since it was called: the longest stall seen (ms). A test whose subject is a
 * time (a probe due a margin after a window reopens) adds it to its margin, so a box that starves the process
 * (other test runs, CPU burners) widens the bound by what it cost, while a quiet box keeps it tight (issue 41).
 */
export function loopLag(): { maxMs: () => number; totalMs: () => number; stop: () => void } {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return {
    maxMs: () => h.max / 1e6,
    /** The stalls added up (each sample: how late a 10 ms timer ran): what a span of this process's timers lost. */
    totalMs: () => (h.mean * h.count) / 1e6,
    stop: () => h.disable(),
  };
}
