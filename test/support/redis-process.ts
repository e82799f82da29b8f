import { execFile, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { promisify } from 'node:util';

/** Helpers shared by the harnesses that run their own redis-server processes (private, cluster, sentinel). */

const run = promisify(execFile);

/** True when a Redis at host:port answers PING within the timeout. */
export function pingRedis(host: string, port: number, timeoutMs = 300): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** One redis-cli command against 127.0.0.1:port; resolves with its stdout. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5000 });
  return stdout;
}

/** SHUTDOWN NOSAVE on every port (clean exit), then SIGKILL whatever is left, then remove the data dir. */
export async function stopRedisProcesses(ports: readonly number[], children: readonly ChildProcess[], dir: string): Promise<void> {
  await Promise.all(ports.map((p) => redisCli(p, 'SHUTDOWN', 'NOSAVE').catch(() => undefined)));
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 1000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
        }),
    ),
  );
  rmSync(dir, { recursive: true, force: true });
}
