// Copies non-TypeScript assets (Lua scripts, the OpenAPI file, the browser files of the Pay.js stand-in and the
// /demo page) next to the compiled code in dist/.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
// Plain browser scripts served as they are (no build step): src/sandbox/payjs, src/http/demo, src/http/docs.
const BROWSER_DIRS = new Set(['payjs', 'demo', 'docs']);
function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(from);
    else if (/\.(lua|json|html)$/.test(entry.name) || (BROWSER_DIRS.has(path.basename(dir)) && /\.(js|css|svg)$/.test(entry.name))) {
      const to = path.join(root, 'dist', path.relative(path.join(root, 'src'), from));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
    }
  }
}
walk(path.join(root, 'src'));
// The build's time, for scripts/build-if-stale.js (npm run token skips the build when nothing changed since).
fs.writeFileSync(path.join(root, 'dist', '.build-stamp'), `${new Date().toISOString()}\n`);
