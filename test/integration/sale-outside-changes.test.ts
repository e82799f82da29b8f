import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';
import { clientFor } from '../support/gateway';
import { suiteRedis } from '../support/redis';

/**
 * Money moved outside tokengate (a refund or a void made in the merchant's console at the gateway): the sale's
 * record follows the gateway's own record, so "refund all" asks for what is really left, and the sandbox's
 * ledger, the judge of what moved, never shows more refunded than captured.
 */
describe('sales changed at the gateway directly', () => {
  const { prefix } = suiteRedis('sale-outside');
  let bff: Bff;
  let cust: string;
  let approved: string;
  let seq = 0;
  const idem = () => `so-${Date.now().toString(36)}-${seq++}`;

  beforeAll(async () => {
    // Under the `listed` reading (a gateway whose look-up lists a sale's refunds) the view follows a refund made
    // elsewhere from that list. Under `none` (the documented gateway, the default) no document links a console refund
    // to its sale: test/integration/gateway-webhooks.test.ts shows it reported unlinked and the excess refused by the gateway.
    bff = await startBff({ sandbox: { lookupRefunds: 'listed' }, env: { REDIS_KEY_PREFIX: prefix } });
    cust = bff.sandbox.fixtures.firstCustomer().key;
    approved = (bff.sandbox.fixtures.paymentMethods(cust).find((p) => p.number.endsWith('2224')) as { key: string }).key;
  });
  afterAll(() => bff.stop());

  const bearer = () => token({ sub: 'so-internal', scope: 'customers:any sales:create sales:read sales:void refunds:create' });
  const post = (path: string, body?: object) => {
    const r = request(bff.url).post(path).set('Authorization', `Bearer ${bearer()}`).set('Idempotency-Key', idem());
    return body === undefined ? r.send() : r.send(body);
  };
  const get = (k: string) => request(bff.url).get(`/v1/sales/${k}`).set('Authorization', `Bearer ${bearer()}`);
  /** A read that asks for the gateway's word (guarantee 9: otherwise tokengate answers from its own view). */
  const read = (k: string) => get(k).set('Cache-Control', 'no-cache');
  /** A settled sale of `amount`, refunded `elsewhere` at the gateway directly (not through tokengate). */
  const settledAndRefundedElsewhere = async (amount: string, elsewhere: string) => {
    const sold = await post('/v1/sales', { customer: cust, payment_method: approved, amount });
    expect(sold.status).toBe(201);
    bff.sandbox.ledger.closeBatch();
    const gw = clientFor(bff.sandbox);
    try {
      await gw.refund({ trankey: sold.body.key, command: 'refund', amount: elsewhere });
    } finally {
      gw.close();
    }
    return sold.body.key as string;
  };
  const refundedAtGateway = (k: string) =>
    bff.sandbox.ledger.operations().filter((o) => o.trankey === k && o.createdKey).reduce((sum, o) => sum + Math.round(Number(o.amount) * 100), 0);

  it('when a sale was refunded in part elsewhere and read, then a refund of all refunds what is left', async () => {
    const k = await settledAndRefundedElsewhere('40.00', '25.00');
    // tokengate's view knows only its own writes until the gateway's word is asked for (or a webhook says so).
    expect((await get(k)).body).toMatchObject({ amount_captured: '40.00', amount_refunded: '0.00' });
    const seen = await read(k);
    expect(seen.headers['cache-status']).toBe('tokengate; fwd=request; stored');
    expect(seen.body).toMatchObject({ status: 'settled', amount_captured: '40.00', amount_refunded: '25.00', refunds: [{ amount: '25.00', method: 'refund' }] });
    expect((await get(k)).body).toMatchObject({ amount_refunded: '25.00' });
    const all = await post(`/v1/sales/${k}/refunds`);
    expect(all.status).toBe(201);
    expect(all.body).toMatchObject({ type: 'refund', amount: '15.00', method: 'refund' });
    expect(refundedAtGateway(k)).toBe(4000);
    expect((await get(k)).body).toMatchObject({ amount_refunded: '40.00' });
    expect((await post(`/v1/sales/${k}/refunds`, { amount: '0.01' })).body.error.code).toBe('refund_exceeds_sale');
  });

  it('when a sale was refunded in part elsewhere and not read, then the first refund of all is refused and the next one refunds what is left', async () => {
    const k = await settledAndRefundedElsewhere('30.00', '20.00');
    const first = await post(`/v1/sales/${k}/refunds`);
    expect([first.status, first.body.error?.code]).toEqual([422, 'refund_exceeds_sale']);
    const next = await post(`/v1/sales/${k}/refunds`);
    expect([next.status, next.body.amount]).toEqual([201, '10.00']);
    expect(refundedAtGateway(k)).toBe(3000);
  });

  it('when a sale was voided elsewhere and read, then a refund or a void is refused without a gateway call', async () => {
    const sold = await post('/v1/sales', { customer: cust, payment_method: approved, amount: '9.00' });
    const gw = clientFor(bff.sandbox);
    try {
      await gw.void({ trankey: sold.body.key, release: true });
    } finally {
      gw.close();
    }
    expect((await read(sold.body.key)).body.status).toBe('voided');
    const before = bff.sandbox.ledger.operations().length;
    expect((await post(`/v1/sales/${sold.body.key}/refunds`)).body.error.code).toBe('refund_exceeds_sale');
    expect((await post(`/v1/sales/${sold.body.key}/void`)).body.error.code).toBe('sale_not_voidable');
    expect(bff.sandbox.ledger.operations().length).toBe(before);
  });
});
