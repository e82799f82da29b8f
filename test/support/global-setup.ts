import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';
import { pingRedis } from './redis-process';

/**
 * Tests use a real Redis, by default one of their own (issue 41: the suite left 1,657 `{tgtest:…}` keys, 85 of
 * them with no expiry, in the developer's Redis at 6379): a `redis-server` started here on a free port with no
 * persistence, stopped in global-teardown, so nothing a run writes outlives it. TEST_REDIS_URL names an existing
 * Redis to use instead (a CI service, say); test files then isolate themselves with random key prefixes (never
 * FLUSHALL), and what a file leaves stays there. REDIS_URL, the service's own setting, is not read: a developer's
 * shell often sets it for `npm start`.
 */
function ping(url: string, timeoutMs = 1000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return pingRedis(hostname, Number(port || 6379), timeoutMs);
}

export default async function globalSetup(): Promise<void> {
  const given = process.env.TEST_REDIS_URL;
  if (given) {
    if (!(await ping(given))) throw new Error(`TEST_REDIS_URL=${given} does not answer PING`);
    process.env.REDIS_URL = given;
    return;
  }
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('redis-server is not on PATH: install Redis (the suite starts its own), or set TEST_REDIS_URL to one it may use');
  }
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore', detached: true });
  child.unref();
  const started = `redis://127.0.0.1:${port}`;
  // Waits for the server's first answer; the ceiling is a safety net for a box too busy to start it.
  const until = Date.now() + 20_000;
  while (!(await ping(started, 500))) {
    if (Date.now() > until) throw new Error('started redis-server but it does not answer');
    await new Promise((r) => setTimeout(r, 50));
  }
  process.env.REDIS_URL = started;
  process.env.TOKENGATE_TEST_REDIS_PID = String(child.pid);
}
