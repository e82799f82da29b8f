/** The reconciler of unknown outcomes (issue 12, contract guarantee 6). */
export { encodePendingWrite, decodePendingWrite, type PendingWrite } from './pending-write';
export { createMemoryPendingWrites, createRedisPendingWrites, type DueEntry, type PendingStats, type PendingWrites } from './pending-writes';
export { createReconciler, RECONCILED_HEADER, type FindResult, type Finder, type Reconciler, type ReconcilerDeps } from './reconciler';
export { createReconcileMetrics, type ReconcileMetrics } from './metrics';
