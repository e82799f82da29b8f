import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Cluster } from 'ioredis';
import request from 'supertest';
import { buildService, type Service } from '../../src/compose';
import { loadConfig } from '../../src/config';
import { CapturingStream, createLogger } from '../../src/observability/logger';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { TEST_JWT_ENV, token } from '../support/bff';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';

/**
 * The whole service in cluster mode: buildService from REDIS_CLUSTER_NODES (a 3-master cluster on loopback) in
 * front of a sandbox. A sale goes through the budget, token cache and idempotency store on the cluster, and its
 * replay comes from the cluster without a second charge.
 */
let cluster: RedisCluster | undefined;
let sandbox: RunningSandbox | undefined;
let service: Service | undefined;
let api: http.Server | undefined;
let admin: http.Server | undefined;
let url: string;
let adminUrl: string;

async function serve(app: http.RequestListener): Promise<[http.Server, string]> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return [server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`];
}

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
  sandbox = await startSandbox({ port: 0, settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000 } });
  const config = loadConfig({
    env: {
      NODE_ENV: 'test',
      REDIS_CLUSTER_NODES: cluster.nodesEnv,
      GATEWAY_BASE_URL: sandbox.baseUrl,
      GATEWAY_TIMEOUT_MS: '3000',
      GATEWAY_RATE_PER_MINUTE: '100000',
      GATEWAY_RATE_PER_DAY: '1000000',
      LIMITER_SALE_RESERVED_SLOTS: '0',
      ...TEST_JWT_ENV,
    },
  });
  const logger = createLogger({ level: 'warn', stream: new CapturingStream() });
  service = await buildService(config, logger);
  [api, url] = await serve(service.app);
  [admin, adminUrl] = await serve(service.admin);
});

afterAll(async () => {
  service?.startDraining();
  for (const server of [api, admin]) {
    server?.closeAllConnections();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
  }
  await service?.close();
  await sandbox?.close();
  await cluster?.stop();
});

test('when REDIS_CLUSTER_NODES is set, then the service connects a Cluster client and reports ready', async () => {
  expect(service?.redis).toBeInstanceOf(Cluster);
  expect((await request(adminUrl).get('/readyz')).status).toBe(200);
});

test('when a sale is approved and then replayed with the same key, then the replay comes from the cluster and the gateway charged once', async () => {
  const s = sandbox as RunningSandbox;
  const customer = s.fixtures.firstCustomer().key;
  const pm = (s.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
  const invoice = `cl-${Date.now().toString(36)}`;
  const bearer = token({ sub: 'cluster-user', custkey: customer, scope: 'sales:create' });
  const sale = () =>
    request(url)
      .post('/v1/sales')
      .set('Authorization', `Bearer ${bearer}`)
      .set('Idempotency-Key', `idem-${invoice}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ customer, payment_method: pm, amount: '7.00', invoice }));

  const first = await sale();
  expect(first.status).toBe(201);
  expect(first.body).toMatchObject({ result_code: 'A', invoice });
  const replay = await sale();
  expect(replay.status).toBe(201);
  expect(replay.body).toEqual(first.body);
  expect(s.transactions().filter((t) => t.invoice === invoice)).toHaveLength(1);

  // The budget, token cache and idempotency keys sit on the cluster (hash-tagged, so possibly one slot each).
  const counts = await Promise.all((service?.redis as Cluster).nodes('master').map((node) => node.dbsize()));
  expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
});

test('when a sale\'s commands are issued in one tick on the cluster, then they share one pipelined write per node, as on a single Redis', async () => {
  // A sale issues its claim, tracking, budget slot and token read in one tick (src/writes/protocol.ts) so that
  // ioredis sends them in one write; the Cluster client only does so with auto-pipelining on its own options
  // (the nodes' options are not enough): without, each command was a socket write of its own.
  const r = service?.redis as Cluster;
  const tag = `{pipe-${Date.now().toString(36)}}`;
  // Counted from what this tick already queued: a background loop (the settlement due set's, every 2 s) may have
  // queued a command of its own earlier in the same turn.
  const before = r.autoPipelineQueueSize;
  const replies = [r.set(`${tag}:a`, '1'), r.set(`${tag}:b`, '2'), r.get(`${tag}:a`)];
  expect(r.autoPipelineQueueSize - before).toBe(3);
  expect(await Promise.all(replies)).toEqual(['OK', 'OK', '1']);
});
