/* eslint-disable @typescript-eslint/no-require-imports -- the benchmark is plain CommonJS JavaScript under bench/ */
interface CommandStats {
  total: number;
  byCommand: Record<string, number>;
}
const stats = require('../../bench/lib/stats') as {
  percentile(values: number[], p: number): number;
  median(values: number[]): number;
  parseCommandStats(info: string, exclude?: string[]): CommandStats;
  diffCommandStats(before: CommandStats, after: CommandStats): CommandStats;
  round(x: number, digits?: number): number;
  medianCi(values: number[], confidence?: number): [number, number] | undefined;
};
const profile = require('../../bench/lib/profile') as { bucketOf(url: string, functionName: string): string };

describe('bench measurement helpers', () => {
  test('when asked for a median, then the middle value, or the two middle ones averaged, of the finite values', () => {
    expect(stats.median([3, 1, 2])).toBe(2);
    expect(stats.median([4, 1, 3, 2])).toBe(2.5);
    expect(stats.median([1.352, 0.467, 0.513, 0.471])).toBeCloseTo(0.492, 10);
    expect(stats.median([5, NaN, 1])).toBe(3);
    expect(stats.median([NaN])).toBeNaN();
    expect(stats.median([])).toBeNaN();
  });

  test('when asked for percentiles, then they are nearest-rank over the sorted values', () => {
    const values = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
    expect(stats.percentile(values, 50)).toBe(5);
    expect(stats.percentile(values, 99)).toBe(10);
    expect(stats.percentile(values, 0)).toBe(1);
    expect(stats.percentile([42], 99)).toBe(42);
    expect(stats.percentile([], 50)).toBeNaN();
  });

  test('when a median CI is asked of n rounds, then it is the sign test\'s order statistics, and none when n is too small', () => {
    const ranks = (n: number) => Array.from({ length: n }, (_, i) => i + 1).reverse();
    expect(stats.medianCi(ranks(16))).toEqual([4, 13]); // (x(4), x(13)): 97.9 %
    expect(stats.medianCi(ranks(10))).toEqual([2, 9]);
    expect(stats.medianCi(ranks(6))).toEqual([1, 6]);
    expect(stats.medianCi(ranks(5))).toBeUndefined();
  });

  test('when rounds come from a skewed distribution, then the median CI covers the true median at least 95 % of the time', () => {
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    // Exponential with rate 1: median ln 2.
    const draw = () => -Math.log(1 - rand());
    let covered = 0;
    const trials = 4000;
    for (let t = 0; t < trials; t++) {
      const [lo, hi] = stats.medianCi(Array.from({ length: 16 }, draw)) as [number, number];
      if (lo <= Math.LN2 && Math.LN2 <= hi) covered++;
    }
    expect(covered / trials).toBeGreaterThanOrEqual(0.95);
    expect(covered / trials).toBeLessThan(0.995); // and not trivially wide
  });

  test('when INFO commandstats is parsed, then our own INFO calls are left out and deltas count new commands from 0', () => {
    const before = stats.parseCommandStats('# Commandstats\r\ncmdstat_info:calls=3,usec=1\r\ncmdstat_evalsha:calls=10,usec=5\r\n');
    const after = stats.parseCommandStats('# Commandstats\r\ncmdstat_info:calls=4,usec=1\r\ncmdstat_evalsha:calls=25,usec=5\r\ncmdstat_get:calls=2,usec=1\r\n');
    expect(before).toEqual({ total: 10, byCommand: { evalsha: 10 } });
    expect(stats.diffCommandStats(before, after)).toEqual({ total: 17, byCommand: { evalsha: 15, get: 2 } });
  });

  test('when figures are rounded, then non-finite values pass through', () => {
    expect(stats.round(1.23456, 2)).toBe(1.23);
    expect(stats.round(Number.NaN)).toBeNaN();
  });

  test('when profile frames are bucketed, then packages, dist folders and node internals are told apart', () => {
    expect(profile.bucketOf('file:///w/node_modules/jsonwebtoken/verify.js', 'verify')).toBe('npm:jsonwebtoken');
    expect(profile.bucketOf('file:///w/node_modules/@scope/pkg/x.js', 'f')).toBe('npm:@scope/pkg');
    expect(profile.bucketOf('file:///w/dist/limiter/run-loop.js', 'run')).toBe('tokengate:limiter');
    expect(profile.bucketOf('file:///w/dist/app.js', 'createApp')).toBe('tokengate:app');
    expect(profile.bucketOf('node:internal/http', 'x')).toBe('node:http');
    expect(profile.bucketOf('', '(garbage collector)')).toBe('gc');
    expect(profile.bucketOf('', 'writev')).toBe('native/v8');
  });
});
