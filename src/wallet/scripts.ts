import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { luaIn, withScripts } from '../redis/scripts';

/** The Lua scripts of this folder as ioredis commands (lua/*.lua document their keys and arguments). */
export interface WalletCommands {
  tgWalletEnter(guard: string, pmkey: string, attempt: string, leaseMs: number, state: string): Promise<unknown>;
  tgWalletTombstone(guard: string, view: string, pmkey: string, tombstoneTtlMs: number, viewTtlMs: number): Promise<unknown>;
  tgWalletSending(guard: string, ...attempts: string[]): Promise<unknown>;
  tgWalletRefresh(view: string, guard: string, version: string, viewTtlMs: number, customer: string, ...methods: string[]): Promise<unknown>;
  tgWalletPutMethod(view: string, guard: string, pmkey: string, method: string, makeDefault: string, viewTtlMs: number): Promise<unknown>;
  tgWalletPutCustomer(view: string, guard: string, customer: string, created: string, viewTtlMs: number): Promise<unknown>;
  tgWalletSettleClaim(claim: string, attempt: string, custkey: string, ttlMs: number): Promise<unknown>;
  tgWalletReleaseClaim(claim: string, holder: string): Promise<unknown>;
}

export type ScriptedClient = (Redis | Cluster) & WalletCommands;

const lua = luaIn(path.join(__dirname, 'lua'));
const SCRIPTS = [
  lua('tgWalletEnter', 'enter.lua', 1),
  lua('tgWalletTombstone', 'tombstone.lua', 2),
  lua('tgWalletSending', 'sending.lua', 1),
  lua('tgWalletRefresh', 'refresh.lua', 2),
  lua('tgWalletPutMethod', 'put-method.lua', 2),
  lua('tgWalletPutCustomer', 'put-customer.lua', 2),
  lua('tgWalletSettleClaim', 'settle-claim.lua', 1),
  lua('tgWalletReleaseClaim', 'release-claim.lua', 1),
];

export function withWalletScripts(redis: Redis | Cluster): ScriptedClient {
  return withScripts<WalletCommands>(redis, SCRIPTS);
}
