import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Debian's Chromium for the browser suites (docs-browser, demo-browser), driven by playwright-core: these
 * machines cannot download Playwright's own browsers. `.ci/run` installs it; where it is absent a suite skips
 * with one message printed at load time, so the skip is never silent.
 */
export const CHROMIUM = '/usr/bin/chromium';

// The flags the machine's probe used: headless as root, and no background traffic toward Google's hosts,
// which this machine's closed network refuses (see .library/env/machines/node-svc.md).
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** `describe` when Chromium is there, else `describe.skip` after one warning naming the suite. */
export function describeIfChromium(suite: string): jest.Describe {
  if (existsSync(CHROMIUM)) return describe;
  console.warn(`${suite}: SKIPPED, ${CHROMIUM} is missing; install it with \`apt-get install -y chromium\` (.ci/run does)`);
  return describe.skip;
}

/**
 * Where a browser suite saves its screenshot: $SCREENSHOT_DIR when set, else a temporary directory, so a test
 * run never rewrites the tracked copies in bench/results/ (refresh those with
 * `SCREENSHOT_DIR=bench/results npx jest test/e2e/docs-browser test/e2e/demo-browser`).
 */
export function screenshotPath(file: string): string {
  const dir = process.env.SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'tokengate-screenshots');
  mkdirSync(dir, { recursive: true });
  return path.resolve(dir, file);
}
