import { createRequire } from 'node:module';
import path from 'node:path';
import type { Redis } from 'ioredis';

/**
 * Redis Cluster refuses a MULTI whose commands touch keys of more than one hash slot (CROSSSLOT), and ioredis'
 * Cluster client refuses a pipeline whose keys live on more than one node; a single Redis runs both, so neither
 * shows in tests on one node. This checks it there: every `multi()` and `pipeline()` of the returned client
 * records its commands, and `exec()` first asks Redis which arguments of each are keys (`COMMAND GETKEYS`, the
 * server's key specs), then fails with `CROSSSLOT <keys>` (running nothing) when they fall in more than one slot.
 * A pipeline is held to one slot too: which slots share a node is the cluster's layout, not the code's.
 * The slot is the one ioredis' Cluster client routes by (its `cluster-key-slot`): a single Redis has no
 * `CLUSTER KEYSLOT`. Each checked transaction's call site (file:line under src/) is recorded for
 * `checkedSites()`. The wrapped client owns its connection.
 */
export const keySlot = createRequire(require.resolve('ioredis'))('cluster-key-slot') as (key: string) => number;

const SRC = `${path.sep}src${path.sep}`;
const sites = new Set<string>();

/** The `src/…:line` sites whose transactions ran through a checking client of this process. */
export function checkedSites(): ReadonlySet<string> {
  return sites;
}

/** The first stack frame under src/ (as `src/dir/file.ts:line`): who called multi() or pipeline(). */
function callSite(): string | undefined {
  for (const line of (new Error().stack ?? '').split('\n').slice(1)) {
    const m = /\(?([^\s()]+):(\d+):\d+\)?$/.exec(line.trim());
    if (!m || !m[1]?.includes(SRC) || m[1].includes(`${path.sep}node_modules${path.sep}`)) continue;
    return `src/${m[1].slice(m[1].lastIndexOf(SRC) + SRC.length).split(path.sep).join('/')}:${m[2]}`;
  }
  return undefined;
}

type Arg = string | number | Buffer;
const flat = (args: unknown[]): Arg[] => args.flat(Infinity).filter((a): a is Arg => typeof a === 'string' || typeof a === 'number' || Buffer.isBuffer(a));

/** The keys of one command, as Redis reads them; none for a command without key arguments. */
async function keysOf(redis: Redis, name: string, args: Arg[]): Promise<string[]> {
  try {
    const keys = (await redis.call('COMMAND', 'GETKEYS', name, ...args)) as unknown[];
    return keys.map(String);
  } catch (err) {
    if (err instanceof Error && /no key arguments|Invalid arguments/i.test(err.message)) return [];
    throw err;
  }
}

// Methods of a Pipeline that queue nothing.
const NOT_COMMANDS = new Set(['exec', 'then', 'length', 'addBatch', 'constructor']);

function checking(redis: Redis, real: object, site: string | undefined): object {
  const queued: Array<{ name: string; args: Arg[] }> = [];
  const proxy: object = new Proxy(real, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      const fn = value as (...a: unknown[]) => unknown;
      if (prop === 'exec') {
        return async (...a: unknown[]) => {
          const keys = new Map<string, number>();
          for (const { name, args } of queued) for (const key of await keysOf(redis, name, args)) keys.set(key, keySlot(key));
          if (site) sites.add(site);
          if (new Set(keys.values()).size > 1) {
            (target as { discard?: () => void }).discard?.();
            throw new Error(`CROSSSLOT ${[...keys].map(([k, s]) => `${k} (slot ${s})`).join(', ')}${site ? ` at ${site}` : ''}`);
          }
          return fn.apply(target, a);
        };
      }
      if (NOT_COMMANDS.has(prop)) return fn.bind(target);
      return (...a: unknown[]) => {
        queued.push({ name: prop, args: flat(a) });
        const out = fn.apply(target, a);
        return out === target ? proxy : out;
      };
    },
  });
  return proxy;
}

/**
 * `redis` with some of its members replaced: every other member is the client's own, methods bound to it, and
 * what a caller sets on the proxy (withScripts' methods) is kept on the proxy, not on the shared client.
 */
export function overriding(redis: Redis, overrides: Readonly<Record<PropertyKey, unknown>>): Redis {
  const own = new Map<PropertyKey, unknown>();
  return new Proxy(redis, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(overrides, prop)) return overrides[prop];
      if (own.has(prop)) return own.get(prop);
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    set(_target, prop, value) {
      own.set(prop, value);
      return true;
    },
  });
}

export function sameSlotOnly(redis: Redis): Redis {
  const wrap = (make: (...a: unknown[]) => object) => (...a: unknown[]) => checking(redis, make(...a), callSite());
  return overriding(redis, {
    multi: wrap((...a) => (redis.multi as (...x: unknown[]) => object)(...a)),
    pipeline: wrap((...a) => (redis.pipeline as (...x: unknown[]) => object)(...a)),
  });
}
