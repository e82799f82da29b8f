import { startServiceProcess, type ServiceProcess } from './service-process';

/**
 * N replicas of the compiled service (`node dist/main.js`) with one shared environment (same Redis, same
 * gateway), and calls spread over them round-robin, each with a client-side deadline.
 *
 *   const replicas = await startReplicas(3, env);
 *   const answer = await replicas.call({ method: 'POST', path: '/v1/sales', headers, body });  // next replica
 *   await replicas.kill(1, 'SIGKILL');  await replicas.replace(1);
 */
export interface Answer {
  replica: number;
  /** 0 when no HTTP answer came (connection error or the client deadline). */
  status: number;
  /** Parsed JSON, or the raw text when it is not JSON. */
  body: unknown;
  headers: Record<string, string>;
  ms: number;
  /** Why there was no answer (`deadline`, or the connection error code). */
  failure?: string;
}

export interface CallOptions {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent as is when a string, else JSON-encoded. */
  body?: unknown;
  /** Client-side deadline (default 10 s). */
  deadlineMs?: number;
  /** A fixed replica; default: the next one round-robin (skipping stopped ones). */
  replica?: number;
}

export interface Replicas {
  readonly size: number;
  process(i: number): ServiceProcess;
  /** Whether replica i is running (not killed or stopped). */
  alive(i: number): boolean;
  call(options: CallOptions): Promise<Answer>;
  /** Sends a signal and waits for the exit. */
  kill(i: number, signal: NodeJS.Signals): Promise<void>;
  /** Starts a fresh process in slot i with the shared environment. */
  replace(i: number): Promise<void>;
  /** Output of every process ever started here (killed ones included). */
  logs(): string;
  stop(): Promise<void>;
}

export async function startReplicas(n: number, env: Record<string, string>): Promise<Replicas> {
  // Readiness under startServiceProcess's own ceiling (60 s): a 20 s bound here failed faults-process at a load
  // average of 20, three replicas booting at once beside other suites (issue 41).
  const procs: ServiceProcess[] = await Promise.all(Array.from({ length: n }, () => startServiceProcess(env)));
  const down = new Set<number>();
  const retiredLogs: string[] = [];
  let cursor = 0;

  const pick = (): number => {
    for (let tries = 0; tries < n; tries++) {
      const i = cursor++ % n;
      if (!down.has(i)) return i;
    }
    throw new Error('no replica is running');
  };

  async function call(options: CallOptions): Promise<Answer> {
    const replica = options.replica ?? pick();
    const proc = procs[replica] as ServiceProcess;
    const started = Date.now();
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    try {
      const res = await fetch(proc.url + options.path, {
        method: options.method ?? 'GET',
        headers,
        body,
        signal: AbortSignal.timeout(options.deadlineMs ?? 10_000),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { replica, status: res.status, body: parsed, headers: Object.fromEntries(res.headers.entries()), ms: Date.now() - started };
    } catch (err) {
      const e = err as Error & { name?: string; cause?: { code?: string } };
      const failure = e.name === 'TimeoutError' ? 'deadline' : (e.cause?.code ?? e.name ?? 'error');
      return { replica, status: 0, body: undefined, headers: {}, ms: Date.now() - started, failure };
    }
  }

  return {
    size: n,
    process: (i) => procs[i] as ServiceProcess,
    alive: (i) => !down.has(i),
    call,
    async kill(i, signal) {
      down.add(i);
      await (procs[i] as ServiceProcess).stop(signal);
    },
    async replace(i) {
      const old = procs[i] as ServiceProcess;
      if (!down.has(i)) await old.stop('SIGTERM');
      retiredLogs.push(old.output());
      procs[i] = await startServiceProcess(env);
      down.delete(i);
    },
    logs: () => [...retiredLogs, ...procs.map((p) => p.output())].join('\n'),
    async stop() {
      await Promise.all(procs.map((p, i) => (down.has(i) ? Promise.resolve() : p.stop('SIGTERM').then(() => undefined))));
      procs.forEach((_, i) => down.add(i));
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// A fault world: one sandbox in this process, one private Redis, N replicas; sales tracked per key, and the
// invariants checked against the sandbox's ledger.

/** Statuses a sale may answer, with the codes each may carry (contract.md, Errors). 201 has no error code. */
export const SALE_ANSWERS: Readonly<Record<number, readonly string[]>> = {
  201: [],
  402: ['card_declined'],
  409: ['idempotency_in_progress', 'outcome_unknown'],
  429: ['rate_limited'],
  502: ['gateway_error'],
  503: ['unavailable'],
  504: ['gateway_timeout'],
};

export interface SaleCase {
  key: string;
  invoice: string;
  customer: string;
  paymentMethod: string;
  amount: string;
  bearer: string;
  answers: Answer[];
  /** Answers lost on purpose (the replica was SIGKILLed under it): not counted as unanswered. */
  killed?: boolean;
}

/** What the checker needs from a ledger record (the sandbox's RecordedTransaction). */
export interface LedgerRecord {
  invoice: string;
  refnum: string;
  delivery: string;
}

const errorCode = (a: Answer): string | undefined => {
  const b = a.body as { error?: { code?: unknown } } | undefined;
  return typeof b?.error?.code === 'string' ? b.error.code : undefined;
};

/**
 * Every violation of the fault suite's invariants, as readable lines (empty when all hold):
 * - every caller answered before its deadline, with a documented status, code and error envelope;
 * - no invoice (one per key) charged twice;
 * - a 201 names the one charge of its key (same refnum);
 * - a charge whose answer was lost or garbled was never reported as a success before the reconciler found it,
 *   and its key's last answer is 409 outcome_unknown (not reconciled yet, never re-sent) or the reconciled
 *   replay of that charge (201 with Tokengate-Reconciled: true, contract guarantee 6).
 */
export function saleViolations(cases: readonly SaleCase[], ledger: readonly LedgerRecord[]): string[] {
  const out: string[] = [];
  const byInvoice = new Map<string, LedgerRecord[]>();
  for (const t of ledger) byInvoice.set(t.invoice, [...(byInvoice.get(t.invoice) ?? []), t]);
  for (const c of cases) {
    const records = byInvoice.get(c.invoice) ?? [];
    if (records.length > 1) out.push(`${c.key}: charged ${records.length} times`);
    for (const a of c.answers) {
      if (a.status === 0) {
        if (!c.killed) out.push(`${c.key}: no answer from replica ${a.replica} (${a.failure}) after ${a.ms} ms`);
        continue;
      }
      const codes = SALE_ANSWERS[a.status];
      if (!codes) {
        out.push(`${c.key}: undocumented status ${a.status}`);
        continue;
      }
      if (a.status === 201) {
        const refnum = (a.body as { refnum?: unknown }).refnum;
        if (records.length !== 1 || records[0]?.refnum !== refnum) out.push(`${c.key}: 201 refnum ${String(refnum)} is not the one charge`);
        continue;
      }
      const err = (a.body as { error?: { code?: unknown; message?: unknown; request_id?: unknown } }).error;
      if (!err || !codes.includes(String(err.code)) || typeof err.message !== 'string' || err.request_id !== a.headers['x-request-id']) {
        out.push(`${c.key}: ${a.status} with a bad envelope ${JSON.stringify(a.body).slice(0, 200)}`);
      }
    }
    const record = records[0];
    if (record && (record.delivery === 'lost' || record.delivery === 'garbled')) {
      const reconciled = (a: Answer) => a.status === 201 && a.headers['tokengate-reconciled'] === 'true';
      if (c.answers.some((a) => a.status === 201 && !reconciled(a))) out.push(`${c.key}: answer ${record.delivery} at the gateway but 201 to the caller`);
      const last = [...c.answers].reverse().find((a) => a.status !== 0);
      if (!last || !(reconciled(last) || (last.status === 409 && errorCode(last) === 'outcome_unknown'))) {
        out.push(`${c.key}: ${record.delivery} charge, last answer ${last?.status} ${last ? errorCode(last) : ''} (want 409 outcome_unknown or the reconciled 201)`);
      }
    }
  }
  return out;
}

/** The first answer's status and code, for summaries in test output. */
export function tally(cases: readonly SaleCase[], which: 'first' | 'last' = 'first'): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of cases) {
    const a = which === 'first' ? c.answers[0] : c.answers[c.answers.length - 1];
    const label = a ? `${a.status}${errorCode(a) ? ' ' + errorCode(a) : ''}` : 'none';
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

/** Sends the case's sale (same key, same body every time) and records the answer. */
export async function sendSale(replicas: Replicas, c: SaleCase, options: { replica?: number; deadlineMs?: number } = {}): Promise<Answer> {
  const answer = await replicas.call({
    method: 'POST',
    path: '/v1/sales',
    headers: { authorization: `Bearer ${c.bearer}`, 'idempotency-key': c.key },
    body: { customer: c.customer, payment_method: c.paymentMethod, amount: c.amount, invoice: c.invoice },
    ...options,
  });
  c.answers.push(answer);
  return answer;
}
