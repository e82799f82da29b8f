import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunningSandbox } from '../../src/sandbox';
import { startSandbox } from '../support/time-shift';
import { callSandbox } from '../../src/sandbox/client';
import { eventually } from '../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * The sandbox's daily close (gateway-facts.md, Batches and settlement: "once a day, at the merchant's configured
 * time, or on request"): `batchCloseAt` ("HH:MM", UTC) on the sandbox's own clock, by a wall-clock timer and at
 * each jump of the clock; and a close that fails on request, with the reference's `settlement.batch.failure`.
 */
const DAY = 86_400_000;
const REFERENCE = JSON.parse(readFileSync(path.join(__dirname, '../fixtures/gateway-webhooks/reference-examples.json'), 'utf8')) as { examples: Record<string, { event_body: { object: Record<string, unknown> } }> };

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

describe('the sandbox\'s daily close', () => {
  let sb: RunningSandbox;
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    sb = await startSandbox({ settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000, webhookUrls: [receiver.url], webhookSecret: 'close-secret' } });
  });
  afterEach(async () => {
    await sb.close();
    await receiver.close();
  });

  const sale = async () => {
    const pm = sb.fixtures.paymentMethods(sb.fixtures.firstCustomer().key).find((m) => m.number.endsWith('2224'));
    return (await callSandbox(sb.baseUrl, 'POST', 'transactions', { body: { command: 'cc:sale', amount: '4.00', creditcard: { number: pm?.cardref ?? '', cvc: '' } } })).json as { key: string; batch: { key: string } };
  };
  const batch = async (key: string) => (await callSandbox(sb.baseUrl, 'GET', `batches/${key}`)).json as { status: string; closed?: string };
  const successes = () => receiver.hits.filter((h) => h.payload.event_type === 'settlement.batch.success');

  it('when the clock jumps past the close time, then the open batch closes at that time of day, its webhook sent without a call, and the next one closes a day later', async () => {
    // The close two hours ahead of the sandbox's clock, on a whole minute.
    const closeAt = hhmm(sb.clock.now() + 2 * 3600_000);
    sb.update({ batchCloseAt: closeAt });
    const first = await sale();
    sb.clock.advance(3 * 3600_000);
    await eventually(() => successes().length === 1);
    expect(successes()[0]?.payload.event_body.object.key).toBe(first.batch.key);
    const closed = await batch(first.batch.key);
    expect(closed.status).toBe('closed');
    expect(closed.closed?.slice(11, 16)).toBe(closeAt);
    expect(sb.ledger.get(first.key)?.state).toBe('settled');

    const second = await sale();
    expect(second.batch.key).not.toBe(first.batch.key);
    sb.clock.advance(DAY);
    await eventually(() => successes().length === 2);
    expect((await batch(second.batch.key)).closed?.slice(11, 16)).toBe(closeAt);
  });

  it('when the close time comes by the wall clock, then the batch closes by its timer with no call and no jump', async () => {
    // The clock moved to 8 s before a whole minute, and the close set at that minute.
    const now = sb.clock.now();
    const minute = Math.ceil((now + 9_000) / 60_000) * 60_000;
    sb.clock.advance(minute - 8_000 - now);
    sb.update({ batchCloseAt: hhmm(minute) });
    const { key } = await sale();
    await eventually(() => successes().length === 1, 40_000);
    expect(sb.ledger.get(key)?.state).toBe('settled');
  });

  it('when a close is asked to fail, then settlement.batch.failure carries the reference\'s fields (response E, reason) and the batch stays open, closing later with its sales', async () => {
    const { key, batch: b } = await sale();
    const res = await fetch(`${sb.url}/_sandbox/batches/close`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fail: 'Unexpected error closing batch' }) });
    expect(await res.json()).toEqual({ key: b.key, failed: true });
    await eventually(() => receiver.hits.some((h) => h.payload.event_type === 'settlement.batch.failure'));
    const failure = receiver.hits.find((h) => h.payload.event_type === 'settlement.batch.failure')?.payload.event_body.object as Record<string, unknown>;
    const reference = REFERENCE.examples['settlement.batch.failure']?.event_body.object as Record<string, unknown>;
    expect(Object.keys(failure).sort()).toEqual(Object.keys(reference).sort());
    expect(failure).toMatchObject({ type: 'batch', key: b.key, response: 'E', reason: 'Unexpected error closing batch', uri: `batches/${b.key}` });
    expect((await batch(b.key)).status).toBe('open');
    expect(sb.ledger.get(key)?.state).toBe('unsettled');
    expect(sb.ledger.closeBatch()).toBe(b.key);
    expect(sb.ledger.get(key)?.state).toBe('settled');
  });
});
