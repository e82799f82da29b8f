import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Cluster, Redis } from 'ioredis';

/** One Lua file as an ioredis command: `name` becomes a method taking `numberOfKeys` keys, then the ARGV. */
export interface ScriptSpec {
  name: string;
  /** Path of the .lua file (next to the module in src/ and, after the build copies it, in dist/). */
  file: string;
  /** -1: as many as the call's first argument says (a script over a varying number of keys). */
  numberOfKeys: number;
}

const sources = new Map<string, { lua: string; sha: string }>();

/** Redis answers EVALSHA of a script it does not hold (a restart, a failover, a new node) with NOSCRIPT. */
const isNoScript = (err: unknown) => err instanceof Error && err.message.startsWith('NOSCRIPT');

/** Counts the client's connections ('ready' events), so each script goes as EVAL first on each new one. */
const connections = new WeakMap<Redis | Cluster, { n: number }>();
function connectionsOf(redis: Redis | Cluster): { n: number } {
  let c = connections.get(redis);
  if (!c) {
    const counter = { n: 0 };
    redis.on('ready', () => {
      counter.n += 1;
    });
    connections.set(redis, counter);
    c = counter;
  }
  return c;
}

/**
 * Adds each script to the client once as a method taking `numberOfKeys` keys, then the ARGV. Like ioredis'
 * own scripts: the first call on each connection sends EVAL with the source (which loads it, so calls keep
 * their order after a reconnect to a Redis that lost its scripts), later calls EVALSHA; a NOSCRIPT answer
 * (the script did not run: a Cluster node or a Redis that forgot it mid-connection) is sent again as EVAL.
 * Each .lua file is read once per process.
 *
 * Not ioredis' defineCommand: with auto-pipelining, ioredis builds a Pipeline per tick and its constructor
 * copies every defined script onto it (two properties each, 16 scripts here), which was 8 % of the bytes a
 * sale allocated and a visible share of its CPU (bench/ab-sale.js). EVALSHA and EVAL are plain commands: they
 * pipeline the same way and route by their first key on a Cluster.
 */
export function withScripts<Commands>(redis: Redis | Cluster, specs: readonly ScriptSpec[]): (Redis | Cluster) & Commands {
  const methods = redis as unknown as Record<string, unknown>;
  const connection = connectionsOf(redis);
  for (const { name, file, numberOfKeys } of specs) {
    if (typeof methods[name] === 'function') continue;
    let source = sources.get(file);
    if (source === undefined) {
      const lua = readFileSync(file, 'utf8');
      source = { lua, sha: hash('sha1', lua, 'hex') };
      sources.set(file, source);
    }
    const { lua, sha } = source;
    let sentOn = -1;
    methods[name] = (...call: Array<string | number>): Promise<unknown> => {
      const keys = numberOfKeys < 0 ? Number(call[0]) : numberOfKeys;
      const args = numberOfKeys < 0 ? call.slice(1) : call;
      if (sentOn !== connection.n) {
        sentOn = connection.n;
        return redis.eval(lua, keys, ...args);
      }
      return redis.evalsha(sha, keys, ...args).catch((err: unknown) => {
        if (!isNoScript(err)) throw err;
        return redis.eval(lua, keys, ...args);
      });
    };
  }
  return redis as (Redis | Cluster) & Commands;
}

/** The spec of a .lua file in `dir`. */
export const luaIn = (dir: string) => (name: string, file: string, numberOfKeys: number): ScriptSpec => ({ name, file: path.join(dir, file), numberOfKeys });
