import { Counter, type Registry } from 'prom-client';

export interface SettlementMetrics {
  batches: Counter<string>;
  lines: Counter<string>;
  gatewayCalls: Counter<string>;
}

/** Settlements kept, their lines by verdict (the mismatch alert reads it), and the gateway calls they cost. */
export function createSettlementMetrics(registry: Registry): SettlementMetrics {
  return {
    batches: new Counter({ name: 'tokengate_settlements_total', help: 'Closed batches read and kept as settlements', registers: [registry] }),
    lines: new Counter({ name: 'tokengate_settlement_lines_total', help: 'Settlement lines kept, by verdict (matched, amount_differs, not_ours, missing)', labelNames: ['verdict'], registers: [registry] }),
    gatewayCalls: new Counter({ name: 'tokengate_settlement_gateway_calls_total', help: 'Gateway calls made to read closed batches (background class), by call (batches, batch, batch_transactions)', labelNames: ['call'], registers: [registry] }),
  };
}
