import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The service's Prometheus metrics, on one registry per app instance (no global state, so tests and
 * several in-process apps do not collide). Labels carry route templates and codes, never caller input.
 */
export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  upstreamCalls: Counter<'operation' | 'outcome'>;
  upstreamDuration: Histogram<'operation'>;
  cacheLookups: Counter<'result'>;
  idempotency: Counter<'event'>;
  sales: Counter<'result'>;
  writes: Counter<'operation' | 'result'>;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'tokengate_' });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'tokengate_http_request_duration_seconds',
      help: 'Public API request duration by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    upstreamCalls: new Counter({
      name: 'tokengate_upstream_calls_total',
      help: 'Gateway calls by operation and outcome (ok, refused: a follow-up answered result E, http_<status> or an error code)',
      labelNames: ['operation', 'outcome'],
      registers: [registry],
    }),
    upstreamDuration: new Histogram({
      name: 'tokengate_upstream_duration_seconds',
      help: 'Gateway call duration by operation',
      labelNames: ['operation'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 45, 60],
      registers: [registry],
    }),
    cacheLookups: new Counter({ name: 'tokengate_token_cache_lookups_total', help: 'Card reference token cache lookups by result (hit, miss)', labelNames: ['result'], registers: [registry] }),
    idempotency: new Counter({
      name: 'tokengate_idempotency_events_total',
      help: 'Idempotency outcomes: replay, conflict (in progress), mismatch, outcome_unknown, released (a refusal before processing freed the key)',
      labelNames: ['event'],
      registers: [registry],
    }),
    sales: new Counter({ name: 'tokengate_sales_total', help: 'Sales by result (approved, partial, declined, error, unknown)', labelNames: ['result'], registers: [registry] }),
    writes: new Counter({
      name: 'tokengate_writes_total',
      help: 'Writes by operation (sale, authorize, capture, void, refund, payment_method) and result (ok, declined, refused, error, not_sent, outcome_unknown, replay)',
      labelNames: ['operation', 'result'],
      registers: [registry],
    }),
  };
}
