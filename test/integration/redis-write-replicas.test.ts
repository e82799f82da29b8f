import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { startBff, token, type Bff } from '../support/bff';
import { redisCli } from '../support/redis-process';
import { startRedisSentinel, type RedisSentinel } from '../support/redis-sentinel';

/**
 * Found by the soak (issue 28, `npm run soak -- --mode sentinel`): Redis replication is asynchronous, so a
 * Sentinel failover right after the master took a write's claim lost the claim; the client's retry on the new
 * master claimed the key again and the sale was sent twice (one double charge in 90 s), and keys that had answered
 * 201 replayed other answers. With REDIS_WRITE_REPLICAS=1 a write's claim is on a replica before the gateway is
 * called (Redis WAIT), so a master whose replica cannot hold it sends nothing: 503, and the key stays free.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The WAIT commands a Redis has run (INFO commandstats). */
const waitCalls = (info: string) => Number(/^cmdstat_wait:calls=(\d+)/m.exec(info)?.[1] ?? 0);
const run = randomBytes(3).toString('hex');

/**
 * Until the master's replica acknowledges writes: its sync done (a full sync waits out Redis' diskless delay,
 * 5 s) and its first acknowledgement in (WAIT answers 0 for a moment after "online").
 */
async function replicaAcknowledges(port: number): Promise<void> {
  const probe = new Redis(port, { lazyConnect: true });
  await probe.connect();
  try {
    for (let i = 0; i < 200; i++) {
      await probe.set(`tgtest:replicas:${run}`, String(i), 'PX', 60_000);
      if (Number(await probe.wait(1, 100)) === 1) return;
      await sleep(50);
    }
    throw new Error('the replica did not acknowledge writes');
  } finally {
    probe.disconnect();
  }
}

describe('REDIS_WRITE_REPLICAS: a write waits for a replica to hold its claim', () => {
  let sentinel: RedisSentinel;
  let bff: Bff;
  let customer: string;
  let pm: string;
  let bearer: string;

  beforeAll(async () => {
    sentinel = await startRedisSentinel({ replicas: 1 });
    bff = await startBff({
      env: { REDIS_SENTINELS: sentinel.sentinelsEnv, REDIS_SENTINEL_NAME: sentinel.name, REDIS_WRITE_REPLICAS: '1', REDIS_WRITE_REPLICAS_TIMEOUT_MS: '1000' },
    });
    await replicaAcknowledges(sentinel.master.port);
    customer = bff.sandbox.fixtures.firstCustomer().key;
    pm = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    bearer = token({ sub: `replicas-${run}`, custkey: customer, scope: 'sales:create sales:read' });
  });

  afterAll(async () => {
    await bff?.stop();
    await sentinel?.stop();
  });

  const sell = (key: string, invoice: string) =>
    fetch(`${bff.url}/v1/sales`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ customer, payment_method: pm, amount: '9.00', invoice }),
    });
  const charges = (invoice: string) => bff.sandbox.transactions().filter((t) => t.invoice === invoice);

  it('when the replica holds the claim, then the sale goes through once', async () => {
    const res = await sell(`ok-${run}`, `ok${run}`);
    expect(res.status).toBe(201);
    expect(charges(`ok${run}`)).toHaveLength(1);
  });

  it('when no replica can hold writes, then a burst of sales is refused at once and reads beside it still answer', async () => {
    const first = (await (await sell(`read-${run}`, `rd${run}`)).json()) as { key: string };
    const { master, replicas: [replica] } = sentinel;
    await redisCli(replica!.port, 'REPLICAOF', 'NO', 'ONE');
    try {
      // WAIT holds the connection it is sent on for its whole timeout (1 s here): were each of these sales to
      // send one, they would queue one behind the other, and every read of this replica behind them all. Counted
      // at the master, not timed (issue 41: ceilings of 4 and 5 s short of those 6 s told a busy box from the queue badly).
      const waitsBefore = waitCalls(await redisCli(master.port, 'INFO', 'commandstats'));
      const burst = Array.from({ length: 6 }, (_, i) => sell(`burst-${i}-${run}`, `b${i}${run}`));
      await sleep(100);
      const read = await fetch(`${bff.url}/v1/sales/${first.key}`, { headers: { authorization: `Bearer ${bearer}` } });
      const answers = await Promise.all(burst);
      expect(read.status).toBe(200);
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(503));
      for (let i = 0; i < 6; i++) expect(charges(`b${i}${run}`)).toHaveLength(0);
      // One WAIT for the six (the others shared it, or were refused at once once it came back short): the read
      // could queue behind that one at most.
      expect(waitCalls(await redisCli(master.port, 'INFO', 'commandstats')) - waitsBefore).toBe(1);
    } finally {
      await redisCli(replica!.port, 'REPLICAOF', master.host, String(master.port));
    }
    await replicaAcknowledges(master.port);
  });

  it('when no replica can hold the claim, then nothing is sent (503) and the same key later charges once', async () => {
    const { master, replicas: [replica] } = sentinel;
    // The replica leaves: the master has nobody to acknowledge its writes.
    await redisCli(replica!.port, 'REPLICAOF', 'NO', 'ONE');
    try {
      const refused = await sell(`gone-${run}`, `go${run}`);
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unavailable');
      expect(charges(`go${run}`)).toHaveLength(0);
    } finally {
      await redisCli(replica!.port, 'REPLICAOF', master.host, String(master.port));
    }
    await replicaAcknowledges(master.port);
    // As a client does with 503: again, same key, while the Sentinel may still be resyncing the replica it saw
    // leave (each try that finds no replica sends nothing).
    let retried = await sell(`gone-${run}`, `go${run}`);
    for (let i = 0; i < 30 && retried.status === 503; i++) {
      await sleep(500);
      retried = await sell(`gone-${run}`, `go${run}`);
    }
    expect(retried.status).toBe(201);
    expect(charges(`go${run}`)).toHaveLength(1);
  });
});
