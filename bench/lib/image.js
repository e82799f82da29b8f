'use strict';
/**
 * The node flags the Docker image runs the service with: what its final CMD puts between `node` and
 * `dist/main.js`. Shared by the bench (bench/lib/services.js) and the e2e suites (test/support/image.ts), so
 * both run the service as it ships.
 */
const fs = require('node:fs');
const path = require('node:path');

/** From a Dockerfile's text; undefined when its last CMD is not ["node", ...flags, "dist/main.js"]. */
function imageNodeArgs(dockerfile) {
  const cmds = dockerfile.split('\n').filter((l) => /^CMD\s+\[/.test(l));
  if (cmds.length === 0) return undefined;
  let argv;
  try {
    argv = JSON.parse(cmds[cmds.length - 1].replace(/^CMD\s+/, ''));
  } catch {
    return undefined;
  }
  return Array.isArray(argv) && argv[0] === 'node' && argv[argv.length - 1] === 'dist/main.js' ? argv.slice(1, -1) : undefined;
}

/** Of the checkout at `root`; none when it has no Dockerfile or another CMD (an older checkout). */
function imageNodeArgsOf(root) {
  try {
    return imageNodeArgs(fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8')) ?? [];
  } catch {
    return [];
  }
}

module.exports = { imageNodeArgs, imageNodeArgsOf };
