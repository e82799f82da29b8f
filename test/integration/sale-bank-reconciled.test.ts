import { randomBytes } from 'node:crypto';
import { startBff, token, type Bff } from '../support/bff';
import { eventually } from '../support/wait';
import { call } from '../support/wallet';

/**
 * A bank payment whose answer was lost (the gateway debited, then hung) and that the reconciler resolved from the
 * gateway's records (issue 38 item 3; guarantees 6 and 14): the sale keeps the shopper's authorization and its SEC
 * code in its record as an answered one does, so the reconciled answer and GET show them, and the `ach.*` steps
 * that follow (kept if they came first) move it to `returned` with its code. The sandbox is the judge of the debit.
 */
const SECRET = 'gateway-webhook-signature-key-for-reconciled-bank-payments';
const DAY = 86_400_000;
const run = randomBytes(3).toString('hex');
const AGREED = 'I authorize Example Co to debit my account (v5)';
const service = () => token({ sub: `bank-rec-${run}`, scope: 'customers:any sales:create sales:read' }, { expiresIn: 600 });

let bff: Bff;
beforeAll(async () => {
  bff = await startBff({
    env: { GATEWAY_WEBHOOK_SECRET: SECRET, GATEWAY_TIMEOUT_MS: '400', RECONCILE_INTERVAL_MS: '100', RECONCILE_RETRY_MS: '200', RECONCILE_MAX_PROCESSING_MS: '1500' },
  });
  bff.sandbox.update({ webhookUrls: [`${bff.url}/v1/webhooks/gateway`], webhookSecret: SECRET, webhookRetryScheduleMs: [200, 200, 200] });
});
afterAll(() => bff?.stop());

test('when a bank payment\'s answer is lost and the reconciler finds it, then the sale shows its authorization (SEC WEB) and its later return applies to it', async () => {
  const c = (bff.sandbox.fixtures.customers[12] as { key: string }).key;
  const payment_key = bff.sandbox.checkPaymentKey({ accountholder: 'Pat Doe', routing: '011000015', account: '10178103', account_type: 'checking' });
  const body = { customer: c, amount: '45.00', payment_key, authorization: { text: AGREED } };
  const idem = `lost-bank-${run}`;
  bff.sandbox.faults.next({ kind: 'hang', match: 'sale', when: 'after' });
  const first = await call(bff.url, 'POST', '/v1/sales', service(), body, { 'idempotency-key': idem });
  expect(first.status).toBe(504);
  let answer = first;
  await eventually(async () => {
    answer = await call(bff.url, 'POST', '/v1/sales', service(), body, { 'idempotency-key': idem });
    return answer.status === 201;
  });
  expect(answer.headers.get('tokengate-reconciled')).toBe('true');
  const key = answer.body.key as string;
  expect(bff.sandbox.ledger.entries().filter((e) => e.kind === 'sale' && e.custkey === c && e.amount === '45.00')).toHaveLength(1);
  expect(answer.body).toMatchObject({ status: 'pending', authorization: { text: AGREED, sec: 'WEB' } });
  const read = async () => (await call(bff.url, 'GET', `/v1/sales/${key}`, service())).body;
  expect(await read()).toMatchObject({ status: 'pending', authorization: { text: AGREED, sec: 'WEB' } });

  // Days later the bank returns it (R03): the ach.* steps apply to the reconciled sale.
  bff.sandbox.clock.advance(5 * DAY);
  await eventually(async () => (await read()).status === 'returned');
  expect(await read()).toMatchObject({ status: 'returned', return_code: 'R03', amount_returned: '45.00', authorization: { text: AGREED, sec: 'WEB' } });
});
