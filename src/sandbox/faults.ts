/**
 * Fault injection for tests and benchmarks (semantics in README.md):
 *   5xx     answer 500/502/503 with a gateway error body (by default BEFORE processing: nothing charged);
 *   hang    never answer; the socket stays open until the client gives up (by default AFTER processing);
 *   reset   read the body, then reset the connection without answering (by default AFTER processing);
 *   garbage answer 200 with a body that is not JSON (by default AFTER processing);
 *   429     answer the rate-limit error (errorcode 155) without processing or counting the call.
 * `when` moves the first four to the other side of processing, so a test can tell "failed, nothing recorded"
 * from "failed, but the gateway acted" (the reconciler's two cases).
 */

export type FaultKind = '5xx' | 'hang' | 'reset' | 'garbage' | '429';
export type FaultWhen = 'before' | 'after';
/** POST transactions match by command: sale (cc:sale), authonly, capture, void (and void:release), refund (refund, creditvoid, refund:adjust). */
export type FaultMatch =
  | 'sale' | 'authonly' | 'capture' | 'void' | 'refund' | 'lookup' | 'batches' | 'cardref' | 'customers' | 'payment_methods' | 'any';
export type RouteKind = Exclude<FaultMatch, 'any'>;

/** Where each kind strikes when `when` is not given (the behaviour before `when` existed). */
export const DEFAULT_WHEN: Readonly<Record<Exclude<FaultKind, '429'>, FaultWhen>> = { '5xx': 'before', hang: 'after', reset: 'after', garbage: 'after' };

export interface OneShotFault {
  kind: FaultKind;
  match?: FaultMatch;
  /** How many matching requests it applies to (default 1). */
  count?: number;
  /** For 5xx: the status to answer (default 503). */
  status?: 500 | 502 | 503;
  /** Before or after processing (default: DEFAULT_WHEN of the kind; ignored for 429). */
  when?: FaultWhen;
}

export interface FaultRates {
  /** Probability (0..1) of a 5xx (status picked among 500/502/503). */
  errorRate?: number;
  hangRate?: number;
  resetRate?: number;
  garbageRate?: number;
  match?: FaultMatch;
  /** Before or after processing, for every rate-drawn fault (default: DEFAULT_WHEN of each kind). */
  when?: FaultWhen;
  /** Convenience: written through to the settings (latency is a setting; clear() leaves it alone). */
  latencyMs?: number;
  jitterMs?: number;
}

export interface InjectedFault {
  kind: FaultKind;
  status?: 500 | 502 | 503;
  /** Resolved: never undefined except for 429. */
  when?: FaultWhen;
}

export interface FaultControl {
  /** Queues a deterministic fault for the next matching request(s). */
  next(fault: OneShotFault): void;
  /** Sets probabilistic faults (replaces earlier rates). */
  set(rates: FaultRates): void;
  /** Drops queued faults and rates (latency stays: it is a setting). */
  clear(): void;
  /** Queued faults with their remaining counts. */
  pending(): (Required<Pick<OneShotFault, 'kind' | 'match' | 'count'>> & Pick<OneShotFault, 'when'>)[];
  rates(): FaultRates;
}

const KINDS: readonly FaultKind[] = ['5xx', 'hang', 'reset', 'garbage', '429'];
const MATCHES: readonly FaultMatch[] = ['sale', 'authonly', 'capture', 'void', 'refund', 'lookup', 'batches', 'cardref', 'customers', 'payment_methods', 'any'];
const WHENS: readonly FaultWhen[] = ['before', 'after'];

export class FaultError extends Error {}

function rate(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new FaultError(`${name} must be a number in 0..1`);
  return v;
}

/** Validates the HTTP form (POST /_sandbox/faults): with `kind` it is a one-shot fault, otherwise rates. */
export function parseFaultRequest(body: unknown): { next: OneShotFault } | { set: FaultRates } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new FaultError('body must be an object');
  const b = body as Record<string, unknown>;
  if (b.match !== undefined && !MATCHES.includes(b.match as FaultMatch)) throw new FaultError(`match must be one of ${MATCHES.join(', ')}`);
  const match = b.match as FaultMatch | undefined;
  if (b.when !== undefined && !WHENS.includes(b.when as FaultWhen)) throw new FaultError('when must be before or after');
  const when = b.when as FaultWhen | undefined;
  if (b.kind !== undefined) {
    if (!KINDS.includes(b.kind as FaultKind)) throw new FaultError(`kind must be one of ${KINDS.join(', ')}`);
    if (b.count !== undefined && !(Number.isSafeInteger(b.count) && (b.count as number) >= 1)) throw new FaultError('count must be a whole number >= 1');
    if (b.status !== undefined && ![500, 502, 503].includes(b.status as number)) throw new FaultError('status must be 500, 502 or 503');
    return { next: { kind: b.kind as FaultKind, ...(match ? { match } : {}), ...(b.count ? { count: b.count as number } : {}), ...(b.status ? { status: b.status as 500 | 502 | 503 } : {}), ...(when ? { when } : {}) } };
  }
  const set: FaultRates = {};
  for (const name of ['errorRate', 'hangRate', 'resetRate', 'garbageRate'] as const) {
    const v = rate(b[name], name);
    if (v !== undefined) set[name] = v;
  }
  for (const name of ['latencyMs', 'jitterMs'] as const) {
    const v = b[name];
    if (v === undefined) continue;
    if (!(Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 600_000)) throw new FaultError(`${name} must be a whole number in 0..600000`);
    set[name] = v as number;
  }
  for (const name of Object.keys(b)) if (!['errorRate', 'hangRate', 'resetRate', 'garbageRate', 'match', 'when', 'latencyMs', 'jitterMs'].includes(name)) throw new FaultError(`unknown field "${name}"`);
  if (match) set.match = match;
  if (when) set.when = when;
  return { set };
}

const matches = (m: FaultMatch | undefined, route: RouteKind) => m === undefined || m === 'any' || m === route;

export class Faults implements FaultControl {
  private queue: { fault: OneShotFault; left: number }[] = [];
  private current: FaultRates = {};
  readonly injected: Record<FaultKind, number> = { '5xx': 0, hang: 0, reset: 0, garbage: 0, '429': 0 };

  constructor(
    private readonly onLatency: (latency: { latencyMs?: number; jitterMs?: number }) => void = () => undefined,
    private readonly random: () => number = Math.random,
  ) {}

  next(fault: OneShotFault): void {
    const parsed = parseFaultRequest(fault);
    if (!('next' in parsed)) throw new FaultError('a one-shot fault needs a kind');
    const next = parsed.next;
    this.queue.push({ fault: next, left: next.count ?? 1 });
  }

  set(rates: FaultRates): void {
    const parsed = parseFaultRequest(rates);
    if (!('set' in parsed)) throw new FaultError('rates take no kind; use next()');
    const { latencyMs, jitterMs, ...rest } = parsed.set;
    if (latencyMs !== undefined || jitterMs !== undefined) this.onLatency({ ...(latencyMs !== undefined ? { latencyMs } : {}), ...(jitterMs !== undefined ? { jitterMs } : {}) });
    // Latency alone leaves the rates as they are.
    if (Object.keys(rest).length > 0) this.current = rest;
  }

  clear(): void {
    this.queue = [];
    this.current = {};
  }

  resetCounts(): void {
    for (const k of KINDS) this.injected[k] = 0;
  }

  pending(): (Required<Pick<OneShotFault, 'kind' | 'match' | 'count'>> & Pick<OneShotFault, 'when'>)[] {
    return this.queue.map((q) => ({ kind: q.fault.kind, match: q.fault.match ?? 'any', count: q.left, ...(q.fault.when ? { when: q.fault.when } : {}) }));
  }

  rates(): FaultRates {
    return { ...this.current };
  }

  /**
   * The fault for a request at one stage: '429' is taken at the rate-limit stage (so the call is not counted),
   * the others after authentication (so they only hit requests the gateway would have served).
   */
  take(route: RouteKind, stage: 'rate' | 'handler'): InjectedFault | undefined {
    const wanted = (k: FaultKind) => (stage === 'rate' ? k === '429' : k !== '429');
    const i = this.queue.findIndex((q) => wanted(q.fault.kind) && matches(q.fault.match, route));
    if (i !== -1) {
      const q = this.queue[i] as { fault: OneShotFault; left: number };
      if (--q.left <= 0) this.queue.splice(i, 1);
      return this.count({ kind: q.fault.kind, ...(q.fault.kind === '5xx' ? { status: q.fault.status ?? 503 } : {}) }, q.fault.when);
    }
    if (stage === 'rate' || !matches(this.current.match, route)) return undefined;
    const r = this.random();
    const { errorRate = 0, hangRate = 0, resetRate = 0, garbageRate = 0, when } = this.current;
    if (r < errorRate) return this.count({ kind: '5xx', status: ([500, 502, 503] as const)[Math.floor(this.random() * 3)] ?? 503 }, when);
    if (r < errorRate + hangRate) return this.count({ kind: 'hang' }, when);
    if (r < errorRate + hangRate + resetRate) return this.count({ kind: 'reset' }, when);
    if (r < errorRate + hangRate + resetRate + garbageRate) return this.count({ kind: 'garbage' }, when);
    return undefined;
  }

  private count(f: InjectedFault, when: FaultWhen | undefined): InjectedFault {
    this.injected[f.kind]++;
    if (f.kind === '429') return f;
    return { ...f, when: when ?? DEFAULT_WHEN[f.kind] };
  }
}
