import { spawn, execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';
import { pingRedis } from './redis-process';

/**
 * A redis-server of this test file alone, so it can be shut down and restarted without touching the shared
 * Redis (never stopped, never flushed). No persistence: `shutdown nosave` loses every key, as a crashed
 * cache-only Redis would.
 */
export interface PrivateRedis {
  port: number;
  url: string;
  /** `redis-cli -p <port> shutdown nosave` (with AOF, the AOF is still written out); resolves once the process has exited. */
  shutdown(): Promise<void>;
  /**
   * Starts redis-server again on the same port and waits for PING. `extraArgs`: more settings for this run only
   * (e.g. `--user default on nopass <key patterns> &* +@all`: the service's connection refused some keys).
   */
  start(extraArgs?: readonly string[]): Promise<void>;
  /** Shutdown (if running) and remove the data directory. */
  stop(): Promise<void>;
}

/** Whether `redis-server` can be started here (suites that need their own Redis skip, saying so, when not). */
export function canStartRedis(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    process.stderr.write('redis-server is not on PATH: suites that restart their own Redis are skipped\n');
    return false;
  }
}

const ping = (port: number) => pingRedis('127.0.0.1', port);

/** `aof: true`: appendonly with appendfsync everysec, as docs/deploy.md asks of production, so a restart keeps the data. */
export async function startPrivateRedis({ aof = false }: { aof?: boolean } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-private-redis-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  async function start(extraArgs: readonly string[] = []): Promise<void> {
    const persistence = aof ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--dir', dir, ...extraArgs], { stdio: 'ignore' });
    child = proc;
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      if (await ping(port)) return;
      if (proc.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    proc.kill('SIGKILL');
    throw new Error(`redis-server on port ${port} did not answer PING`);
  }

  async function shutdown(): Promise<void> {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => execFile('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], () => resolve()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    shutdown,
    start,
    async stop() {
      await shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
