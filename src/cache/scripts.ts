import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';

/** The Lua scripts of this folder as ioredis commands (EVALSHA after the first call on each connection). */
export interface CacheCommands {
  tgCacheGetOrLock(value: string, lock: string, owner: string, lockTtlMs: number): Promise<unknown>;
  tgCacheFillAndUnlock(value: string, lock: string, owner: string, json: string, ttlMs: number): Promise<unknown>;
  tgCacheUnlock(lock: string, owner: string): Promise<unknown>;
  tgCacheExtendLock(lock: string, owner: string, lockTtlMs: number): Promise<unknown>;
}

export type ScriptedClient = (Redis | Cluster) & CacheCommands;

const SCRIPTS: Array<[keyof CacheCommands, string, number]> = [
  ['tgCacheGetOrLock', 'get-or-lock.lua', 2],
  ['tgCacheFillAndUnlock', 'fill-and-unlock.lua', 2],
  ['tgCacheUnlock', 'unlock.lua', 1],
  ['tgCacheExtendLock', 'extend-lock.lua', 1],
];

let sources: Map<string, string> | undefined;
const defined = new WeakSet<object>();

/** Reads the .lua files once per process (next to this file in src/ and, after the build, in dist/). */
function lua(file: string): string {
  sources ??= new Map(SCRIPTS.map(([, f]) => [f, readFileSync(path.join(__dirname, 'lua', f), 'utf8')]));
  return sources.get(file) as string;
}

export function withCacheScripts(redis: Redis | Cluster): ScriptedClient {
  if (!defined.has(redis)) {
    for (const [name, file, numberOfKeys] of SCRIPTS) redis.defineCommand(name, { lua: lua(file), numberOfKeys });
    defined.add(redis);
  }
  return redis as ScriptedClient;
}
