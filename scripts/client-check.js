// `npm run client:check`: fails when clients/typescript/schema.d.ts is not what openapi-typescript generates from
// src/http/openapi.json now (run `npm run client:generate` and commit).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const committed = path.join(root, 'clients', 'typescript', 'schema.d.ts');
const fresh = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tokengate-client-')), 'schema.d.ts');
execFileSync(process.execPath, [path.join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), path.join(root, 'src', 'http', 'openapi.json'), '--default-non-nullable', 'false', '-o', fresh], { stdio: 'ignore' });
if (!fs.existsSync(committed) || fs.readFileSync(committed, 'utf8') !== fs.readFileSync(fresh, 'utf8')) {
  console.error('clients/typescript/schema.d.ts is stale: run `npm run client:generate` and commit it');
  process.exit(1);
}
console.log('clients/typescript/schema.d.ts is up to date');
