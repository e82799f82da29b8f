import { hash } from 'node:crypto';

/**
 * A caller's id in the budget's keys and logs (per-caller share, issue 30): a fixed-length hash of the JWT
 * `sub`, so no raw subject is ever stored in Redis and no key grows with what a token carries.
 */
export function callerId(sub: string): string {
  return hash('sha256', sub, 'base64url').slice(0, 22);
}
