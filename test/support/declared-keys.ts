import type { Redis } from 'ioredis';
import { keySlot, overriding } from './same-slot';

/**
 * Redis requires a script to name in KEYS every key it touches (EVAL's documentation; Redis Cluster and its
 * proxies route and lock by them), but a plain Redis, and a Cluster node for a key of its own slot, run a script
 * that does not: neither tells. This checks it on a real Redis: every script sent through the returned client
 * runs with each `redis.call` / `redis.pcall` first asking Redis which of its arguments are keys
 * (`COMMAND GETKEYS`, the server's own key specs) and failing with `UNDECLARED <key>` for one not in KEYS.
 * The client's EVALSHA always answers NOSCRIPT, so src/redis/scripts.ts sends each script as EVAL, rewritten.
 * Its KEYS must also share one hash slot (`CROSSSLOT` otherwise, as Redis Cluster answers).
 * The wrapped client owns its connection (a script method added to it never reaches another client).
 */
const PREAMBLE = `
local __declared = {}
for _, k in ipairs(KEYS) do __declared[k] = true end
local function __check(...)
  local ok, keys = pcall(redis.call, 'COMMAND', 'GETKEYS', ...)
  if not ok or type(keys) ~= 'table' then return end
  for _, k in ipairs(keys) do
    if not __declared[k] then error('UNDECLARED ' .. k .. ' (' .. tostring((...)) .. ')') end
  end
end
local function __call(...) __check(...) return redis.call(...) end
local function __pcall(...) __check(...) return redis.pcall(...) end
`;

/** The script as the checking client sends it. */
export function checkingDeclaredKeys(lua: string): string {
  return PREAMBLE + lua.replace(/\bredis\.pcall\b/g, '__pcall').replace(/\bredis\.call\b/g, '__call');
}

/** Every script source a checking client of this process has sent (test/integration/declared-keys.test.ts asks). */
const ranChecked = new Set<string>();

/** Whether `lua` (a .lua file's text, as src/redis/scripts.ts sends it) was sent through a checking client here. */
export function ranDeclaredKeysCheck(lua: string): boolean {
  return ranChecked.has(lua);
}

export function declaredKeysOnly(redis: Redis): Redis {
  const evalChecked = (lua: string, numKeys: number | string, ...args: Array<string | number | Buffer>) => {
    ranChecked.add(lua);
    // Its KEYS in one slot, too: Redis Cluster refuses a script over several (CROSSSLOT); a single Redis does not.
    const keys = args.slice(0, Number(numKeys)).map(String);
    if (new Set(keys.map(keySlot)).size > 1) return Promise.reject(new Error(`CROSSSLOT ${keys.join(', ')}`));
    return redis.eval(checkingDeclaredKeys(lua), numKeys, ...args);
  };
  const evalshaNever = () => Promise.reject(new Error('NOSCRIPT the checking client sends every script as EVAL'));
  return overriding(redis, { eval: evalChecked, evalsha: evalshaNever });
}
