import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { luaIn, withScripts } from '../redis/scripts';

/** The Lua scripts of this folder as ioredis commands. */
export interface SaleRecordCommands {
  /** `fields`: the sale's gateway fields as name, value pairs (fields.ts), spread after ttlMs. */
  tgSaleCreate(key: string, customer: string, state: string, authorized: number, captured: number, refunded: number, ttlMs: number, ...fields: string[]): Promise<unknown>;
  tgSaleReserve(key: string, op: string, reservation: string, amount: string): Promise<unknown>;
  tgSaleSettle(key: string, reservation: string, how: string, applied: string, refundKey: string, listed: string): Promise<unknown>;
  tgSaleDescribe(key: string, how: string, ...fields: string[]): Promise<unknown>;
  tgSaleObserve(key: string, wasRefunded: string, refunded: string, voided: string): Promise<unknown>;
  /** `external`: 'rx:<key>', '<refnum>|<cents>|<created>|<status>' pairs. */
  tgSaleRefresh(key: string, version: string, refunded: string, voided: string, settled: string, ...external: string[]): Promise<unknown>;
  /** `args`: the kind, then its values (lua/hear.lua). */
  tgSaleHear(key: string, ...args: string[]): Promise<unknown>;
  /** `saleKeys`: one or more sales of the batch. */
  tgSaleIndexBatch(batch: string, ttlMs: number, ...saleKeys: string[]): Promise<unknown>;
  tgSaleAch(key: string, status: string, returnCode: string, returnedAt: string): Promise<unknown>;
}

export type ScriptedClient = (Redis | Cluster) & SaleRecordCommands;

const lua = luaIn(path.join(__dirname, 'lua'));
const SCRIPTS = [
  lua('tgSaleCreate', 'create.lua', 1),
  lua('tgSaleReserve', 'reserve.lua', 1),
  lua('tgSaleSettle', 'settle.lua', 1),
  lua('tgSaleDescribe', 'describe.lua', 1),
  lua('tgSaleObserve', 'observe.lua', 1),
  lua('tgSaleRefresh', 'refresh.lua', 1),
  lua('tgSaleHear', 'hear.lua', 1),
  lua('tgSaleIndexBatch', 'index-batch.lua', 1),
  lua('tgSaleAch', 'ach.lua', 1),
];

export function withSaleRecordScripts(redis: Redis | Cluster): ScriptedClient {
  return withScripts<SaleRecordCommands>(redis, SCRIPTS);
}
