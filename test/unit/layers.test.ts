import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The layers of the style guide (docs/architecture.md): no folder imports one above it. src/redis is the bottom
 * of the request path: it may use only config and observability (issue 41: it imported StoreUnavailableError
 * from src/idempotency, a layer above it).
 */
const SRC = path.join(__dirname, '..', '..', 'src');

/** The src/ folders a folder's files import from (relative imports only). */
function importedFolders(folder: string): string[] {
  const dir = path.join(SRC, folder);
  const found = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    for (const [, spec] of readFileSync(path.join(dir, file), 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const target = path.relative(SRC, path.resolve(dir, spec as string)).split(path.sep)[0] ?? '';
      if (target !== folder) found.add(target);
    }
  }
  return [...found].sort();
}

describe('the layers', () => {
  it('when src/redis is read, then it imports only config and observability, nothing of a layer above it', () => {
    expect(importedFolders('redis').filter((f) => !['config', 'observability'].includes(f))).toEqual([]);
  });
});
