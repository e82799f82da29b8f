import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';

/** The Lua scripts of this folder as ioredis commands (EVALSHA after the first call on each connection). */
export interface IdempotencyCommands {
  tgIdemBegin(key: string, fp: string, attempt: string, leaseMs: number, retentionMs: number, invoice: string, resume: string): Promise<unknown>;
  tgIdemComplete(key: string, attempt: string, response: string, retentionMs: number): Promise<unknown>;
  tgIdemMarkUnknown(key: string, attempt: string, invoice: string, reason: string, retentionMs: number): Promise<unknown>;
  tgIdemAbandon(key: string, attempt: string, retentionMs: number): Promise<unknown>;
}

export type ScriptedClient = (Redis | Cluster) & IdempotencyCommands;

const SCRIPTS: Array<[keyof IdempotencyCommands, string]> = [
  ['tgIdemBegin', 'begin.lua'],
  ['tgIdemComplete', 'complete.lua'],
  ['tgIdemMarkUnknown', 'mark-unknown.lua'],
  ['tgIdemAbandon', 'abandon.lua'],
];

let sources: Map<string, string> | undefined;
const defined = new WeakSet<object>();

/** Reads the .lua files once per process (next to this file in src/ and, after the build, in dist/). */
function lua(file: string): string {
  sources ??= new Map(SCRIPTS.map(([, f]) => [f, readFileSync(path.join(__dirname, 'lua', f), 'utf8')]));
  return sources.get(file) as string;
}

export function withIdempotencyScripts(redis: Redis | Cluster): ScriptedClient {
  if (!defined.has(redis)) {
    for (const [name, file] of SCRIPTS) redis.defineCommand(name, { lua: lua(file), numberOfKeys: 1 });
    defined.add(redis);
  }
  return redis as ScriptedClient;
}
