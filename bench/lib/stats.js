'use strict';
/** Small measurement helpers of the benchmark (unit-tested in test/unit/bench-stats.test.ts). */

/** Nearest-rank percentile (p in 0..100) of a list of numbers; NaN for an empty list. */
function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** Sum of `INFO commandstats` calls, optionally without some commands (our own INFO calls). */
function parseCommandStats(info, exclude = ['info']) {
  const byCommand = {};
  let total = 0;
  for (const line of info.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (!m) continue;
    const name = m[1].toLowerCase();
    const calls = Number(m[2]);
    if (exclude.includes(name)) continue;
    byCommand[name] = calls;
    total += calls;
  }
  return { total, byCommand };
}

/** after − before for each command (commands absent before count from 0). */
function diffCommandStats(before, after) {
  const byCommand = {};
  for (const [name, calls] of Object.entries(after.byCommand)) {
    const d = calls - (before.byCommand[name] ?? 0);
    if (d > 0) byCommand[name] = d;
  }
  return { total: after.total - before.total, byCommand };
}

/** Round to `digits` decimals (report figures). */
function round(x, digits = 2) {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

module.exports = { percentile, parseCommandStats, diffCommandStats, round };
