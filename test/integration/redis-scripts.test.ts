import Redis from 'ioredis';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { withScripts } from '../../src/redis/scripts';
import { startPrivateRedis } from '../support/private-redis';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/** The Lua scripts every store runs: EVALSHA, and EVAL when Redis does not hold the script (restart, failover). */
const { prefix, redis } = suiteRedis('scripts');
let file: string;
beforeAll(() => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tg-lua-'));
  file = path.join(dir, 'incr-by.lua');
  // A source of its own (a unique comment), so no other suite's script shares its SHA.
  writeFileSync(file, `-- ${prefix}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])\n`);
});

type Commands = { tgTestIncrBy(key: string, by: number): Promise<number> };

test('when Redis has never seen a script, restarted, or forgot it mid-connection, then each call runs it exactly once', async () => {
  const server = await startPrivateRedis();
  const own = new Redis(server.url, { maxRetriesPerRequest: 1 });
  try {
    const client = withScripts<Commands>(own, [{ name: 'tgTestIncrBy', file, numberOfKeys: 1 }]);
    expect(await client.tgTestIncrBy('n', 2)).toBe(2); // EVAL: first use on this connection
    expect(await client.tgTestIncrBy('n', 3)).toBe(5); // EVALSHA
    await own.script('FLUSH'); // a Redis that lost its scripts under a live connection (this server is ours alone)
    expect(await client.tgTestIncrBy('n', 1)).toBe(6); // NOSCRIPT (not run), then EVAL
    await server.shutdown();
    await server.start(); // an empty Redis: no keys, no scripts
    await eventually(async () => (await own.ping().catch(() => '')) === 'PONG');
    expect(await client.tgTestIncrBy('n', 4)).toBe(4); // EVAL again on the new connection
    expect(await client.tgTestIncrBy('n', 1)).toBe(5);
    expect(await own.get('n')).toBe('5');
  } finally {
    own.disconnect();
    await server.stop();
  }
});

test('when a script fails for another reason, then the error reaches the caller and nothing is re-sent', async () => {
  const client = withScripts<Commands>(redis, [{ name: 'tgTestIncrBy', file, numberOfKeys: 1 }]);
  const key = `${prefix}:text`;
  await redis.set(key, 'not a number');
  await expect(client.tgTestIncrBy(key, 1)).rejects.toThrow(/not an integer/);
  expect(await redis.get(key)).toBe('not a number');
});

test('when scripts are added to a client, then auto-pipelined batches carry none of them (no per-batch copies)', async () => {
  const client = withScripts<Commands>(redis, [{ name: 'tgTestIncrBy', file, numberOfKeys: 1 }]);
  expect(Object.keys((client as unknown as { scriptsSet: object }).scriptsSet)).toEqual([]);
});
