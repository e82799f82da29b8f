import { loadConfig } from '../../src/config';
import { silentLogger } from '../../src/observability/logger';
import type { RunningSandbox } from '../../src/sandbox';
import { startSandbox } from '../support/time-shift';
import { callSandbox } from '../../src/sandbox/client';
import { clockDrivingSandbox, startEmbeddedSandbox } from '../../src/sandbox/embedded';
import { createTestClock } from '../../src/subscriptions/clock';
import { eventually } from '../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * The sandbox's own clock (contract, "Subscriptions": `POST /_sandbox/clock`; src/sandbox/clock.ts): its dates move
 * forward when told, what falls due meanwhile (the batch timer) happens at once, webhooks included, and the sandbox
 * tokengate embeds follows tokengate's `/test/clock`. The rate windows stay on the wall clock.
 */
const DAY = 86_400_000;

describe('the sandbox\'s clock', () => {
  let sb: RunningSandbox;
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    sb = await startSandbox({ settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000, webhookUrls: [receiver.url], webhookSecret: 'clock-secret', batchCloseIntervalMs: DAY } });
  });
  afterEach(async () => {
    await sb.close();
    await receiver.close();
  });

  const admin = (method: string, body?: unknown) => fetch(`${sb.url}/_sandbox/clock`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
  const sale = async () => {
    const pm = sb.fixtures.paymentMethods(sb.fixtures.firstCustomer().key).find((m) => m.number.endsWith('2224'));
    return (await callSandbox(sb.baseUrl, 'POST', 'transactions', { body: { command: 'cc:sale', amount: '4.00', creditcard: { number: pm?.cardref ?? '', cvc: '' } } })).json as { key: string };
  };

  it('when a test moves it forward, then GET answers the new time and a transaction made afterwards is dated by it', async () => {
    const before = Date.parse(((await (await admin('GET')).json()) as { now: string }).now);
    const moved = await admin('POST', { advance_ms: 3 * DAY });
    expect(moved.status).toBe(200);
    const now = Date.parse(((await moved.json()) as { now: string }).now);
    expect(now - before).toBeGreaterThanOrEqual(3 * DAY);
    const { key } = await sale();
    const looked = (await callSandbox(sb.baseUrl, 'GET', `transactions/${key}`)).json as { created: string };
    // The look-up's `created` has whole seconds ("2026-11-30 09:15:02").
    expect(Date.parse(`${looked.created.replace(' ', 'T')}Z`)).toBeGreaterThanOrEqual(before + 3 * DAY - 1000);
  });

  it('when the clock passes the batch timer, then the open batch closes at once and its settlement webhook is sent without any call', async () => {
    const { key } = await sale();
    expect(sb.ledger.get(key)?.state).not.toBe('settled');
    await admin('POST', { advance_ms: DAY + 1000 });
    expect(sb.ledger.get(key)?.state).toBe('settled');
    await eventually(() => receiver.hits.some((h) => h.payload.event_type === 'settlement.batch.success'));
  });

  it('when a test asks to move it backwards or by a non-integer, then it answers 400 and the time stays', async () => {
    const before = sb.clock.offsetMs;
    for (const advance_ms of [-1, 1.5, '60000', null]) expect((await admin('POST', { advance_ms })).status).toBe(400);
    expect(sb.clock.offsetMs).toBe(before);
  });

  it('when the clock moves, then the rate windows do not: a day ahead, the minute\'s budget is still spent', async () => {
    await sb.close();
    sb = await startSandbox({ settings: { ratePerMinute: 2, ratePerDay: 1_000_000 } });
    await sale();
    await sale();
    sb.clock.advance(DAY);
    const refused = await callSandbox(sb.baseUrl, 'GET', 'transactions/none');
    expect(refused.status).toBe(429);
  });
});

describe('the embedded sandbox\'s clock', () => {
  it('when tokengate\'s test clock moves, then the sandbox it embeds reads the same time', async () => {
    const config = loadConfig({ env: { NODE_ENV: 'development' } });
    const sandbox = await startEmbeddedSandbox(config, silentLogger());
    try {
      const clock = clockDrivingSandbox(createTestClock({ keyPrefix: 'clock-test' }), sandbox);
      const now = await clock.advance(2 * DAY);
      expect(sandbox.clock.offsetMs).toBe(await clock.offset());
      expect(Math.abs(sandbox.clock.now() - now)).toBeLessThan(60_000);
      expect(sandbox.clock.offsetMs).toBeGreaterThanOrEqual(2 * DAY);
    } finally {
      await sandbox.close();
    }
  });
});
