/**
 * What the tests of a replica dying mid-write share (redis-restart-*-split-keep, redis-restart-refund-replica-lost,
 * refund-release-before-free): Redis refusing one kind of key to the service by an ACL, a shopper's calls, and
 * sending a key again until it is no longer held.
 */

import { execFileSync } from 'node:child_process';
import { startBff, type Bff } from './bff';
import type { PrivateRedis } from './private-redis';

/**
 * A service process (so that it can be SIGKILLed with what it keeps in memory) on its own Redis and key prefix, the
 * gateway 800 ms slow (Redis can go away while a write is at it), waits and timeouts short enough that a write's
 * lease (after which the reconciler looks) is about 16 s. `env` adds or overrides settings.
 */
export function startDyingService(redisUrl: string, prefix: string, env: Record<string, string> = {}): Promise<Bff> {
  return startBff({
    mode: 'process',
    env: {
      REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, GATEWAY_TIMEOUT_MS: '1500', LIMITER_SALE_MAX_WAIT_MS: '1000', LIMITER_READ_MAX_WAIT_MS: '1000',
      RECONCILE_INTERVAL_MS: '200', RECONCILE_RETRY_MS: '300', RECONCILE_MAX_PROCESSING_MS: '2000', ...env,
    },
    sandbox: { latencyMs: 800 },
  });
}

/**
 * ACL key patterns allowing every key of `prefix` but those whose name starts `{<prefix>:<word>` for one of `words`
 * (ACL key patterns are allow-lists: the complement of the words' prefixes, spelled as globs over a trie of them).
 * `words` name key families with their separator: `sale:` (sale records), `batch:`, `events}`, `idem:`.
 */
export function keysExcept(prefix: string, words: readonly string[]): string[] {
  const patterns = [`~${prefix}:*`];
  const walk = (at: string): void => {
    if (words.includes(at)) return;
    const next = [...new Set(words.filter((w) => w.startsWith(at) && w.length > at.length).map((w) => w[at.length] as string))];
    patterns.push(`~{${prefix}:${at}[^${next.join('')}]*`);
    for (const c of next) walk(at + c);
  };
  walk('');
  return patterns;
}

/** redis-server arguments that start it with `default` refused those keys (keysExcept) and allowed all else. */
export const startRefusing = (prefix: string, words: readonly string[]): string[] => ['--user', 'default', 'on', 'nopass', ...keysExcept(prefix, words), '&*', '+@all'];

/**
 * Redis (shut down while a write was at the gateway) comes back refusing `words`' keys to the service; once the
 * replica has kept what Redis takes (1.5 s), it is SIGKILLed, and Redis starts again whole before a new one starts.
 */
export async function backRefusingThenDie(redis: PrivateRedis, bff: Bff, prefix: string, words: readonly string[]): Promise<void> {
  await redis.start(startRefusing(prefix, words));
  await new Promise((r) => setTimeout(r, 1500));
  await bff.restart({ signal: 'SIGKILL', between: async () => { await redis.shutdown(); await redis.start(); } });
}

export interface Answer<Body> {
  status: number;
  headers: Headers;
  body: Body;
}

/** A caller of the service at `url()` with `bearer()`: JSON in and out, an Idempotency-Key when given. */
export function caller<Body>(url: () => string, bearer: () => string) {
  return async (method: string, path: string, body?: unknown, key?: string): Promise<Answer<Body>> => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer()}`, ...(body ? { 'content-type': 'application/json' } : {}), ...(key ? { 'idempotency-key': key } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Body };
  };
}

/** Sends again until the answer is none of `held` (409: in progress, then outcome_unknown until reconciled). */
export async function untilAnswered<A extends { status: number }>(send: () => Promise<A>, held: readonly number[] = [409]): Promise<A> {
  let last: A | undefined;
  for (let i = 0; i < 120; i++) {
    last = await send();
    if (!held.includes(last.status)) return last;
    await new Promise((r) => setTimeout(r, 500));
  }
  return last as A;
}

/** `ACL SETUSER default <args>` on the Redis at `redisUrl` (the service's user: which keys it may touch). */
export function setAcl(redisUrl: string, ...args: string[]): void {
  execFileSync('redis-cli', ['-u', redisUrl, 'ACL', 'SETUSER', 'default', ...args], { stdio: 'pipe' });
}

/** Reads every 400 ms until `done` holds or `ms` have passed; answers the last read (the test asserts on it). */
export async function readUntil<T>(read: () => Promise<T>, done: (t: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let last = await read();
  while (!done(last) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 400));
    last = await read();
  }
  return last;
}
