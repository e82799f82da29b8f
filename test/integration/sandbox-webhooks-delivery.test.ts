import { createHmac } from 'node:crypto';
import type { RunningSandbox } from '../../src/sandbox';
import { startSandbox } from '../support/time-shift';
import { callSandbox } from '../../src/sandbox/client';
import { freePort } from '../support/ports';
import { eventually, loopLag } from '../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * How the sandbox delivers the gateway's webhooks (gateway-facts.md, Webhooks): retries on the schedule after
 * a 4xx, 5xx, timeout or no connection, nothing after a 2xx, at most 20 connections per receiver, never in the
 * API's way; duplicates and disorder on demand; close() leaves nothing running.
 */

const SECRET = 'delivery-test-key';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('sandbox webhooks: delivery', () => {
  let sb: RunningSandbox;
  let receiver: WebhookReceiver;
  let seq = 0;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    sb = await startSandbox({ settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000, webhookSecret: SECRET } });
  });
  afterAll(async () => {
    await sb.close();
    await receiver.close();
  });
  beforeEach(() => {
    sb.reset();
    sb.update({ webhookUrls: [receiver.url], webhookRetryScheduleMs: [60_000], webhookTimeoutMs: 45_000, webhookDisorderMs: 0, webhookDuplicatePercent: 0, batchCloseIntervalMs: 0 });
    receiver.clear();
  });

  const sale = async () => {
    const r = await callSandbox(sb.baseUrl, 'POST', 'transactions', { body: { command: 'cc:sale', amount: '1.00', invoice: `d-${++seq}`, creditcard: { number: '4000100011112224', expiration: '1230', cvc: '123' } } });
    return (r.json as { key: string }).key;
  };
  const keyOf = (i: number) => receiver.hits[i]?.payload.event_body.object.key as string;

  it('when the receiver answers 503, then 404, then 200, then the tries follow the retry schedule and stop at the 2xx', async () => {
    // Distinct delays, so each gap shows which one was taken; a 4th try would follow 100 ms after the 2xx.
    sb.update({ webhookRetryScheduleMs: [200, 800, 100] });
    receiver.reply = (_hit, n) => (n === 1 ? 503 : n === 2 ? 404 : 200);
    const lag = loopLag();
    await sale();
    await eventually(() => receiver.hits.length >= 3);
    await sleep(500);
    // The sandbox and the receiver run in this process: a gap may grow by what its stalls cost (issue 41).
    const stalls = 2 * lag.maxMs();
    lag.stop();
    const hits = receiver.hits;
    expect(hits).toHaveLength(3);
    const [a, b, c] = hits.map((h) => h.at) as [number, number, number];
    expect(b - a).toBeGreaterThanOrEqual(190);
    expect(b - a).toBeLessThan(790 + stalls);
    expect(c - b).toBeGreaterThanOrEqual(790);
    expect(c - b).toBeLessThan(2500 + stalls);
    // Every try is the same event: same bytes, same signature.
    expect(new Set(hits.map((h) => h.raw.toString('utf8'))).size).toBe(1);
    expect(new Set(hits.map((h) => h.headers['x-signature'])).size).toBe(1);
    expect(hits[0]?.headers['x-signature']).toBe(createHmac('sha256', SECRET).update(hits[0]?.raw as Buffer).digest('hex'));
    expect(sb.webhooks.attempts().map(({ attempt, outcome, status, retryInMs }) => ({ attempt, outcome, status, retryInMs }))).toEqual([
      { attempt: 1, outcome: 'http_error', status: 503, retryInMs: 200 },
      { attempt: 2, outcome: 'http_error', status: 404, retryInMs: 800 },
      { attempt: 3, outcome: 'delivered', status: 200, retryInMs: undefined },
    ]);
  });

  it('when every try fails, then the sandbox gives up once the schedule is spent', async () => {
    sb.update({ webhookRetryScheduleMs: [50, 50] });
    receiver.reply = () => 500;
    await sale();
    await eventually(() => receiver.hits.length >= 3);
    await sleep(300);
    expect(receiver.hits).toHaveLength(3);
    expect(sb.webhooks.attempts().at(-1)).toMatchObject({ attempt: 3, outcome: 'http_error', gaveUp: true });
  });

  it('when the receiver does not answer within the read timeout, then the try fails as a timeout and is retried', async () => {
    sb.update({ webhookTimeoutMs: 200, webhookRetryScheduleMs: [100] });
    receiver.reply = (_hit, n) => (n === 1 ? 'hang' : 200);
    await sale();
    await eventually(() => receiver.hits.length >= 2 && sb.webhooks.attempts().length >= 2);
    const [first, second] = sb.webhooks.attempts();
    expect(first).toMatchObject({ attempt: 1, outcome: 'timeout', retryInMs: 100 });
    expect(first?.durationMs).toBeGreaterThanOrEqual(180);
    expect(second).toMatchObject({ attempt: 2, outcome: 'delivered' });
    expect((receiver.hits[1]?.at as number) - (receiver.hits[0]?.at as number)).toBeGreaterThanOrEqual(280);
  });

  it('when the receiver is down, then the event waits on the schedule and arrives once it is up', async () => {
    const port = await freePort();
    sb.update({ webhookUrls: [`http://127.0.0.1:${port}/hooks`], webhookRetryScheduleMs: [100, 100, 100, 100, 100, 100, 100, 100, 100, 100] });
    const key = await sale();
    await eventually(() => sb.webhooks.attempts().length >= 2);
    expect(sb.webhooks.attempts()[0]).toMatchObject({ outcome: 'unreachable', retryInMs: 100 });
    const late = await startWebhookReceiver(port);
    try {
      // The receiver has the body a moment before the sandbox has its answer.
      await eventually(() => late.hits.length === 1 && sb.webhooks.attempts().at(-1)?.outcome === 'delivered');
      expect(late.hits[0]?.payload.event_body.object.key).toBe(key);
    } finally {
      await late.close();
    }
  });

  it('when the receiver hangs, then API answers are not slowed and at most 20 connections are opened to it', async () => {
    const stuck = await startWebhookReceiver();
    stuck.reply = () => 'hang';
    sb.update({ webhookUrls: [stuck.url] });
    try {
      const slowest: number[] = [];
      for (let i = 0; i < 25; i++) {
        const started = Date.now();
        await sale();
        slowest.push(Date.now() - started);
      }
      // The posts are still open at the receiver while every sale has long been answered: none waited on its
      // post (45 s to time out); the ceiling has room for a busy box (issue 41: it was 1 s).
      expect(Math.max(...slowest)).toBeLessThan(15_000);
      await eventually(() => stuck.open === 20);
      await sleep(200);
      expect(stuck.connections).toBe(20);
      expect(stuck.maxOpen).toBe(20);
      expect(stuck.hits).toHaveLength(20);
    } finally {
      await stuck.close();
    }
  });

  it('when events are held, then release sends them in the order asked, an id named twice arriving twice', async () => {
    sb.webhooks.hold();
    const first = await sale();
    const second = await sale();
    const third = await sale();
    await sleep(150);
    expect(receiver.hits).toHaveLength(0);
    const ids = sb.webhooks.events().map((e) => e.event_id);
    expect(sb.webhooks.events().every((e) => e.held)).toBe(true);
    const attempts = await sb.webhooks.release([ids[2], ids[0], ids[2]] as string[]);
    expect([0, 1, 2].map(keyOf)).toEqual([third, first, third]);
    expect(receiver.hits[2]?.raw.equals(receiver.hits[0]?.raw as Buffer)).toBe(true);
    expect(attempts.map((a) => a.duplicate)).toEqual([false, false, true]);
    // Still holding: a new event waits too; resume() sends what is left, oldest first.
    const fourth = await sale();
    await sleep(100);
    expect(receiver.hits).toHaveLength(3);
    await sb.webhooks.resume();
    expect([3, 4].map(keyOf)).toEqual([second, fourth]);
    await sb.webhooks.redeliver(ids[1] as string);
    expect(receiver.hits[5]?.raw.toString()).toBe(receiver.hits[3]?.raw.toString());
    await expect(sb.webhooks.release(['no-such-event'])).rejects.toThrow('unknown event_id');
  });

  it('when events are held and released over the admin routes, then they arrive in the order posted', async () => {
    const admin = async (path: string, body?: unknown) => {
      const r = await fetch(new URL(`/_sandbox/webhooks${path}`, sb.url), { method: path ? 'POST' : 'GET', headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return { status: r.status, json: r.status === 204 ? undefined : ((await r.json()) as Record<string, unknown>) };
    };
    expect((await admin('/hold')).status).toBe(204);
    const first = await sale();
    const second = await sale();
    const listed = (await admin('')).json as { holding: boolean; events: { event_id: string; held: boolean; raw?: string }[] };
    expect(listed.holding).toBe(true);
    expect(listed.events.every((e) => e.held && e.raw === undefined)).toBe(true);
    const released = await admin('/release', { event_ids: [listed.events[1]?.event_id, listed.events[0]?.event_id] });
    expect(released.status).toBe(200);
    expect([0, 1].map(keyOf)).toEqual([second, first]);
    expect((await admin('/release', { event_ids: ['nope'] })).status).toBe(400);
    expect((await admin('/redeliver', { event_id: listed.events[0]?.event_id })).status).toBe(200);
    expect(keyOf(2)).toBe(first);
    expect((await admin('/resume')).status).toBe(200);
  });

  it('when the duplicate knob is at 100 percent, then every event arrives twice with the same id and bytes', async () => {
    sb.update({ webhookDuplicatePercent: 100 });
    await sale();
    await sale();
    await eventually(() => receiver.hits.length >= 4);
    await sleep(100);
    expect(receiver.hits).toHaveLength(4);
    const byId = new Map<string, string[]>();
    for (const h of receiver.hits) byId.set(h.payload.event_id, [...(byId.get(h.payload.event_id) ?? []), h.raw.toString('utf8')]);
    expect([...byId.values()].map((raws) => [raws.length, new Set(raws).size])).toEqual([[2, 1], [2, 1]]);
  });

  it('when the disorder knob is set, then a burst of events arrives in another order than it happened', async () => {
    sb.update({ webhookDisorderMs: 1000 });
    const keys: string[] = [];
    for (let i = 0; i < 20; i++) keys.push(await sale());
    await eventually(() => receiver.hits.length >= 20);
    const arrived = receiver.hits.map((h) => h.payload.event_body.object.key as string);
    expect([...arrived].sort()).toEqual([...keys].sort());
    // 20 draws of 0..1000 ms landing in the order of the sales: about 1 in 20! (2.4e18).
    expect(arrived).not.toEqual(keys);
  });

  it('when the batch close interval passes with webhooks on, then settlement.batch.success arrives without any call', async () => {
    sb.update({ batchCloseIntervalMs: 200 });
    await sale();
    await eventually(() => receiver.hits.length >= 2, 3000);
    expect(receiver.hits[1]?.payload).toMatchObject({ event_type: 'settlement.batch.success', event_body: { object: { type: 'batch', numsales: 1 } } }); // a JSON number, as the reference's example
  });

  it('when the sandbox closes, then its retry timers, batch timer and sockets are gone and nothing more is sent', async () => {
    const failing = await startWebhookReceiver();
    const stuck = await startWebhookReceiver();
    failing.reply = () => 500;
    stuck.reply = () => 'hang';
    // After the second try, a retry waits a minute; the batch timer runs as receivers are set.
    const own = await startSandbox({ settings: { webhookUrls: [failing.url, stuck.url], webhookRetryScheduleMs: [100, 60_000], batchCloseIntervalMs: 60_000 } });
    try {
      await callSandbox(own.baseUrl, 'POST', 'transactions', { body: { command: 'cc:sale', amount: '1.00', creditcard: { number: '4000100011112224', expiration: '1230', cvc: '123' } } });
      await eventually(() => own.webhooks.attempts().some((a) => a.retryInMs === 60_000) && stuck.openSockets() >= 1);
      const running = timeouts();
      await own.close();
      expect(timeouts()).toBeLessThanOrEqual(running - 2);
      await eventually(() => stuck.openSockets() === 0);
      const sent = failing.hits.length;
      await sleep(300);
      expect(failing.hits).toHaveLength(sent);
    } finally {
      await own.close();
      await failing.close();
      await stuck.close();
    }
  });

  it('when the port is taken, then a start with webhooks on fails without leaving its batch timer running', async () => {
    const before = timeouts();
    await expect(startSandbox({ port: sb.port, settings: { webhookUrls: [receiver.url], batchCloseIntervalMs: 60_000 } })).rejects.toThrow(/EADDRINUSE/);
    expect(timeouts()).toBeLessThanOrEqual(before);
  });
});
