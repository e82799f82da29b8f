import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CallClass, DayUsage, RefusalReason } from './types';

export interface LimiterMetrics {
  queueWait(cls: CallClass, seconds: number): void;
  refusal(cls: CallClass, reason: RefusalReason | 'unavailable'): void;
  phantoms(count: number): void;
  upstream429(): void;
  lateWake(cls: CallClass): void;
  fallback(on: number): void;
  /**
   * Reports the day window's use at scrape time (tokengate_budget_day_*), read from `usage` (one cheap command);
   * a scrape while it fails leaves the gauges as they were. Returns the function that stops reporting it.
   */
  watchDay(usage: () => Promise<DayUsage>, perDay: number): () => void;
}

/** The day sources of each registry, read by its two day gauges' collect() (one read per scrape and source). */
const daySources = new WeakMap<Registry, Map<string, { usage: () => Promise<DayUsage>; perDay: number }>>();

function registerDayGauges(registry: Registry): void {
  const sources = new Map<string, { usage: () => Promise<DayUsage>; perDay: number }>();
  daySources.set(registry, sources);
  const registers = [registry];
  /** One read per scrape serves both gauges: the first collect() starts it, the second awaits the same answer. */
  let reading: Promise<Map<string, DayUsage & { perDay: number }>> | undefined;
  const read = () => {
    reading ??= (async () => {
      const out = new Map<string, DayUsage & { perDay: number }>();
      await Promise.all([...sources].map(async ([endpoint, source]) => {
        const usage = await source.usage().catch(() => undefined);
        if (usage) out.set(endpoint, { ...usage, perDay: source.perDay });
      }));
      return out;
    })().finally(() => setImmediate(() => (reading = undefined)));
    return reading;
  };
  new Gauge({
    name: 'tokengate_budget_day_remaining',
    help: 'Upstream calls left in the day window (GATEWAY_RATE_PER_DAY less every start and reservation in it), read from Redis at scrape time',
    labelNames: ['endpoint'],
    registers,
    async collect() {
      for (const [endpoint, u] of await read()) this.set({ endpoint }, Math.max(0, u.perDay - u.total));
    },
  });
  new Gauge({
    name: 'tokengate_budget_day_used',
    help: 'Upstream calls in the day window by class: read, background, other (sales, captures, refunds, phantoms, fallback starts)',
    labelNames: ['endpoint', 'class'],
    registers,
    async collect() {
      for (const [endpoint, u] of await read()) {
        this.set({ endpoint, class: 'read' }, u.read);
        this.set({ endpoint, class: 'background' }, u.background);
        this.set({ endpoint, class: 'other' }, u.total - u.read - u.background);
      }
    },
  });
}

/** Several schedulers (endpoint keys, tests) may share one registry: reuse a metric already registered. */
function metric<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/** Limiter metrics (issue 4, item 6); without a registry every call is a no-op. */
export function createLimiterMetrics(registry: Registry | undefined, endpointKey: string): LimiterMetrics {
  if (!registry) {
    const noop = (): void => undefined;
    return { queueWait: noop, refusal: noop, phantoms: noop, upstream429: noop, lateWake: noop, fallback: noop, watchDay: () => noop };
  }
  const registers = [registry];
  const wait = metric(registry, 'tokengate_limiter_queue_wait_seconds', () => new Histogram({
    name: 'tokengate_limiter_queue_wait_seconds',
    help: 'Time a call waited for its upstream slot',
    labelNames: ['endpoint', 'class'],
    buckets: [0.005, 0.05, 0.25, 1, 2.5, 5, 10, 20, 30, 60],
    registers,
  }));
  const refusals = metric(registry, 'tokengate_limiter_refusals_total', () => new Counter({
    name: 'tokengate_limiter_refusals_total',
    help: 'Calls refused by the limiter (max_wait: could not start in time; caller_share: that caller\'s share of reads is spent; unavailable: a write while Redis is down)',
    labelNames: ['endpoint', 'class', 'reason'],
    registers,
  }));
  const phantoms = metric(registry, 'tokengate_limiter_phantom_reservations_total', () => new Counter({
    name: 'tokengate_limiter_phantom_reservations_total',
    help: 'Reservations added because X-Rate-Limit reported more use than counted',
    labelNames: ['endpoint'],
    registers,
  }));
  const upstream429 = metric(registry, 'tokengate_limiter_upstream_429_total', () => new Counter({
    name: 'tokengate_limiter_upstream_429_total',
    help: 'Gateway 429 answers (should stay 0)',
    labelNames: ['endpoint'],
    registers,
  }));
  const lateWakes = metric(registry, 'tokengate_limiter_late_wakes_total', () => new Counter({
    name: 'tokengate_limiter_late_wakes_total',
    help: 'Callers that woke more than half the margin past their slot and reserved again',
    labelNames: ['endpoint', 'class'],
    registers,
  }));
  const fallback = metric(registry, 'tokengate_limiter_fallback_mode', () => new Gauge({
    name: 'tokengate_limiter_fallback_mode',
    help: '1 while Redis is unreachable and reads use the per-replica share',
    labelNames: ['endpoint'],
    registers,
  }));
  return {
    queueWait: (cls, seconds) => wait.observe({ endpoint: endpointKey, class: cls }, seconds),
    refusal: (cls, reason) => refusals.inc({ endpoint: endpointKey, class: cls, reason }),
    phantoms: (count) => phantoms.inc({ endpoint: endpointKey }, count),
    upstream429: () => upstream429.inc({ endpoint: endpointKey }),
    lateWake: (cls) => lateWakes.inc({ endpoint: endpointKey, class: cls }),
    fallback: (on) => fallback.set({ endpoint: endpointKey }, on),
    watchDay(usage, perDay) {
      if (!daySources.has(registry)) registerDayGauges(registry);
      const sources = daySources.get(registry);
      const source = { usage, perDay };
      sources?.set(endpointKey, source);
      return () => {
        if (sources?.get(endpointKey) === source) sources.delete(endpointKey);
      };
    },
  };
}
