import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { luaIn, withScripts } from '../redis/scripts';

/** The Lua scripts of this folder as commands (lua/*.lua document their keys and arguments). */
export interface SubscriptionCommands {
  tgSubCreate(record: string, due: string, customer: string, key: string, json: string, dueMs: string, ttlMs: number, createdMs: number): Promise<[number, string]>;
  tgSubSwap(record: string, due: string, key: string, version: string, json: string, dueMs: string, ttlMs: number): Promise<number>;
  tgSubRelease(claim: string, owner: string): Promise<number>;
}

const lua = luaIn(path.join(__dirname, 'lua'));
const SCRIPTS = [lua('tgSubCreate', 'create.lua', 3), lua('tgSubSwap', 'swap.lua', 2), lua('tgSubRelease', 'release.lua', 1)];

export function withSubscriptionScripts(redis: Redis | Cluster): (Redis | Cluster) & SubscriptionCommands {
  return withScripts<SubscriptionCommands>(redis, SCRIPTS);
}
