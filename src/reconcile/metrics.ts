import { Counter, Gauge, type Registry } from 'prom-client';
import type { PendingWrites } from './pending-writes';

/** The reconciler's metrics (issue 12 item 3). Labels are operations and results, never keys. */
export interface ReconcileMetrics {
  /** Writes whose outcome became unknown (counted once per write, by whichever replica saw it first). */
  opened: Counter<'operation'>;
  /** Unknown outcomes resolved: `charged` (found, money moved), `not_charged` (found declined/refused), `not_sent` (proven absent). */
  resolved: Counter<'operation' | 'result'>;
  /** Looks at the gateway's records: found, absent, failed. */
  looks: Counter<'operation' | 'result'>;
}

export function createReconcileMetrics(registry: Registry, options: { pending: PendingWrites; deadlineMs: number }): ReconcileMetrics {
  const { pending } = options;
  // The gauges read the shared due set at scrape time, so every replica reports the cluster-wide figures.
  new Gauge({
    name: 'tokengate_unknown_outcomes_open',
    help: 'Writes whose outcome is unknown and not reconciled yet (all replicas)',
    registers: [registry],
    async collect() {
      try {
        this.set((await pending.stats()).open);
      } catch {
        // Redis unreachable: keep the last value; tokengate_redis_up says why.
      }
    },
  });
  new Gauge({
    name: 'tokengate_unknown_outcomes_oldest_age_seconds',
    help: 'Age of the oldest unknown outcome not reconciled yet (0 when none); alert when over the deadline',
    registers: [registry],
    async collect() {
      try {
        const { oldestSinceMs } = await pending.stats();
        this.set(oldestSinceMs === undefined ? 0 : Math.max(0, (Date.now() - oldestSinceMs) / 1000));
      } catch {
        // as above
      }
    },
  });
  new Gauge({ name: 'tokengate_reconcile_deadline_seconds', help: 'RECONCILE_DEADLINE_MS in seconds (the alert threshold)', registers: [registry] }).set(options.deadlineMs / 1000);
  return {
    opened: new Counter({ name: 'tokengate_unknown_outcomes_opened_total', help: 'Writes whose outcome became unknown', labelNames: ['operation'], registers: [registry] }),
    resolved: new Counter({
      name: 'tokengate_unknown_outcomes_resolved_total',
      help: 'Unknown outcomes resolved from the gateway records: charged, not_charged (found, no money moved), not_sent (proven absent)',
      labelNames: ['operation', 'result'],
      registers: [registry],
    }),
    looks: new Counter({ name: 'tokengate_reconcile_looks_total', help: 'Reconciler looks at the gateway records by result (found, absent, failed)', labelNames: ['operation', 'result'], registers: [registry] }),
  };
}
