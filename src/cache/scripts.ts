import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { luaIn, withScripts } from '../redis/scripts';

/** The Lua scripts of this folder as ioredis commands (EVALSHA after the first call on each connection). */
export interface CacheCommands {
  tgCacheGetOrLock(value: string, lock: string, owner: string, lockTtlMs: number): Promise<unknown>;
  tgCacheFillAndUnlock(value: string, lock: string, owner: string, json: string, ttlMs: number): Promise<unknown>;
  tgCacheUnlock(lock: string, owner: string): Promise<unknown>;
  tgCacheExtendLock(lock: string, owner: string, lockTtlMs: number): Promise<unknown>;
}

export type ScriptedClient = (Redis | Cluster) & CacheCommands;

const lua = luaIn(path.join(__dirname, 'lua'));
const SCRIPTS = [
  lua('tgCacheGetOrLock', 'get-or-lock.lua', 2),
  lua('tgCacheFillAndUnlock', 'fill-and-unlock.lua', 2),
  lua('tgCacheUnlock', 'unlock.lua', 1),
  lua('tgCacheExtendLock', 'extend-lock.lua', 1),
];

export function withCacheScripts(redis: Redis | Cluster): ScriptedClient {
  return withScripts<CacheCommands>(redis, SCRIPTS);
}
