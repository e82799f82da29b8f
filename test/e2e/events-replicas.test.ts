import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { TEST_JWT_ENV, token } from '../support/bff';
import { redisUrl, uniquePrefix } from '../support/redis';
import { startReplicas, type Replicas } from '../support/replicas';
import { eventually } from '../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * Issue 27, "Done when": a delivery resumed after every replica that knew the event was killed. Two replicas of
 * `node dist/main.js` share Redis; the receiver holds the first delivery open (no answer), both replicas are
 * SIGKILLed while it waits, and a third one started afterwards, which never saw the sale, delivers the event
 * (same id, still verifiable) once it falls due.
 */
describe('payment events survive the death of every replica', () => {
  const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
  let sandbox: RunningSandbox;
  let receiver: WebhookReceiver;
  let replicas: Replicas;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000 } });
    receiver = await startWebhookReceiver();
    replicas = await startReplicas(2, {
      NODE_ENV: 'test',
      REDIS_URL: redisUrl(),
      REDIS_KEY_PREFIX: uniquePrefix('ev-replicas').replace(/[^A-Za-z0-9:_-]/g, '_'),
      GATEWAY_BASE_URL: sandbox.baseUrl,
      GATEWAY_RATE_PER_MINUTE: '100000',
      GATEWAY_RATE_PER_DAY: '1000000',
      LIMITER_SALE_RESERVED_SLOTS: '0',
      EVENTS_WEBHOOK_URLS: receiver.url,
      EVENTS_WEBHOOK_SECRET: SECRET,
      EVENTS_RETRY_SCHEDULE_MS: '100,100',
      EVENTS_TIMEOUT_MS: '1000',
      EVENTS_POLL_MS: '50',
      ...TEST_JWT_ENV,
    });
  }, 120_000);

  afterAll(async () => {
    await replicas?.stop();
    await receiver?.close();
    await sandbox?.close();
  });

  it('when both replicas are killed while the event\'s first delivery hangs, then a new replica delivers it, with the same id and a valid signature', async () => {
    const customer = sandbox.fixtures.firstCustomer().key;
    const pm = (sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    receiver.reply = (_hit, n) => (n === 1 ? 'hang' : 200);
    const sale = await replicas.call({
      method: 'POST',
      path: '/v1/sales',
      headers: { authorization: `Bearer ${token({ sub: 'ev-shop', custkey: customer, scope: 'sales:create' })}`, 'idempotency-key': `evr-${randomBytes(4).toString('hex')}` },
      body: { customer, payment_method: pm, amount: '4.20' },
    });
    expect(sale.status).toBe(201);
    await eventually(() => receiver.hits.length === 1, 5000);
    const [first] = receiver.hits;
    await replicas.kill(0, 'SIGKILL');
    await replicas.kill(1, 'SIGKILL');

    await replicas.replace(0);
    await eventually(() => receiver.hits.length === 2, 15_000);
    const second = receiver.hits[1];
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(second?.payload).toMatchObject({ type: 'sale.succeeded', data: { key: (sale.body as { key: string }).key } });
    expect(new Webhook(SECRET).verify(second?.raw.toString('utf8') ?? '', second?.headers as Record<string, string>)).toEqual(second?.payload);
    // Not before the dead attempt's timeout (1 s) and margin had passed: one replica at a time holds an event.
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.hits).toHaveLength(2);
  });
});
