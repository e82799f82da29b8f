/** Settlements: closed batches read once and matched line by line with tokengate's records (issue 39). */
export { createRedisSettlementStore } from './redis-settlement-store';
export { createMemorySettlementStore } from './memory-settlement-store';
export { createSettler, type Settler, type SettleOutcome } from './settle-batch';
export { createSettlementMetrics } from './metrics';
export { createSettlementLook, type SettlementLook } from './look';
export { settlementsCsv } from './csv';
export { VERDICTS, type Settlement, type SettlementLine, type SettlementStore, type SettlementSummary, type Verdict } from './types';
export { createMissingSweep, type MissingSweep } from './sweep-missing';
export { createBankReview, type BankReview } from './bank-review';
export { createSettlements, type Settlements } from './service';
