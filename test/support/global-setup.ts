import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';
import { pingRedis } from './redis-process';

/**
 * Tests use a real Redis: the one at REDIS_URL (default redis://127.0.0.1:6379) when it answers PING,
 * otherwise a `redis-server` started here on a free port (stopped in global-teardown).
 * Test files isolate themselves with random key prefixes, never FLUSHALL.
 */
function ping(url: string, timeoutMs = 1000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return pingRedis(hostname, Number(port || 6379), timeoutMs);
}

export default async function globalSetup(): Promise<void> {
  const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  if (await ping(url)) {
    process.env.REDIS_URL = url;
    return;
  }
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error(`no Redis answers at ${url} and redis-server is not on PATH: install Redis or set REDIS_URL`);
  }
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore', detached: true });
  child.unref();
  const started = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (await ping(started, 200)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!(await ping(started))) throw new Error('started redis-server but it does not answer');
  process.env.REDIS_URL = started;
  process.env.TOKENGATE_TEST_REDIS_PID = String(child.pid);
}
