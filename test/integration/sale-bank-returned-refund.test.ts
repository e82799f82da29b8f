import { randomBytes } from 'node:crypto';
import { callSandbox } from '../../src/sandbox/client';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * A refund of a returned bank payment (issue 38 item 4). Whether the gateway credits a returned check back is not
 * documented; the sandbox names both readings (SANDBOX_RETURNED_CHECK_REFUND, src/sandbox/README.md "ACH"): `refused`
 * (10125) and `approved` (a credit back). Under each, tokengate refuses its own refund first (409
 * `sale_not_refundable`, lua/reserve.lua: nothing reaches the gateway), and a refund made outside it (the merchant's
 * console) changes neither that nor the sale's returned state, nor makes a payment event of tokengate's.
 */
const SECRET = 'gateway-webhook-signature-key-for-returned-refunds';
const DAY = 86_400_000;
const run = randomBytes(3).toString('hex');
let n = 0;
const id = (what: string) => `${what}-${run}-${++n}`;
const service = () => token({ sub: `bank-ret-${run}`, scope: 'customers:any sales:create sales:read refunds:create events:read' }, { expiresIn: 600 });

for (const reading of ['refused', 'approved'] as const) {
  describe(`a refund of a returned bank payment (the gateway's refund of a returned check ${reading})`, () => {
    let bff: Bff;
    beforeAll(async () => {
      bff = await startBff({ env: { GATEWAY_WEBHOOK_SECRET: SECRET }, sandbox: { returnedCheckRefund: reading } });
      bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
    });
    afterAll(() => bff?.stop());

    it('when tokengate is asked to refund it, then 409 sale_not_refundable with nothing sent; a refund at the gateway itself is the gateway\'s answer, and tokengate still refuses and shows the sale returned', async () => {
      const c = (bff.sandbox.fixtures.customers[13] as { key: string }).key;
      const payment_key = bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account: '10178107', account_type: 'checking' });
      const paid = await call(bff.url, 'POST', '/v1/sales', service(), { customer: c, amount: '60.00', payment_key, authorization: { text: 'v1' } }, { 'idempotency-key': id('pay') });
      expect(paid.status).toBe(201);
      const key = paid.body.key as string;
      const read = async () => (await call(bff.url, 'GET', `/v1/sales/${key}`, service())).body;
      bff.sandbox.clock.advance(5 * DAY);
      await eventually(async () => (await read()).status === 'returned');

      const refundOf = (amount?: string) => call(bff.url, 'POST', `/v1/sales/${key}/refunds`, service(), amount ? { amount } : undefined, { 'idempotency-key': id('refund') });
      const ops = bff.sandbox.ledger.operations().length;
      for (const answer of [await refundOf(), await refundOf('10.00')]) expect([answer.status, answer.body.error?.code]).toEqual([409, 'sale_not_refundable']);
      expect(bff.sandbox.ledger.operations()).toHaveLength(ops);

      // The merchant's console refunds it at the gateway directly (refund, then refund:adjust): the reading decides.
      const outside = async (command: string) => (await callSandbox(bff.sandbox.baseUrl, 'POST', 'transactions', { body: { command, trankey: key, amount: '10.00' } })).json as { result_code: string; error_code?: string };
      for (const command of ['refund', 'refund:adjust']) {
        const got = await outside(command);
        if (reading === 'refused') expect(got).toMatchObject({ result_code: 'E', error_code: '10125' });
        else expect(got.result_code).toBe('A');
      }
      expect(bff.sandbox.ledger.get(key)?.refunds).toHaveLength(reading === 'approved' ? 2 : 0);
      // Whatever the webhooks said, the sale is returned and tokengate's own refund stays refused with nothing sent.
      // Every event the sandbox emitted has had a delivery tokengate answered (the outside refunds' among them).
      await eventually(() => bff.sandbox.webhooks.events().every((e) => bff.sandbox.webhooks.attempts().some((a) => a.event_id === e.event_id && a.outcome === 'delivered')));
      expect(await read()).toMatchObject({ status: 'returned', return_code: 'R07', amount_refunded: '0.00' });
      const after = bff.sandbox.ledger.operations().length;
      const again = await refundOf('5.00');
      expect([again.status, again.body.error?.code]).toEqual([409, 'sale_not_refundable']);
      expect(bff.sandbox.ledger.operations()).toHaveLength(after);
      const types = ((await call(bff.url, 'GET', '/v1/events?limit=1000', service())).body.data as { type: string; data: { key: string; sale?: string } }[])
        .filter((e) => e.data.key === key || e.data.sale === key).map((e) => e.type);
      expect(types).not.toContain('refund.succeeded');
    });
  });
}
