import type { BeginResult } from './types';

/** Retry-After: the configured hint, but never past the moment the lease ends and the answer changes. */
export function inProgress(leaseRemainingMs: number, retryAfterSec: number): BeginResult {
  return { kind: 'in_progress', leaseRemainingMs, retryAfterSec: Math.max(1, Math.min(retryAfterSec, Math.ceil(leaseRemainingMs / 1000))) };
}
