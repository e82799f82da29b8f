import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox';
import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/** Polls `check` until it holds or `withinMs` passed: the bound is the test here (`eventually` waits at least 60 s). */
async function within(withinMs: number, check: () => Promise<boolean>): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/**
 * A closed batch's webhook answered by a replica that dies reading it (the sentinel soak of 2026-11-28:
 * replica-3 answered settlement.batch.success and was SIGKILLed 3 s later, mid-read; the gateway does not resend
 * an answered webhook). The batch is due in Redis before the answer, and another replica reads it within seconds,
 * with the periodic look off.
 */
const SECRET = 'gateway-webhook-signature-key-for-durable-settlements';
const FINANCE = 'settlements:read customers:any';

async function consoleEntry(sandbox: RunningSandbox, body: object): Promise<string> {
  const res = await fetch(new URL('/_sandbox/batches/current/console', sandbox.baseUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { key: string }).key;
}

describe('settlements: a webhook\'s read outlives its replica', () => {
  const { prefix } = suiteRedis('settle-durable');
  let bff: Bff;

  beforeAll(async () => {
    // No look: only the webhook (and what it left in Redis) can bring the read about.
    bff = await startBff({ mode: 'process', env: { REDIS_KEY_PREFIX: prefix, GATEWAY_WEBHOOK_SECRET: SECRET, SETTLEMENTS_LOOK_MS: '0' } });
  });
  afterAll(() => bff.stop());

  it('when the replica that answered a batch\'s settlement.batch.success is SIGKILLed mid-read, then another replica keeps the settlement within seconds (before: its claim held 5 minutes and nothing else would read it until the next look)', async () => {
    const survivor = await bff.replica();
    const kept = async (batch: string) => (await request(survivor.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${token({ sub: 'durable', scope: FINANCE })}`)).status === 200;
    // The webhooks go to the replica that dies only.
    bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
    const sale = await consoleEntry(bff.sandbox, { kind: 'sale', amount: '4.00' });
    // Its first read of the batch hangs (until the gateway timeout): it is killed meanwhile, holding the claim.
    bff.sandbox.faults.next({ kind: 'hang', match: 'batches' });
    const batch = bff.sandbox.ledger.closeBatch();
    await eventually(() => bff.sandbox.faults.pending().length === 0, 15_000);
    // Its claim lasts 10 s unrenewed and the due batch's lease 10 s; the others take due batches every 2 s.
    let keptInTime = false;
    let notYetAtKill = false;
    await bff.restart({
      signal: 'SIGKILL',
      between: async () => {
        notYetAtKill = !(await kept(batch));
        keptInTime = await within(25_000, () => kept(batch));
      },
    });
    expect(notYetAtKill).toBe(true);
    expect(keptInTime).toBe(true);
    const res = await request(survivor.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${token({ sub: 'durable', scope: FINANCE })}`);
    expect((res.body.lines as Array<{ transaction: string }>).map((l) => l.transaction)).toEqual([sale]);
  });
});
