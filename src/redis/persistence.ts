import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../observability/logger';

export interface NodePersistence {
  /** host:port as ioredis knows it. */
  node: string;
  /** `aof_enabled` of INFO persistence; undefined when INFO is not allowed (managed services may refuse). */
  aof: boolean | undefined;
}

function nodeName(r: Redis): string {
  const o = r.options;
  return `${o.host ?? '?'}:${o.port ?? '?'}`;
}

/** AOF on each node that holds keys: the single node, the Sentinel-chosen master, or every Cluster master. */
export async function redisPersistence(redis: Redis | Cluster): Promise<NodePersistence[]> {
  const nodes = redis.isCluster ? (redis as Cluster).nodes('master') : [redis as Redis];
  return Promise.all(
    nodes.map(async (node) => {
      try {
        const m = /^aof_enabled:(\d)/m.exec(await node.info('persistence'));
        return { node: nodeName(node), aof: m ? m[1] === '1' : undefined };
      } catch {
        return { node: nodeName(node), aof: undefined };
      }
    }),
  );
}

/**
 * Idempotency records live only in Redis: a Redis that restarts without its data forgets finished keys, and a
 * client's retry then charges again (docs/deploy.md, "Redis topologies"; faults-process demonstrates it). Only an
 * append-only file keeps writes of the last second; RDB snapshots alone lose minutes. Says so at boot, loudly
 * in production, and never blocks the start (persistence may be handled where INFO cannot see it).
 */
export async function warnWithoutPersistence(redis: Redis | Cluster, logger: Logger, production: boolean): Promise<NodePersistence[]> {
  const report = await redisPersistence(redis);
  const off = report.filter((n) => n.aof === false).map((n) => n.node);
  const unknown = report.filter((n) => n.aof === undefined).map((n) => n.node);
  const log = production ? logger.warn.bind(logger) : logger.debug.bind(logger);
  if (off.length > 0) {
    log('redis has no append-only file: after a restart it forgets finished idempotency keys, and a retried sale could charge twice', { nodes: off, fix: 'appendonly yes, appendfsync everysec' });
  }
  if (unknown.length > 0) log('could not read redis persistence settings (INFO refused); make sure AOF is on', { nodes: unknown });
  return report;
}
