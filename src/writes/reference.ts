import { createHash } from 'node:crypto';

/** The stable reference of the write under (scope, key): a hash, so it carries neither into other records. */
export function writeReference(scope: string, key: string): string {
  return createHash('sha256').update(`${scope}\u0000${key}`).digest('base64url').slice(0, 24);
}
