// `npm run openapi:scopes` writes the `bearerAuth` scheme's description in src/http/openapi.json from the code's
// scope table (src/http/scopes.ts), so /docs lists every scope a route checks and how to get a token;
// `--check` (in `npm run lint`) fails when the committed file is not what it would write now.
require('./ts-require');
const fs = require('node:fs');
const path = require('node:path');
const { bearerAuthDescription } = require('../src/http/scopes.ts');

const file = path.join(__dirname, '..', 'src', 'http', 'openapi.json');
const text = fs.readFileSync(file, 'utf8');
const doc = JSON.parse(text);
doc.components.securitySchemes.bearerAuth.description = bearerAuthDescription();
const fresh = `${JSON.stringify(doc, null, 2)}\n`;
if (process.argv.includes('--check')) {
  if (fresh !== text) {
    console.error('src/http/openapi.json: the bearerAuth scopes are not the code\'s (src/http/scopes.ts): run `npm run openapi:scopes`, then `npm run client:generate`');
    process.exit(1);
  }
  console.log('src/http/openapi.json lists the code\'s scopes');
} else if (fresh !== text) {
  fs.writeFileSync(file, fresh);
  console.log('src/http/openapi.json: bearerAuth scopes written from src/http/scopes.ts');
}
