import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { redisCli, stopRedisProcesses } from './redis-process';
import { freePort } from './ports';

/**
 * A throwaway Sentinel setup on loopback: one master, optional replicas, one sentinel watching them (quorum 1),
 * nothing persisted, in a temp dir. Needs `redis-server` (sentinel mode is `redis-server <conf> --sentinel`,
 * shipped with it) and `redis-cli` on PATH. Never touches the shared Redis.
 */

const HOST = '127.0.0.1';

export interface RedisSentinel {
  /** The master name sentinels know it by (REDIS_SENTINEL_NAME). */
  name: string;
  master: { host: string; port: number };
  replicas: { host: string; port: number }[];
  sentinel: { host: string; port: number };
  /** "127.0.0.1:p" — the REDIS_SENTINELS form. */
  sentinelsEnv: string;
  /** Asks the sentinel which node is master now. */
  currentMaster(): Promise<{ host: string; port: number }>;
  /** Forces a failover to a replica and resolves once the sentinel names a new master. */
  failover(timeoutMs?: number): Promise<{ host: string; port: number }>;
  stop(): Promise<void>;
}

const cli = redisCli;

async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Redis Sentinel: timed out waiting for ${what}`);
}

export async function startRedisSentinel({ replicas = 0, name = 'tgmaster' }: { replicas?: number; name?: string } = {}): Promise<RedisSentinel> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-redis-sentinel-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await stopRedisProcesses(ports, children, dir);
  };

  const server = (args: string[]): void => {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    child.once('error', () => undefined); // ENOENT surfaces below as a timeout with a hint
    children.push(child);
  };

  const currentMaster = async () => {
    const [host, port] = (await cli(sentinelPort, 'SENTINEL', 'get-master-addr-by-name', name)).trim().split('\n');
    if (!host || !port) throw new Error(`sentinel does not know ${name}`);
    return { host, port: Number(port) };
  };

  let sentinelPort = 0;
  try {
    const masterPort = await freePort();
    const replicaPorts: number[] = [];
    for (let i = 0; i < replicas; i++) replicaPorts.push(await freePort());
    sentinelPort = await freePort();
    const base = ['--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir];
    server(['--port', String(masterPort), ...base]);
    ports.push(masterPort);
    for (const p of replicaPorts) {
      server(['--port', String(p), '--replicaof', HOST, String(masterPort), ...base]);
      ports.push(p);
    }
    await waitFor('redis-server to answer PING (is redis-server on PATH?)', 5000, async () => {
      const answers = await Promise.all(ports.map((p) => cli(p, 'PING')));
      return answers.every((a) => a.trim() === 'PONG') ? true : undefined;
    });
    // Sentinel learns replicas from the master's INFO, refreshed every 10 s: attach them before it starts, so
    // its first INFO already lists them.
    await waitFor('the replicas to attach to the master', 8000, async () => ((await cli(masterPort, 'INFO', 'replication')).includes(`connected_slaves:${replicas}`) ? true : undefined));
    // Sentinel rewrites its config file at run time, so it must be a real writable file.
    const conf = path.join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [`port ${sentinelPort}`, `bind ${HOST}`, `dir ${dir}`, `sentinel monitor ${name} ${HOST} ${masterPort} 1`, `sentinel down-after-milliseconds ${name} 1000`, `sentinel failover-timeout ${name} 5000`, ''].join('\n'),
    );
    server([conf, '--sentinel']);
    ports.push(sentinelPort);
    await waitFor('the sentinel to name the master', 5000, async () => ((await currentMaster()).port === masterPort ? true : undefined));
    if (replicas > 0) {
      await waitFor('the sentinel to see the replicas', 8000, async () => {
        const listed = await cli(sentinelPort, 'SENTINEL', 'replicas', name);
        return replicaPorts.every((p) => listed.includes(String(p))) ? true : undefined;
      });
    }

    return {
      name,
      master: { host: HOST, port: masterPort },
      replicas: replicaPorts.map((port) => ({ host: HOST, port })),
      sentinel: { host: HOST, port: sentinelPort },
      sentinelsEnv: `${HOST}:${sentinelPort}`,
      currentMaster,
      async failover(timeoutMs = 10_000) {
        const before = await currentMaster();
        // NOGOODSLAVE until the sentinel has its first INFO from the replica: ask again for a while.
        await waitFor('SENTINEL FAILOVER to be accepted', timeoutMs, async () => ((await cli(sentinelPort, 'SENTINEL', 'FAILOVER', name)).trim() === 'OK' ? true : undefined));
        return waitFor('a new master after SENTINEL FAILOVER', timeoutMs, async () => {
          const now = await currentMaster();
          if (now.port === before.port) return undefined;
          // Promoted when it answers as master, not just when the sentinel says so.
          return (await cli(now.port, 'ROLE')).startsWith('master') ? now : undefined;
        });
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
