import type { Registry } from 'prom-client';
import type { SettlementsConfig } from '../config/types';
import type { EventSink } from '../events/types';
import type { Logger } from '../observability/logger';
import type { RedisClient } from '../redis/connect';
import { createBankReview, type BankReview } from './bank-review';
import { createSettlementLook, type SettlementLook } from './look';
import { createMemorySettlementStore } from './memory-settlement-store';
import { createSettlementMetrics } from './metrics';
import { createRedisSettlementStore } from './redis-settlement-store';
import { createSettler, type Settler, type SettlerDeps } from './settle-batch';
import { createMissingSweep, type MissingSweepDeps } from './sweep-missing';
import { isOwnCredit } from './match';
import type { Settlement, SettlementStore } from './types';

export interface SettlementsDeps {
  redis?: RedisClient;
  keyPrefix: string;
  config: SettlementsConfig;
  gateway: SettlerDeps['gateway'];
  budget: SettlerDeps['budget'];
  records: SettlerDeps['records'] & MissingSweepDeps['records'];
  events: EventSink;
  appended?: () => void;
  registry: Registry;
  logger: Logger;
  /** tokengate's clock: the records' stamps (synchronous) and the sweep's (the test clock, asynchronous). */
  now: () => number;
  clockNow: () => Promise<number>;
  /** Whether a write begun before `heardMs` is still in flight or unknown (SettlerDeps.unresolved). */
  unresolved: (heardMs: number) => Promise<boolean>;
}

export interface Settlements {
  store: SettlementStore;
  settler: Settler;
  look: SettlementLook;
  /** Bank lines (open until the return window ends; a return changes the line at once). */
  bank: BankReview;
}

/**
 * The settlements (issue 39), wired: each closed batch read once (a claim in Redis), in the background class, on the
 * gateway's settlement.batch.success and at a look (SETTLEMENTS_LOOK_MS) at the batches closed since the last one
 * kept; `missing` found by a daily sweep (one replica, SETTLEMENTS_MISSING_AFTER_MS after a batch was first seen);
 * bank lines reviewed until SETTLEMENTS_BANK_RETURN_WINDOW_MS. The look is started; `look.stop()` ends it.
 */
export function createSettlements(deps: SettlementsDeps): Settlements {
  const { config, records, events, appended, logger } = deps;
  const store = deps.redis ? createRedisSettlementStore({ redis: deps.redis, keyPrefix: deps.keyPrefix }) : createMemorySettlementStore();
  const metrics = createSettlementMetrics(deps.registry);
  const bank = createBankReview({ store, records, events, appended, metrics, logger, now: deps.now, windowMs: config.bankReturnWindowMs });
  // Settlements kept before the held index existed, or before credits joined it, join it once. A credit's return
  // heard meanwhile was kept but found no line: each settlement with credits of tokengate's is looked at again once
  // indexed (a failure leaves the line to the return's redelivery).
  const lookAgain = async (s: Settlement): Promise<void> => {
    if (!s.lines.some(isOwnCredit)) return;
    await bank.kept(s).catch((err: unknown) => logger.warn('settlements: could not look at a backfilled settlement again', { batch: s.batch, error: err instanceof Error ? err.name : 'error' }));
  };
  void store.backfillHeld(lookAgain).catch((err: unknown) => logger.warn('settlements: the held index backfill failed', { error: err instanceof Error ? err.name : 'error' }));
  const settler = createSettler({
    store, gateway: deps.gateway, budget: deps.budget, records, events, appended, metrics, logger,
    unresolved: deps.unresolved, now: deps.now, bankReturnWindowMs: config.bankReturnWindowMs, kept: (settlement) => bank.kept(settlement),
  });
  const sweep = createMissingSweep({
    store, records, settler, events, appended, metrics, logger, now: deps.clockNow,
    missingAfterMs: config.missingAfterMs, everyMs: config.sweepEveryMs, bank,
  });
  const look = createSettlementLook({ settler, everyMs: config.lookMs, logger, sweep, metrics, due: store });
  look.start();
  return { store, settler, look, bank };
}
