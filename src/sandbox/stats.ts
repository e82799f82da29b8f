import { WindowMax } from './rate-counter';
import type { FaultKind } from './faults';
import type { Ledger } from './ledger';

/** Per endpoint key (all client IPs together). */
export interface EndpointStats {
  /** Every request attributed to the key, whatever its answer. */
  calls: number;
  /** Calls the rate limiter let through (counted in its windows). */
  accepted: number;
  /** Real rate-limit refusals (429, errorcode 155), not injected ones. */
  rateLimited: number;
  /** 429s injected by a '429' fault. */
  injected429: number;
  /** 401s: IP allow-list refusals (156) and authentication failures (21002, 20010, 23). */
  unauthorized: number;
  /** Largest number of accepted calls in ANY span of rateWindowMs (sliding maximum, whatever the mode). */
  maxInWindow: number;
  /** Accepted calls by what they asked for (the fault-match names: sale, cardref, lookup, …). */
  acceptedByKind: Record<string, number>;
}

export interface SandboxStats {
  endpoints: Record<string, EndpointStats>;
  sales: {
    /** Processed sales (charged or declined), as in transactions(). */
    processed: number;
    approved: number;
    partial: number;
    declined: number;
    /** result_code E answers (bad card data, invalid card reference): nothing processed. */
    errors: number;
    foldedDuplicates: number;
    /** Processed sales whose answer never arrived (hang, reset, client gone). */
    lostAnswers: number;
    /** Processed sales answered with a garbage body. */
    garbledAnswers: number;
    pendingAnswers: number;
  };
  faults: Record<FaultKind, number>;
}

interface Entry {
  stats: EndpointStats;
  window: WindowMax;
}

export class StatsRecorder {
  private endpoints = new Map<string, Entry>();
  saleErrors = 0;

  private entry(key: string): Entry {
    let e = this.endpoints.get(key);
    if (!e) {
      e = { stats: { calls: 0, accepted: 0, rateLimited: 0, injected429: 0, unauthorized: 0, maxInWindow: 0, acceptedByKind: {} }, window: new WindowMax() };
      this.endpoints.set(key, e);
    }
    return e;
  }

  call(key: string): void {
    this.entry(key).stats.calls++;
  }

  accepted(key: string, now: number, windowMs: number, kind = 'other'): void {
    const e = this.entry(key);
    e.stats.accepted++;
    e.stats.acceptedByKind[kind] = (e.stats.acceptedByKind[kind] ?? 0) + 1;
    e.window.record(now, windowMs);
    e.stats.maxInWindow = e.window.max;
  }

  rateLimited(key: string, injected: boolean): void {
    if (injected) this.entry(key).stats.injected429++;
    else this.entry(key).stats.rateLimited++;
  }

  unauthorized(key: string): void {
    this.entry(key).stats.unauthorized++;
  }

  reset(): void {
    this.endpoints.clear();
    this.saleErrors = 0;
  }

  snapshot(ledger: Ledger, faults: Record<FaultKind, number>): SandboxStats {
    const txs = ledger.transactions();
    const by = (f: (t: (typeof txs)[number]) => boolean) => txs.filter(f).length;
    return {
      endpoints: Object.fromEntries([...this.endpoints].map(([k, e]) => [k, { ...e.stats, acceptedByKind: { ...e.stats.acceptedByKind } }])),
      sales: {
        processed: txs.length,
        approved: by((t) => t.result_code === 'A'),
        partial: by((t) => t.result_code === 'P'),
        declined: by((t) => t.result_code === 'D'),
        errors: this.saleErrors,
        foldedDuplicates: ledger.foldedTotal,
        lostAnswers: by((t) => t.delivery === 'lost'),
        garbledAnswers: by((t) => t.delivery === 'garbled'),
        pendingAnswers: by((t) => t.delivery === 'pending'),
      },
      faults: { ...faults },
    };
  }
}
