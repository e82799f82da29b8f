import type { EventSink } from '../events';
import type { Logger } from '../observability/logger';
import { creditLineOf, isOwnCredit, saleLineOf, type MatchRecords } from './match';
import type { SettlementMetrics } from './metrics';
import type { CreditReturn, Settlement, SettlementLine, SettlementStore } from './types';

export interface BankReviewDeps {
  store: SettlementStore;
  records: Pick<MatchRecords, 'view'>;
  events: EventSink;
  appended?: () => void;
  metrics: SettlementMetrics;
  logger: Logger;
  /** tokengate's clock (its test clock outside production), ms. */
  now: () => number;
  /** How long after its batch was read the bank may still return a payment (SETTLEMENTS_BANK_RETURN_WINDOW_MS). */
  windowMs: number;
}

export interface BankReview {
  /**
   * The bank returned the sale, or it failed (ach.returned or ach.failed applied, or heard again): its settlement
   * line changes, reported once.
   */
  returned(sale: string): Promise<void>;
  /**
   * A credit of tokengate's (a bank payment's refund) came back (ach.returned or ach.failed about it, heard again
   * or not): kept first (a batch read later matches it returned), then its kept line changes, reported once.
   */
  creditReturned(credit: string, back: CreditReturn): Promise<void>;
  /** Open bank lines whose review ended: settled for good, or returned (a return whose look above was lost). */
  review(): Promise<number>;
  /**
   * A settlement just kept: its open bank lines looked at again. A return applied while the batch was being read
   * (after its line was built, before the settlement was kept) found no kept line to change (`returned` above) and
   * would otherwise leave the line open until its window ends (a soak: 6 of 102 returns, the final clock jump
   * closing a batch as the returns came). Given the settlement as kept (no read back). Answers how many lines changed.
   * Its credits of tokengate's likewise: a credit's return kept after its line was built.
   */
  kept(settlement: Pick<Settlement, 'batch' | 'closed_at' | 'lines'>): Promise<number>;
}

/** Open lines looked at per review: a bound on one pass's Redis work (the rest wait for the next). */
const REVIEW_PER_PASS = 1000;

/**
 * Bank payments on a rolling window (issue 39; contract, "Settlements"; guarantee 14): a bank sale's line is
 * `bank: open` (with `open_until`) from its batch's read until the return window ends, then `final`; a return,
 * however late, changes the line to `bank: returned` (`amount_returned`, `return_code`, `returned_at`; `amount`
 * what tokengate keeps, so `amount_differs`) through the store's amend, and reports it again: one
 * `settlement.mismatch` whose `change` names the return, so a return heard twice (a redelivery, two replicas, the
 * review after a lost look) is reported once. The event goes before the amend: a replica that dies in between
 * leaves the line open, the return's redelivery or the daily review amends it, and the log's dedupe keeps one event.
 */
export function createBankReview(deps: BankReviewDeps): BankReview {
  const { store, records } = deps;

  async function relook(batch: string, closedAt: string, line: SettlementLine, nowMs: number): Promise<boolean> {
    const view = line.sale ? await records.view(line.sale) : undefined;
    if (!view) return false;
    return change(batch, closedAt, line, saleLineOf(line, view, { nowMs, windowMs: deps.windowMs }));
  }

  /** Replaces a kept line with `next` (reported first when it turned returned); true when it changed. */
  async function change(batch: string, closedAt: string, line: SettlementLine, next: SettlementLine): Promise<boolean> {
    if (JSON.stringify(next) === JSON.stringify(line)) return false;
    if (next.bank === 'returned') {
      await deps.events.append([{ type: 'settlement.mismatch', change: `settlement:${batch}:${line.transaction}:returned`, data: { batch, closed_at: closedAt, line: next } }]);
      deps.appended?.();
    }
    const changed = await store.amend(batch, [next]);
    for (const l of changed) if (l.verdict !== line.verdict) deps.metrics.lines.inc({ verdict: l.verdict });
    if (next.bank === 'returned' && changed.length > 0) deps.logger.warn('settlement: a bank payment was returned after its batch', { batch, sale: line.sale, kind: line.kind, return_code: next.return_code ?? 'unknown' });
    return changed.length > 0;
  }

  return {
    async returned(sale) {
      const batch = (await store.heldIn([sale])).get(sale);
      // Not in a kept settlement yet: its batch's read matches it as returned.
      if (!batch) return;
      const kept = await store.get(batch);
      const line = kept?.lines.find((l) => l.transaction === sale);
      if (kept && line && line.bank !== 'returned') await relook(batch, kept.closed_at, line, deps.now());
    },
    async creditReturned(credit, back) {
      // Kept before the line is looked for: a batch read meanwhile either finds this, or is kept after it (kept()).
      await store.keepCreditReturn(credit, back);
      const batch = (await store.heldIn([credit])).get(credit);
      if (!batch) return;
      const kept = await store.get(batch);
      const line = kept?.lines.find((l) => l.transaction === credit);
      if (kept && line && line.bank !== 'returned') await change(batch, kept.closed_at, line, creditLineOf(line, back));
    },
    async kept({ batch, closed_at, lines }) {
      let changed = 0;
      for (const line of lines) if (line.bank === 'open' && (await relook(batch, closed_at, line, deps.now()))) changed += 1;
      const credits = lines.filter(isOwnCredit);
      const backs = credits.length > 0 ? await store.creditReturns(credits.map((l) => l.transaction)) : new Map<string, CreditReturn>();
      for (const line of credits) {
        const back = backs.get(line.transaction);
        if (back && (await change(batch, closed_at, line, creditLineOf(line, back)))) changed += 1;
      }
      return changed;
    },
    async review() {
      const nowMs = deps.now();
      let changed = 0;
      for (const { batch, closed_at, line } of await store.openBankLines(nowMs, REVIEW_PER_PASS)) {
        if (await relook(batch, closed_at, line, nowMs)) changed += 1;
      }
      return changed;
    },
  };
}
