import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';
import { suiteRedis } from '../support/redis';

/**
 * What a caller reads in every sale answer, against the sandbox and real Redis: money always written with two
 * decimals however the request wrote it (one spelling in the sale, capture, void, refund, 402, replay and GET),
 * and a sale's listed refunds as the contract's refund objects.
 */
describe('sale answers', () => {
  const { prefix } = suiteRedis('sale-answers');
  let bff: Bff;
  let cust: string;
  let approved: string;
  let declined: string;
  let seq = 0;
  const idem = () => `sa-${Date.now().toString(36)}-${seq++}`;

  beforeAll(async () => {
    bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix } });
    cust = bff.sandbox.fixtures.firstCustomer().key;
    const pms = bff.sandbox.fixtures.paymentMethods(cust);
    const by = (last4: string) => (pms.find((p) => p.number.endsWith(last4)) as { key: string }).key;
    [approved, declined] = [by('2224'), by('2220')];
  });
  afterAll(() => bff.stop());

  const bearer = () => token({ sub: 'sa-internal', scope: 'customers:any sales:create sales:read sales:capture sales:void refunds:create' });
  /** The body goes out as written: `raw` is the JSON text itself, so "10.5" reaches tokengate as "10.5". */
  const post = (path: string, raw?: string, key = idem()) => {
    const r = request(bff.url).post(path).set('Authorization', `Bearer ${bearer()}`).set('Idempotency-Key', key);
    return raw === undefined ? r.send() : r.set('Content-Type', 'application/json').send(raw);
  };
  const sale = (amount: string, extra = '', key?: string) =>
    post('/v1/sales', `{"customer":"${cust}","payment_method":"${approved}","amount":"${amount}"${extra}}`, key);
  const get = (k: string) => request(bff.url).get(`/v1/sales/${k}`).set('Authorization', `Bearer ${bearer()}`);
  const sent = (k: string) => bff.sandbox.transactions().find((t) => t.key === k)?.amount;

  describe('money', () => {
    it('when a sale asks "10.5", then it answers "10.50" as GET does, the gateway was sent "10.50", and a replay of the same body answers the same', async () => {
      const key = idem();
      const res = await sale('10.5', '', key);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ amount: '10.50', auth_amount: '10.50', amount_captured: '10.50' });
      expect(sent(res.body.key)).toBe('10.50');
      expect((await get(res.body.key)).body).toEqual(res.body);
      const replay = await sale('10.5', '', key);
      expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([201, 'true']);
      expect(replay.body).toEqual(res.body);
    });

    it('when a sale asks "10", then it answers "10.00"', async () => {
      const res = await sale('10');
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ amount: '10.00', auth_amount: '10.00' });
    });

    it('when a sale of "5" is declined, then the 402\'s transaction says "5.00"', async () => {
      const res = await post('/v1/sales', `{"customer":"${cust}","payment_method":"${declined}","amount":"5"}`);
      expect(res.status).toBe(402);
      expect(res.body.error.transaction).toMatchObject({ amount: '5.00', auth_amount: '0.00' });
    });

    it('when an authorization of "7.5" is captured and then voided, then each answer says "7.50" as GET does', async () => {
      const auth = await sale('7.5', ',"capture":false');
      expect(auth.body).toMatchObject({ status: 'authorized', amount: '7.50', auth_amount: '7.50' });
      const captured = await post(`/v1/sales/${auth.body.key}/capture`);
      expect(captured.status).toBe(200);
      expect(captured.body).toMatchObject({ amount: '7.50', auth_amount: '7.50', amount_captured: '7.50' });
      expect((await get(auth.body.key)).body).toEqual(captured.body);
      const voided = await post(`/v1/sales/${auth.body.key}/void`);
      expect(voided.status).toBe(200);
      expect(voided.body).toMatchObject({ status: 'voided', amount: '7.50', auth_amount: '0.00' });
      expect((await get(auth.body.key)).body).toEqual(voided.body);
    });

    it('when part of an authorization is captured as "4.5", then the gateway captured "4.50" and the answer says so', async () => {
      const auth = await sale('9', ',"capture":false');
      const captured = await post(`/v1/sales/${auth.body.key}/capture`, '{"amount":"4.5"}');
      expect(captured.status).toBe(200);
      expect(captured.body).toMatchObject({ amount: '9.00', auth_amount: '4.50', amount_captured: '4.50' });
      expect(bff.sandbox.ledger.get(auth.body.key)).toMatchObject({ captured: '4.50' });
    });
  });

  describe('listed refunds', () => {
    /** The contract's refund object (contract.md, POST /v1/sales/{key}/refunds). */
    const REFUND_FIELDS = ['type', 'key', 'refnum', 'sale', 'amount', 'result_code', 'result', 'method'];

    it('when a settled sale is refunded, then GET lists each refund as the refund object its POST answered, plus created, and the gateway\'s status_code once its word is asked for', async () => {
      // The gateway's status_code of each refund comes from the look-up's refunds list, which only the `listed`
      // reading has (issue 42); the view's convergence without it is issue 36's.
      bff.sandbox.update({ lookupRefunds: 'listed' });
      const made = await sale('12');
      bff.sandbox.ledger.closeBatch();
      const first = await post(`/v1/sales/${made.body.key}/refunds`, '{"amount":"2.5"}');
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ amount: '2.50', result_code: 'A', result: 'Approved', method: 'refund' });
      const rest = await post(`/v1/sales/${made.body.key}/refunds`);
      expect(rest.body).toMatchObject({ amount: '9.50', method: 'refund' });

      // From tokengate's view (its own answers), then from the gateway's word (Cache-Control: no-cache).
      for (const [read, extra] of [[await get(made.body.key), []], [await get(made.body.key).set('Cache-Control', 'no-cache'), ['status_code']]] as const) {
        expect(read.body).toMatchObject({ amount_refunded: '12.00' });
        const listed = read.body.refunds as Record<string, unknown>[];
        expect(listed.map((r) => r.key).sort()).toEqual([first.body.key, rest.body.key].sort());
        for (const answered of [first.body, rest.body]) {
          const item = listed.find((r) => r.key === answered.key) as Record<string, unknown>;
          expect(Object.keys(item)).toEqual([...REFUND_FIELDS, 'created', ...extra]);
          expect(item).toMatchObject(answered);
          expect(item.created).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
        }
      }
      bff.sandbox.update({ lookupRefunds: 'none' });
    });
  });
});
