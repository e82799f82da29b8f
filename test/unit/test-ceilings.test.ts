import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Issue 41, item 2: tests wait for their events, and Jest's timeout (jest.config.js, testTimeout) is a safety net
 * sized for a busy 2-core box. A file's `jest.setTimeout(n)` or a test's or hook's own `}, n);` below it lowered
 * that net again (20 to 90 s: 85 places in 43 files), so a slow box failed a test that was only slow. Longer ones are
 * fine (a soak-like test that needs more).
 */
const ROOT = path.join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the CommonJS config itself
const { testTimeout } = require('../../jest.config.js') as { testTimeout: number };

const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : /\.ts$/.test(e.name) ? [path.join(dir, e.name)] : []));

test('when a test file sets a timeout, then it is no shorter than the suite\'s ceiling', () => {
  expect(testTimeout).toBeGreaterThanOrEqual(120_000);
  const lowered: string[] = [];
  for (const file of files(path.join(ROOT, 'test'))) {
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      const m = /^\s*(?:jest\.setTimeout\(([\d_]+)\);|\}\)?, ([\d_]+)\);)\s*$/.exec(line);
      const ms = m ? Number((m[1] ?? m[2] ?? '').replace(/_/g, '')) : undefined;
      if (ms !== undefined && ms < testTimeout) lowered.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
    });
  }
  expect(lowered).toEqual([]);
});
