import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';
import { eventually } from '../support/wait';

/**
 * A batch read while a write begun before its close is still unresolved waits (settle-batch.ts,
 * SettlementNotYetError; pending-writes' unresolvedBefore): a sale the gateway made whose answer a reset cut has no
 * record until the reconciler finds it, and a read kept at once would call tokengate's own sale `not_ours`.
 */
const SECRET = 'gateway-webhook-signature-key-for-settlement-deferred';
const FINANCE = 'settlements:read customers:any';
const OFFICE = 'customers:any sales:create';

describe('settlements: a read deferred while an outcome is unknown', () => {
  const { prefix } = suiteRedis('settle-deferred');
  let bff: Bff;
  const bearer = (scope: string) => token({ sub: 'settlements-deferred', scope });

  beforeAll(async () => {
    // The reconciler looks every ~6 s: the batch's close is heard well before it finds the sale.
    bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix, GATEWAY_WEBHOOK_SECRET: SECRET, SETTLEMENTS_LOOK_MS: '0', RECONCILE_INTERVAL_MS: '6000', RECONCILE_RETRY_MS: '200' } });
    bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
  });
  afterAll(() => bff?.stop());

  it('when a batch closes holding a sale whose answer was lost, then its settlement is kept only once the reconciler found the sale, and the line is matched, not not_ours', async () => {
    const customer = bff.sandbox.fixtures.firstCustomer().key;
    const card = (bff.sandbox.fixtures.paymentMethods(customer).find((p) => p.number.endsWith('2224')) as { key: string }).key;
    bff.sandbox.faults.next({ kind: 'reset', match: 'sale', when: 'after' });
    const res = await request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer(OFFICE)}`).set('Idempotency-Key', `sd-${Date.now().toString(36)}`)
      .set('Content-Type', 'application/json').send({ customer, payment_method: card, amount: '13.00' });
    expect([502, 504]).toContain(res.status);
    const batch = bff.sandbox.ledger.closeBatch();
    const settlement = () => request(bff.url).get(`/v1/settlements/${batch}`).set('Authorization', `Bearer ${bearer(FINANCE)}`);
    await eventually(async () => (await settlement()).status === 200, 30_000);
    const kept = await settlement();
    expect(kept.body.counts).toEqual({ matched: 1, amount_differs: 0, not_ours: 0, missing: 0 });
    expect(kept.body.lines).toEqual([expect.objectContaining({ kind: 'sale', amount: '13.00', gateway_amount: '13.00', verdict: 'matched' })]);
  });
});
