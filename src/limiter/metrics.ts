import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CallClass } from './types';

export interface LimiterMetrics {
  queueWait(cls: CallClass, seconds: number): void;
  refusal(cls: CallClass, reason: 'max_wait' | 'unavailable'): void;
  phantoms(count: number): void;
  upstream429(): void;
  lateWake(cls: CallClass): void;
  fallback(on: number): void;
}

/** Several schedulers (endpoint keys, tests) may share one registry: reuse a metric already registered. */
function metric<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/** Limiter metrics (issue 4, item 6); without a registry every call is a no-op. */
export function createLimiterMetrics(registry: Registry | undefined, endpointKey: string): LimiterMetrics {
  if (!registry) {
    const noop = (): void => undefined;
    return { queueWait: noop, refusal: noop, phantoms: noop, upstream429: noop, lateWake: noop, fallback: noop };
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
    help: 'Calls refused by the limiter (max_wait: could not start in time; unavailable: sale while Redis is down)',
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
  };
}
