import { checkAnswer } from '../support/openapi-check';

/** The response check every suite runs (test/support/openapi-setup.ts) finds what drifted from openapi.json. */
describe('checking an answer against openapi.json', () => {
  const headers = (h: Record<string, string>) => (n: string) => h[n.toLowerCase()];
  const sale = { type: 'sale', key: 'k', refnum: '1', result_code: 'A', result: 'Approved', authcode: '1', auth_amount: '1.00', amount: '1.00', is_duplicate: 'N', invoice: 'i', customer: 'c', payment_method: 'p', status: 'pending_settlement', amount_captured: '1.00', amount_refunded: '0.00', refunds: [] };

  it('when an answer matches its operation, then there is no problem', () => {
    expect(checkAnswer('POST', 'http://127.0.0.1:1/v1/sales', 201, headers({ 'x-request-id': 'r' }), JSON.stringify(sale))).toEqual([]);
  });

  it('when the status is not documented, the body lacks a required field, or a required header is missing, then each is named', () => {
    expect(checkAnswer('POST', 'http://127.0.0.1:1/v1/sales', 200, headers({ 'x-request-id': 'r' }), '{}')[0]).toMatch(/status not documented/);
    expect(checkAnswer('POST', 'http://127.0.0.1:1/v1/sales', 201, headers({ 'x-request-id': 'r' }), JSON.stringify({ ...sale, refnum: undefined }))[0]).toMatch(/required property 'refnum'/);
    expect(checkAnswer('GET', 'http://127.0.0.1:1/v1/customers/c1/payment_methods/p1/token', 200, headers({ 'x-request-id': 'r' }), JSON.stringify({ type: 'token', cardref: 'abcd-efgh-ijkl-mnop', expires: '2030-12-31', ccnumlast4: '2224', cardtype: '03', custkey: 'c1', pmkey: 'p1' })))
      .toEqual(['GET /v1/customers/{custkey}/payment_methods/{pmkey}/token → 200: required header Cache-Status missing']);
  });

  it('when the path is not an operation (the sandbox, an unknown route), then it is not judged here', () => {
    expect(checkAnswer('POST', 'http://127.0.0.1:1/api/v2/transactions', 500, headers({}), 'x')).toEqual([]);
    expect(checkAnswer('GET', 'http://127.0.0.1:1/nope', 404, headers({}), '')).toEqual([]);
  });
});
