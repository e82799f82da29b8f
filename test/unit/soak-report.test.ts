import path from 'node:path';

/**
 * The soak's report (issue 41, item 9): a run with the defaults writes a folder of its own, never the committed
 * results; a target never measured says so; "sale" means one thing per table; the 429s the injected gateway
 * 429s cause are explained; the end-of-run replay check is not plotted as sales.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS scripts without types
const soak = require('../../bench/soak') as { parseArgs(argv: string[], now?: Date): { out: string }; judgeTarget(t: Record<string, unknown>): { pass?: boolean } };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS scripts without types
const report = require('../../bench/soak-report') as {
  renderMarkdown(result: unknown, timeline: unknown): string;
  plottedSamples(timeline: unknown, result: unknown): { t: number }[];
};
const RESULTS = path.join(__dirname, '..', '..', 'bench', 'results');

describe('the soak report', () => {
  it('when the soak runs with its defaults, then it writes a new folder under bench/results, not bench/results itself; --out still chooses', () => {
    const out = soak.parseArgs([], new Date('2026-11-27T19:40:05Z')).out;
    expect(out).toBe(path.join(RESULTS, 'soak-20261127-194005-aof'));
    expect(soak.parseArgs(['--faults', 'off', '--mode', 'sentinel'], new Date('2026-11-27T19:40:05Z')).out).toBe(path.join(RESULTS, 'soak-20261127-194005-sentinel-no-faults'));
    expect(soak.parseArgs(['--out', RESULTS]).out).toBe(RESULTS);
  });

  it('when a target was not judged, then it has no pass and the report says "not measured", and the verdict does not fail on it', () => {
    const skipped = soak.judgeTarget({ name: 'redis_bytes_per_sale', value: 900, bound: 12288, judged: false, how: 'not judged under 1000 sales' });
    expect(skipped.pass).toBeUndefined();
    expect(soak.judgeTarget({ name: 'double_charges', value: 0, bound: 0 }).pass).toBe(true);
    const md = report.renderMarkdown({ passed: true, duration_s: 60, targets: [skipped, { name: 'double_charges', value: 0, bound: 0, pass: true }] }, { samples: [] });
    expect(md).toMatch(/\| redis_bytes_per_sale \| 900 \| 12288 \| not measured \|/);
    expect(md).toMatch(/\| double_charges \| 0 \| 0 \| yes \|/);
  });

  it('when sales and operations are reported, then the headline counts charges and the operations table names its sale as one operation', () => {
    const md = report.renderMarkdown({ passed: true, duration_s: 60, sales_attempted: 10, sales_succeeded: 9, targets: [], operations: { sale: { attempted: 6, succeeded: 5 }, new_card_sale: { attempted: 2, succeeded: 2 } } }, { samples: [] });
    expect(md).toContain('9 of 10 charges (sales and authorizations) succeeded');
    expect(md).toContain('| sale (a stored card) | 6 | 5 |');
    expect(md).not.toMatch(/sales succeeded/);
  });

  it('when injected gateway 429s closed the budget, then the report says where its 429 answers came from', () => {
    const md = report.renderMarkdown({ passed: true, duration_s: 60, targets: [], upstream_429: 0, gateway: { injected_429: 3 }, requests: { total: 1000, by_status: { 201: 810, 429: 190 } } }, { samples: [] });
    expect(md).toContain('The 190 answers 429 (19 % of all) are tokengate\'s own `rate_limited`, not the gateway\'s (upstream_429 is 0): each of the 3 gateway 429s the faults injected closes the budget for the rest of the gateway\'s window');
  });

  it('when the timeline holds samples after the load stopped (the replay check), then the chart leaves them out', () => {
    const samples = [{ t: 10, sales_per_s: 3 }, { t: 60, sales_per_s: 3 }, { t: 75, sales_per_s: 90 }];
    expect(report.plottedSamples({ samples }, { duration_s: 60 }).map((s) => s.t)).toEqual([10, 60]);
  });
});
