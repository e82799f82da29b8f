import type { ReconcileConfig } from './types';

/** Each replica's reconciler passes come every RECONCILE_INTERVAL_MS × (1 ± this), spread (reconciler.ts). */
export const RECONCILE_PASS_JITTER = 0.25;

type Timing = Pick<ReconcileConfig, 'maxProcessingMs' | 'intervalMs' | 'retryMs'>;

/**
 * The longest the reconciler takes, once an outcome became unknown, to prove the write absent while the
 * gateway's lists answer (issue 28): its proving look is made no earlier than `maxProcessingMs` after (a slow
 * processor may still record the write until then), the next pass comes within `intervalMs × 1.25`, and a look
 * that found no read slot free at once (it never takes one kept for sales) is tried again `retryMs` later:
 * one such miss is allowed for, or the first busy second would break the deadline.
 */
export function absenceProofMs(t: Timing): number {
  return t.maxProcessingMs + Math.ceil(t.intervalMs * (1 + RECONCILE_PASS_JITTER)) + t.retryMs;
}

/**
 * The one line naming RECONCILE_DEADLINE_MS and RECONCILE_MAX_PROCESSING_MS when the deadline cannot be kept
 * (production refuses to start; development and test log it as a warning), or undefined. With
 * RECONCILE_DEADLINE_MS=20000 and the 120 s default, writes never sent stayed 409 outcome_unknown past the
 * deadline and production started without a word.
 */
export function deadlineProblem(r: Partial<ReconcileConfig> | undefined): string | undefined {
  const { deadlineMs, maxProcessingMs, intervalMs, retryMs } = r ?? {};
  if (deadlineMs === undefined || maxProcessingMs === undefined || intervalMs === undefined || retryMs === undefined) return undefined;
  const needMs = absenceProofMs({ maxProcessingMs, intervalMs, retryMs });
  if (deadlineMs >= needMs) return undefined;
  return (
    `RECONCILE_DEADLINE_MS (reconcile.deadlineMs) must be at least ${needMs}, what the reconciler needs to prove a write absent ` +
    '(RECONCILE_MAX_PROCESSING_MS + 1.25 × RECONCILE_INTERVAL_MS + RECONCILE_RETRY_MS): raise RECONCILE_DEADLINE_MS; ' +
    'lower RECONCILE_MAX_PROCESSING_MS only if the gateway records every write sooner than that'
  );
}
