import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { luaIn, withScripts } from '../redis/scripts';

/** The Lua scripts of this folder as ioredis commands. */
export interface SettlementCommands {
  tgSettleClaim(settlement: string, claim: string, owner: string, ttlMs: number): Promise<unknown>;
  /** `numKeys` = 4 + the held index keys, which follow `open` (lua/save.lua). */
  tgSettleSave(numKeys: number, settlement: string, list: string, claim: string, open: string, ...heldThenArgs: Array<string | number>): Promise<unknown>;
  tgSettleRelease(claim: string, owner: string): Promise<unknown>;
  tgSettleAmend(settlement: string, open: string, lines: string, openLines: string, ttlMs: number): Promise<unknown>;
  tgSettleSweepClaim(last: string, claim: string, owner: string, dueSinceMs: number, ttlMs: number): Promise<unknown>;
  tgSettleSweepDone(last: string, claim: string, owner: string, endedMs: number, ttlMs: number): Promise<unknown>;
}

const lua = luaIn(path.join(__dirname, 'lua'));
const SCRIPTS = [
  lua('tgSettleClaim', 'claim.lua', 2), lua('tgSettleSave', 'save.lua', -1), lua('tgSettleRelease', 'release.lua', 1),
  lua('tgSettleAmend', 'amend.lua', 2), lua('tgSettleSweepClaim', 'sweep-claim.lua', 2), lua('tgSettleSweepDone', 'sweep-done.lua', 2),
];

export function withSettlementScripts(redis: Redis | Cluster): (Redis | Cluster) & SettlementCommands {
  return withScripts<SettlementCommands>(redis, SCRIPTS);
}
