// `npm run token` (and start, sandbox) build first only when a source is newer than the last build: a full
// `tsc` costs 28-48 s on a busy laptop, and minting a token needs none of it when dist/ is current (issue 41,
// item 3). The last build is dist/.build-stamp, written by copy-assets.js at the end of `npm run build`;
// what the build reads is src/, the tsconfig files, package.json and the copy script. `--check` prints
// "stale" or "current" and builds nothing.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.join(__dirname, '..');
const STAMP = path.join('dist', '.build-stamp');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json', path.join('scripts', 'copy-assets.js')];

/** The newest modification time (ms) under `p`, or 0 when it does not exist. */
function newest(p) {
  let stat;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let max = stat.mtimeMs; // a file removed changes its folder's time
  for (const entry of fs.readdirSync(p)) max = Math.max(max, newest(path.join(p, entry)));
  return max;
}

/** Whether the build in `dir` is older than any of its inputs (or absent). */
function isStale(dir = root) {
  let built;
  try {
    built = fs.statSync(path.join(dir, STAMP)).mtimeMs;
  } catch {
    return true;
  }
  return INPUTS.some((input) => newest(path.join(dir, input)) > built);
}

module.exports = { isStale, STAMP };

if (require.main === module) {
  const stale = isStale();
  if (process.argv.includes('--check')) {
    console.log(stale ? 'stale' : 'current');
  } else if (stale) {
    console.error('dist/ is older than the sources: building first (npm run build)');
    execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '-s', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  }
}
