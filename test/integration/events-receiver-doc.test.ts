import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';
import { freePort } from '../support/ports';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/**
 * The documented receiver (docs/internal-services.md, "Payment events": an internal service verifying events with
 * the `standardwebhooks` reference library), run as written in a process of its own, against tokengate's real
 * deliveries.
 */
const PAGE = readFileSync(path.join(__dirname, '..', '..', 'docs', 'internal-services.md'), 'utf8');
const SNIPPET = /```js\n(\/\/ An internal service receiving tokengate's payment events\.[\s\S]*?)```/.exec(PAGE)?.[1];

describe('the documented event receiver (docs/internal-services.md)', () => {
  const { prefix } = suiteRedis('readme-receiver');
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  let bff: Bff;
  let receiver: ChildProcess;
  let out = '';
  let port: number;

  beforeAll(async () => {
    if (!SNIPPET) throw new Error('docs/internal-services.md has no receiver snippet');
    port = await freePort();
    receiver = spawn(process.execPath, ['-e', SNIPPET], { cwd: path.join(__dirname, '..', '..'), env: { PATH: process.env.PATH ?? '', PORT: String(port), TOKENGATE_EVENTS_SECRET: secret } });
    receiver.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    receiver.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, EVENTS_WEBHOOK_URLS: `http://127.0.0.1:${port}/events`, EVENTS_WEBHOOK_SECRET: secret, EVENTS_POLL_MS: '50' } });
  });
  afterAll(async () => {
    receiver?.kill();
    await bff?.stop();
  });

  it('when tokengate delivers a sale\'s event, then the snippet verifies it and acts on it; a forged post is refused with 400', async () => {
    const customer = bff.sandbox.fixtures.firstCustomer().key;
    const pm = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    const res = await request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${token({ sub: 'readme', custkey: customer, scope: 'sales:create' })}`)
      .set('Idempotency-Key', `readme-${randomBytes(4).toString('hex')}`).set('Content-Type', 'application/json')
      .send(JSON.stringify({ customer, payment_method: pm, amount: '7.25', invoice: 'order-42' }));
    expect(res.status).toBe(201);
    await eventually(() => out.includes('ship order order-42 7.25'), 10_000);

    const forged = await fetch(`http://127.0.0.1:${port}/events`, {
      method: 'POST',
      headers: { 'webhook-id': 'evt_1-1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
      body: JSON.stringify({ id: 'evt_1-1', type: 'sale.succeeded', created: 1, data: {} }),
    });
    expect(forged.status).toBe(400);
  });
});
