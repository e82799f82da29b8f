import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';

/** One Lua file as an ioredis command: `name` becomes a method taking `numberOfKeys` keys, then the ARGV. */
export interface ScriptSpec {
  name: string;
  /** Path of the .lua file (next to the module in src/ and, after the build copies it, in dist/). */
  file: string;
  numberOfKeys: number;
}

const sources = new Map<string, string>();

/**
 * Defines each script as an ioredis command once per client (ioredis then sends EVALSHA, loading the script
 * on NOSCRIPT) and returns the client typed with those commands. Each .lua file is read once per process.
 */
export function withScripts<Commands>(redis: Redis | Cluster, specs: readonly ScriptSpec[]): (Redis | Cluster) & Commands {
  // defineCommand adds methods ioredis' types cannot know about.
  const methods = redis as unknown as Record<string, unknown>;
  for (const { name, file, numberOfKeys } of specs) {
    if (typeof methods[name] === 'function') continue;
    let lua = sources.get(file);
    if (lua === undefined) {
      lua = readFileSync(file, 'utf8');
      sources.set(file, lua);
    }
    redis.defineCommand(name, { lua, numberOfKeys });
  }
  return redis as (Redis | Cluster) & Commands;
}

/** The spec of a .lua file in `dir`. */
export const luaIn = (dir: string) => (name: string, file: string, numberOfKeys: number): ScriptSpec => ({ name, file: path.join(dir, file), numberOfKeys });
