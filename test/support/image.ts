/* eslint-disable @typescript-eslint/no-require-imports -- the one parser lives in the bench's plain CommonJS */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const image = require('../../bench/lib/image') as { imageNodeArgs(dockerfile: string): string[] | undefined };

/**
 * The node flags the Docker image runs the service with (bench/lib/image.js): the e2e suites start
 * `node dist/main.js` with them, so they test what ships.
 */
export function imageNodeArgs(dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')): string[] {
  const args = image.imageNodeArgs(dockerfile);
  if (!args) throw new Error('Dockerfile: CMD is not ["node", ...flags, "dist/main.js"]');
  return args;
}
