import { countByVerdict } from './match';
import { heldBy, type CreditReturn, type DueBatch, type Settlement, type SettlementStore, type SettlementSummary } from './types';

/** The same in process memory (development mode, tests): one process, so the claim is a map. */
export function createMemorySettlementStore(now: () => number = Date.now): SettlementStore {
  const kept = new Map<string, { settlement: Settlement; closedMs: number }>();
  const claims = new Map<string, { owner: string; until: number }>();
  const creditBacks = new Map<string, CreditReturn>();
  const due = new Map<string, DueBatch & { atMs: number }>();
  let swept = -1;
  let sweeper: { owner: string; until: number } | undefined;
  const summaryOf = ({ lines: _lines, ...summary }: Settlement): SettlementSummary => structuredClone(summary);
  /** Newest close first; ties by batch key, as Redis orders equal scores (reversed). */
  const ordered = () => [...kept.values()].sort((a, b) => b.closedMs - a.closedMs || (a.settlement.batch < b.settlement.batch ? 1 : -1));
  return {
    async get(batch) {
      const k = kept.get(batch);
      return k ? structuredClone(k.settlement) : undefined;
    },
    async list(after, limit) {
      const all = ordered();
      let start = 0;
      if (after !== undefined) {
        const i = all.findIndex((k) => k.settlement.batch === after);
        if (i < 0) return [];
        start = i + 1;
      }
      return all.slice(start, start + limit).map((k) => summaryOf(k.settlement));
    },
    async claim(batch, owner, ttlMs) {
      if (kept.has(batch)) return 'kept';
      const c = claims.get(batch);
      if (c && c.until > now() && c.owner !== owner) return 'busy';
      claims.set(batch, { owner, until: now() + ttlMs });
      return 'claimed';
    },
    async save(settlement, owner, closedMs) {
      if (claims.get(settlement.batch)?.owner === owner) claims.delete(settlement.batch);
      if (kept.has(settlement.batch)) return false;
      kept.set(settlement.batch, { settlement: structuredClone(settlement), closedMs });
      return true;
    },
    async release(batch, owner) {
      if (claims.get(batch)?.owner === owner) claims.delete(batch);
    },
    async amend(batch, lines) {
      const k = kept.get(batch);
      if (!k) return [];
      const changed = [];
      for (const line of lines) {
        const i = k.settlement.lines.findIndex((l) => l.transaction === line.transaction);
        if (i >= 0 && JSON.stringify(k.settlement.lines[i]) === JSON.stringify(line)) continue;
        if (i >= 0) k.settlement.lines[i] = structuredClone(line);
        else k.settlement.lines.push(structuredClone(line));
        changed.push(structuredClone(line));
      }
      k.settlement.counts = countByVerdict(k.settlement.lines);
      return changed;
    },
    async heldIn(sales) {
      const out = new Map<string, string>();
      for (const { settlement } of kept.values()) {
        for (const l of settlement.lines) {
          const key = heldBy(l);
          if (key !== undefined && sales.includes(key) && !out.has(key)) out.set(key, settlement.batch);
        }
      }
      return out;
    },
    async backfillHeld() {
      return 0; // heldIn() reads the kept lines themselves
    },
    async keepCreditReturn(credit, back) {
      if (!creditBacks.has(credit)) creditBacks.set(credit, { ...back });
    },
    async creditReturns(credits) {
      return new Map(credits.flatMap((c) => { const b = creditBacks.get(c); return b ? [[c, { ...b }] as const] : []; }));
    },
    async openBankLines(dueMs, limit) {
      const open = [...kept.values()].flatMap(({ settlement }) => settlement.lines.filter((l) => l.bank === 'open' && Date.parse(l.open_until ?? '') <= dueMs).map((line) => ({ batch: settlement.batch, closed_at: settlement.closed_at, line: structuredClone(line) })));
      return open.sort((a, b) => Date.parse(a.line.open_until ?? '') - Date.parse(b.line.open_until ?? '')).slice(0, limit);
    },
    async claimSweep(owner, dueSinceMs, ttlMs) {
      if (swept >= dueSinceMs) return false;
      if (sweeper && sweeper.until > now() && sweeper.owner !== owner) return false;
      sweeper = { owner, until: now() + ttlMs };
      return true;
    },
    async sweepDone(owner, endedMs) {
      swept = Math.max(swept, endedMs);
      if (sweeper?.owner === owner) sweeper = undefined;
    },
    async markDue(batch, heardMs, atMs) {
      if (!due.has(batch)) due.set(batch, { batch, heardMs, tries: 0, atMs });
    },
    async takeDue(nowMs, leaseMs, limit) {
      const taken = [...due.values()].filter((d) => d.atMs <= nowMs).sort((a, b) => a.atMs - b.atMs).slice(0, limit);
      for (const d of taken) d.atMs = nowMs + leaseMs;
      return taken.map(({ batch, heardMs, tries }) => ({ batch, heardMs, tries }));
    },
    async dueAgain({ batch, tries }, atMs) {
      const d = due.get(batch);
      if (d) Object.assign(d, { atMs, tries });
    },
    async dueDone(batch) {
      due.delete(batch);
    },
  };
}
