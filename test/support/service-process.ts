import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './ports';
import { imageNodeArgs } from './image';

export const ROOT = path.resolve(__dirname, '..', '..');
export const DIST_MAIN = path.join(ROOT, 'dist', 'main.js');

export interface ServiceProcess {
  url: string;
  adminUrl: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM (or the given signal) and wait for exit; resolves with the exit code or signal. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `node dist/main.js` (the compiled service, as the Docker image runs it) with the given environment,
 * waits until /readyz answers 200 on the admin port. Build first (`npm run build`); the e2e suites check.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  /** `waitFor: 'healthz'` for a service started degraded on purpose (e.g. Redis down at boot: /readyz answers as soon as the port listens, waiting for it proves nothing more). */
  options: { readyTimeoutMs?: number; entry?: string; waitFor?: 'readyz' | 'healthz' } = {},
): Promise<ServiceProcess> {
  const entry = options.entry ?? DIST_MAIN;
  if (!existsSync(entry)) throw new Error(`${path.relative(ROOT, entry)} is missing: run \`npm run build\` first`);
  const port = env.PORT ?? String(await freePort());
  const adminPort = env.ADMIN_PORT ?? String(await freePort());
  const child = spawn(process.execPath, [...imageNodeArgs(), entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env, PORT: port, ADMIN_PORT: adminPort },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  // A ceiling, not a bound: a replica on a busy 2-core machine (three booting at once beside a test run) can take
  // well over 15 s; the loop ends as soon as /readyz answers or the process exits.
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60000);
  let ready = false;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      const res = await fetch(`${adminUrl}/${options.waitFor ?? 'readyz'}`);
      if (res.status === 200) {
        ready = true;
        break;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!ready) {
    child.kill('SIGKILL');
    throw new Error(`service did not become ready:\n${out.slice(-4000)}`);
  }
  return {
    url,
    adminUrl,
    child,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/**
 * Runs `node dist/main.js` with exactly this environment (PATH aside) until it exits, for starts that must
 * fail: a refused configuration, a taken port. Rejects if it is still running after `timeoutMs`.
 */
export function runServiceToExit(env: Record<string, string>, timeoutMs = 15_000): Promise<{ code: number | null; out: string; err: string }> {
  if (!existsSync(DIST_MAIN)) throw new Error('dist/main.js is missing: run `npm run build` first');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DIST_MAIN], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}
