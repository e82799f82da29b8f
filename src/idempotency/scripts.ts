import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { luaIn, withScripts } from '../redis/scripts';

/** The Lua scripts of this folder as ioredis commands (EVALSHA after the first call on each connection). */
export interface IdempotencyCommands {
  tgIdemBegin(
    key: string, fp: string, attempt: string, leaseMs: number, retentionMs: number, invoice: string, resume: string,
    op: string, customer: string, sale: string, amount: string, paymentMethod: string, bankAuthorization: string, bankSec: string, save: string,
  ): Promise<unknown>;
  tgIdemComplete(key: string, attempt: string, response: string, retentionMs: number): Promise<unknown>;
  tgIdemMarkUnknown(key: string, attempt: string, invoice: string, reason: string, retentionMs: number): Promise<unknown>;
  tgIdemAbandon(key: string, attempt: string, retentionMs: number): Promise<unknown>;
  tgIdemInspect(key: string, retentionMs: number): Promise<unknown>;
  tgIdemResolve(key: string, attempts: number, response: string, retentionMs: number): Promise<unknown>;
  tgIdemRelease(key: string, attempts: number): Promise<unknown>;
  tgIdemNextLook(key: string, atMs: number): Promise<unknown>;
  tgIdemMarkFollowing(key: string): Promise<unknown>;
}

export type ScriptedClient = (Redis | Cluster) & IdempotencyCommands;

const lua = luaIn(path.join(__dirname, 'lua'));
const SCRIPTS = [
  lua('tgIdemBegin', 'begin.lua', 1),
  lua('tgIdemComplete', 'complete.lua', 1),
  lua('tgIdemMarkUnknown', 'mark-unknown.lua', 1),
  lua('tgIdemAbandon', 'abandon.lua', 1),
  lua('tgIdemInspect', 'inspect.lua', 1),
  lua('tgIdemResolve', 'resolve.lua', 1),
  lua('tgIdemRelease', 'release.lua', 1),
  lua('tgIdemNextLook', 'next-look.lua', 1),
  lua('tgIdemMarkFollowing', 'mark-following.lua', 1),
];

export function withIdempotencyScripts(redis: Redis | Cluster): ScriptedClient {
  return withScripts<IdempotencyCommands>(redis, SCRIPTS);
}
