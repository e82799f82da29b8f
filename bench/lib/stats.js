'use strict';
/** Small measurement helpers of the benchmark (unit-tested in test/unit/bench-stats.test.ts). */

/** Nearest-rank percentile (p in 0..100) of a list of numbers; NaN for an empty list. */
function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** Median of the finite values, the two middle ones averaged for an even count; NaN when none is finite. */
function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

/**
 * A distribution-free confidence interval for the median (the sign test's): the sorted values at 0-based
 * ranks k and n-1-k, k the largest with P(Binomial(n, 1/2) <= k) <= (1 - confidence) / 2, so it covers the
 * median with at least that confidence whatever the distribution. With 16 rounds at 95 %: the 4th and 13th
 * smallest (97.9 %). Undefined when n is too small for the confidence (n < 6 at 95 %).
 */
function medianCi(values, confidence = 0.95) {
  const n = values.length;
  const s = [...values].sort((a, b) => a - b);
  const tail = (1 - confidence) / 2;
  // cdf[j] = P(X <= j) for X ~ Binomial(n, 1/2).
  let coeff = 1;
  let cdf = 0;
  let k = -1;
  for (let j = 0; j < n; j++) {
    cdf += coeff / 2 ** n;
    if (cdf > tail) break;
    k = j;
    coeff = (coeff * (n - j)) / (j + 1);
  }
  if (k < 0) return undefined;
  return [s[k], s[n - 1 - k]];
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

module.exports = {
  median, medianCi, percentile, parseCommandStats, diffCommandStats, round };
