import { Counter, type Registry } from 'prom-client';

export interface SettlementMetrics {
  batches: Counter<string>;
  lines: Counter<string>;
  gatewayCalls: Counter<string>;
  sweeps: Counter<string>;
  batchFailures: Counter<string>;
}

/** Settlements kept, their lines by verdict (the mismatch alert reads it), and the gateway calls they cost. */
export function createSettlementMetrics(registry: Registry): SettlementMetrics {
  return {
    batches: new Counter({ name: 'tokengate_settlements_total', help: 'Closed batches read and kept as settlements', registers: [registry] }),
    lines: new Counter({ name: 'tokengate_settlement_lines_total', help: 'Settlement lines kept, by verdict (matched, amount_differs, not_ours, missing)', labelNames: ['verdict'], registers: [registry] }),
    sweeps: new Counter({ name: 'tokengate_settlement_sweeps_total', help: 'Daily sweeps for missing sales this replica ran (one replica a day across all)', registers: [registry] }),
    batchFailures: new Counter({ name: 'tokengate_settlement_batch_failures_total', help: 'Batches the gateway said failed to close (settlement.batch.failure): nothing settled, no settlement read', registers: [registry] }),
    gatewayCalls: new Counter({ name: 'tokengate_settlement_gateway_calls_total', help: 'Gateway calls made to read closed batches (background class), by call (batches, batch, batch_transactions)', labelNames: ['call'], registers: [registry] }),
  };
}
