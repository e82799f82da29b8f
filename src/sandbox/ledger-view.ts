import type { SandboxCore } from './core';
import type { FollowUpRecord, LedgerEntry } from './lifecycle';

/** The payment lifecycle as tests judge it: what each transaction holds, captured, refunded; every follow-up processed. */
export interface SandboxLedger {
  /** A processed sale, authonly or refund by key (undefined for unknown keys and E answers). */
  get(key: string): LedgerEntry | undefined;
  /** Every transaction, newest first. */
  entries(): LedgerEntry[];
  /** Every follow-up the sandbox processed (approved, refused or folded), oldest first. */
  operations(): FollowUpRecord[];
  /** Closes the open batch now (as POST batches/current/close): its transactions are settled. Returns its key. */
  closeBatch(): string;
  /** The open batch's close fails (`settlement.batch.failure` with `reason`): it stays open. Returns its key. */
  failBatchClose(reason: string): string;
}

export function ledgerView(core: SandboxCore): SandboxLedger {
  const life = core.lifecycle;
  // The batch timer is applied lazily (lifecycle.ts), so a read from a test sees it as a call would.
  const tick = () => life.tick(core.clock.now(), core.settings);
  return {
    get: (key) => (tick(), life.entry(key)),
    entries: () => (tick(), life.all().map((t) => life.entry(t.key) as LedgerEntry)),
    operations: () => life.operations(),
    closeBatch: () => life.closeBatch(core.clock.now()).key,
    failBatchClose: (reason) => life.failClose(core.clock.now(), reason).key,
  };
}
