import { createHmac } from 'node:crypto';
import { loadConfig } from '../../src/config';
import { silentLogger } from '../../src/observability/logger';
import type { RunningSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';
import { postWebhooksToTokengate, startEmbeddedSandbox } from '../../src/sandbox/embedded';
import { eventually } from '../support/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * The sandbox that development mode embeds (src/sandbox/embedded.ts): it takes the SANDBOX_WEBHOOK_* settings as
 * `npm run sandbox` does, and with GATEWAY_WEBHOOK_SECRET set it also posts to tokengate's own receiver once
 * tokengate listens, signing everything with that secret. A receiver on port 0 stands in for tokengate's port.
 */
describe('the embedded sandbox\'s webhooks', () => {
  let others: WebhookReceiver;
  let tokengate: WebhookReceiver;
  let sandbox: RunningSandbox | undefined;

  beforeEach(async () => {
    [others, tokengate] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
  });
  afterEach(async () => {
    await Promise.all([sandbox?.close(), others.close(), tokengate.close()]);
    sandbox = undefined;
  });

  /** A sale and its void, straight at the sandbox (the gateway's console): two events. */
  async function saleVoided(): Promise<string> {
    const sb = sandbox as RunningSandbox;
    const customer = sb.fixtures.firstCustomer();
    const pm = sb.fixtures.paymentMethods(customer.key).find((m) => m.number.endsWith('2224'));
    const sale = await callSandbox(sb.baseUrl, 'POST', 'transactions', { body: { command: 'cc:sale', amount: '3.00', creditcard: { number: pm?.cardref ?? '', cvc: '' } } });
    const key = (sale.json as { key: string }).key;
    await callSandbox(sb.baseUrl, 'POST', 'transactions', { body: { command: 'void', trankey: key } });
    return key;
  }
  const signedWith = (secret: string, hits: WebhookReceiver['hits']) => hits.every((h) => h.headers['x-signature'] === createHmac('sha256', secret).update(h.raw).digest('hex'));

  it('when GATEWAY_WEBHOOK_SECRET is set, then once tokengate listens its /v1/webhooks/gateway gets every event beside SANDBOX_WEBHOOK_URLS, all signed with that secret', async () => {
    const config = loadConfig({ env: { NODE_ENV: 'development', GATEWAY_WEBHOOK_SECRET: 'tokengate-hook-key', SANDBOX_WEBHOOK_URLS: others.url, SANDBOX_WEBHOOK_SECRET: 'another-key', SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS: '100' } });
    sandbox = await startEmbeddedSandbox(config, silentLogger());
    const origin = new URL(tokengate.url).origin;
    expect(postWebhooksToTokengate(sandbox, config, origin)).toBe(`${origin}/v1/webhooks/gateway`);
    const key = await saleVoided();
    await eventually(() => others.hits.length >= 2 && tokengate.hits.length >= 2);
    expect(tokengate.hits.map((h) => [h.path, h.payload.event_type, h.payload.event_body.object.key]).sort()).toEqual([
      ['/v1/webhooks/gateway', 'transaction.sale.success', key],
      ['/v1/webhooks/gateway', 'transaction.sale.voided', key],
    ]);
    expect(others.hits).toHaveLength(2);
    expect([signedWith('tokengate-hook-key', tokengate.hits), signedWith('tokengate-hook-key', others.hits)]).toEqual([true, true]);
    expect(sandbox.settings.webhookRetryScheduleMs).toEqual([100]);
  });

  it('when GATEWAY_WEBHOOK_SECRET is unset, then nothing goes to tokengate and SANDBOX_WEBHOOK_URLS get the events signed with SANDBOX_WEBHOOK_SECRET, as with npm run sandbox', async () => {
    const config = loadConfig({ env: { NODE_ENV: 'development', SANDBOX_WEBHOOK_URLS: others.url, SANDBOX_WEBHOOK_SECRET: 'another-key' } });
    sandbox = await startEmbeddedSandbox(config, silentLogger());
    expect(postWebhooksToTokengate(sandbox, config, new URL(tokengate.url).origin)).toBeUndefined();
    await saleVoided();
    await eventually(() => others.hits.length >= 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(tokengate.hits).toHaveLength(0);
    expect(signedWith('another-key', others.hits)).toBe(true);
  });
});
