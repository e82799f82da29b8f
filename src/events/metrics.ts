import { Counter, Gauge, type Registry } from 'prom-client';
import type { EventLog } from './types';

/** The delivery of payment events, by destination (its URL without credentials or query: config, not input). */
export interface EventMetrics {
  deliveries: Counter<'destination' | 'result'>;
  undelivered: Counter<'destination'>;
}

/** A destination as a metric label and in logs: scheme, host and path only. */
export function destinationLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'invalid';
  }
}

/**
 * Counters of this replica's attempts, and the backlog read from the shared log at scrape time (every replica
 * reports the same cluster-wide figure, as the reconciler's gauges do).
 */
export function createEventMetrics(registry: Registry, backlog?: { log: EventLog; destinations: readonly string[] }): EventMetrics {
  if (backlog) {
    new Gauge({
      name: 'tokengate_events_pending',
      help: 'Payment events taken for delivery to a destination and not delivered yet (retries waiting)',
      labelNames: ['destination'],
      registers: [registry],
      async collect() {
        for (const d of backlog.destinations) {
          const b = await backlog.log.backlog(d).catch(() => undefined);
          if (b) this.set({ destination: destinationLabel(d) }, b.pending);
        }
      },
    });
  }
  return {
    deliveries: new Counter({
      name: 'tokengate_events_deliveries_total',
      help: 'Attempts to deliver a payment event, by destination and result (delivered, failed: non-2xx, timeout or no connection)',
      labelNames: ['destination', 'result'],
      registers: [registry],
    }),
    undelivered: new Counter({
      name: 'tokengate_events_undelivered_total',
      help: 'Payment events given up after the last retry of EVENTS_RETRY_SCHEDULE_MS (still readable in GET /v1/events)',
      labelNames: ['destination'],
      registers: [registry],
    }),
  };
}
