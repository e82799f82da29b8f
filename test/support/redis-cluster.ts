import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bindable } from './ports';
import { redisCli, stopRedisProcesses } from './redis-process';

/**
 * A throwaway Redis Cluster on loopback for tests: N masters, no replicas, nothing persisted, in a temp dir.
 * Needs `redis-server` and `redis-cli` on PATH (Redis >= 5 for `redis-cli --cluster`).
 */

const run = promisify(execFile);

export interface RedisCluster {
  nodes: { host: string; port: number }[];
  /** "127.0.0.1:p1,127.0.0.1:p2,..." — the REDIS_CLUSTER_NODES form. */
  nodesEnv: string;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

/**
 * Free ports whose cluster-bus port (port + 10000) is free too: 7000-9999, so both stay below the ephemeral range
 * and the bus ports below the 20000-32000 that test/support/ports.ts hands out.
 */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; attempt < 500 && ports.length < count; attempt++) {
    const port = 7000 + Math.floor(Math.random() * 3000);
    if (ports.includes(port) || ports.includes(port + 10000) || ports.includes(port - 10000)) continue;
    if ((await bindable(port)) && (await bindable(port + 10000))) ports.push(port);
  }
  if (ports.length < count) throw new Error('no free port pairs (port, port + 10000) for a Redis Cluster');
  return ports;
}

const cli = redisCli;

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Redis Cluster: timed out waiting for ${what}`);
}

export async function startRedisCluster({ masters = 3 }: { masters?: number } = {}): Promise<RedisCluster> {
  if (masters < 3) throw new Error('redis-cli --cluster create needs at least 3 masters');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-redis-cluster-'));
  const ports = await freePorts(masters);
  const children: ChildProcess[] = [];
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // SHUTDOWN NOSAVE first (clean exit), then SIGKILL whatever is left, so no test leaks a server.
    await stopRedisProcesses(ports, children, dir);
  };

  try {
    for (const port of ports) {
      const child = spawn(
        'redis-server',
        ['--cluster-enabled', 'yes', '--port', String(port), '--cluster-config-file', path.join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '2000', '--save', '', '--appendonly', 'no', '--bind', HOST, '--dir', dir],
        { stdio: 'ignore' },
      );
      children.push(child);
      child.once('error', () => undefined); // ENOENT surfaces below as a clear message
    }
    await waitFor('redis-server to answer PING (is redis-server on PATH?)', 5000, async () => {
      const answers = await Promise.all(ports.map((p) => cli(p, 'PING')));
      return answers.every((a) => a.trim() === 'PONG');
    });
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `${HOST}:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 10_000 });
    await waitFor('cluster_state:ok on every node', 8000, async () => {
      const infos = await Promise.all(ports.map((p) => cli(p, 'CLUSTER', 'INFO')));
      return infos.every((info) => info.includes('cluster_state:ok'));
    });
  } catch (err) {
    await stop();
    throw err;
  }

  const nodes = ports.map((port) => ({ host: HOST, port }));
  return { nodes, nodesEnv: nodes.map((n) => `${n.host}:${n.port}`).join(','), stop };
}
