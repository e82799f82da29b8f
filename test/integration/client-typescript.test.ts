import { randomUUID } from 'node:crypto';
import { createTokengateClient, type PaymentEvent } from '../../clients/typescript/index';
import { startBff, token, type Bff } from '../support/bff';

/**
 * The typed client of clients/typescript (issue 14, item 3) against a running service: the same calls a
 * frontend makes, with the types doing the checking at compile time (`npm run typecheck`, in `npm run lint`, checks this file).
 */
describe('the typed TypeScript client', () => {
  let bff: Bff;
  let customer: string;
  let approved: string;
  let declined: string;

  beforeAll(async () => {
    bff = await startBff();
    customer = bff.sandbox.fixtures.firstCustomer().key;
    const pms = bff.sandbox.fixtures.paymentMethods(customer);
    approved = (pms.find((p) => p.number.endsWith('2224')) as { key: string }).key;
    declined = (pms.find((p) => p.number.endsWith('2220')) as { key: string }).key;
  });
  afterAll(() => bff?.stop());

  const api = () => createTokengateClient({ baseUrl: bff.url, token: () => token({ sub: 'client-ts', custkey: customer, scope: 'sales:create tokens:read' }) });

  it('when a frontend charges a stored card, then data is the typed sale and the gateway charged it once', async () => {
    const { data, error, response } = await api().POST('/v1/sales', {
      params: { header: { 'Idempotency-Key': randomUUID() } },
      body: { customer, payment_method: approved, amount: '10.00' },
    });
    expect(error).toBeUndefined();
    expect(response.status).toBe(201);
    const sale = data as NonNullable<typeof data>;
    expect(sale.result_code).toBe('A');
    expect(bff.sandbox.transactions().filter((t) => t.key === sale.key)).toHaveLength(1);
  });

  it('when the card is declined, then error is the typed envelope with card_declined and its transaction', async () => {
    const { data, error, response } = await api().POST('/v1/sales', {
      params: { header: { 'Idempotency-Key': randomUUID() } },
      body: { customer, payment_method: declined, amount: '10.00' },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(402);
    expect(error?.error.code).toBe('card_declined');
    // The 402 envelope is the DeclinedError schema: narrowing on `transaction` gives the declined sale, typed.
    const declinedSale = error && 'transaction' in error.error ? error.error.transaction : undefined;
    expect(declinedSale).toMatchObject({ result_code: 'D' });
  });

  it('when the token is read, then data is the typed token object and Cache-Status says hit or miss', async () => {
    const { data, response } = await api().GET('/v1/customers/{custkey}/payment_methods/{pmkey}/token', { params: { path: { custkey: customer, pmkey: approved } } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ type: 'token', custkey: customer, pmkey: approved });
    expect(data?.cardref).toMatch(/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/);
    expect(['hit', 'miss']).toContain(response.headers.get('cache-status'));
  });

  it('when an account page creates, reads and cancels a subscription, then each answer is the typed subscription', async () => {
    const account = createTokengateClient({ baseUrl: bff.url, token: () => token({ sub: 'client-ts-account', custkey: customer, scope: 'subscriptions:read subscriptions:write' }) });
    const created = await account.POST('/v1/customers/{custkey}/subscriptions', {
      params: { path: { custkey: customer }, header: { 'Idempotency-Key': randomUUID() } },
      body: { amount: '5.00', interval: 'month', payment_method: approved, consent: { text: 'terms v1' } },
    });
    expect(created.response.status).toBe(201);
    const sub = created.data as NonNullable<typeof created.data>;
    expect(sub).toMatchObject({ type: 'subscription', status: 'active', periods_charged: 1 });
    expect(sub.latest_sale?.result_code).toBe('A');
    const listed = await account.GET('/v1/customers/{custkey}/subscriptions', { params: { path: { custkey: customer } } });
    expect(listed.data?.data.map((s) => s.key)).toContain(sub.key);
    const canceled = await account.POST('/v1/subscriptions/{key}/cancel', { params: { path: { key: sub.key } }, body: { at_period_end: true } });
    expect(canceled.data).toMatchObject({ key: sub.key, cancel_at_period_end: true });
  });

  it('when a scope is missing, then error carries the contract code forbidden', async () => {
    const noScope = createTokengateClient({ baseUrl: bff.url, token: () => token({ sub: 'client-ts', custkey: customer, scope: 'sales:create' }) });
    const { error, response } = await noScope.GET('/v1/customers/{custkey}/payment_methods/{pmkey}/token', { params: { path: { custkey: customer, pmkey: approved } } });
    expect(response.status).toBe(403);
    expect(error?.error.code).toBe('forbidden');
  });

  it('when an internal service reads the event log, then each event is typed by its type (a sale event\'s data is the sale)', async () => {
    const { data: sale } = await api().POST('/v1/sales', {
      params: { header: { 'Idempotency-Key': randomUUID() } },
      body: { customer, payment_method: approved, amount: '3.21' },
    });
    const service = createTokengateClient({ baseUrl: bff.url, token: () => token({ sub: 'client-ts-ledger', scope: 'customers:any events:read' }) });
    const { data, response } = await service.GET('/v1/events', { params: { query: { limit: 1000 } } });
    expect(response.status).toBe(200);
    const amounts = (data?.data ?? []).flatMap((e: PaymentEvent) => (e.type === 'sale.succeeded' && e.data.key === sale?.key ? [e.data.amount_captured] : []));
    expect(amounts).toEqual(['3.21']);
  });

  it('when a backend signs a shopper up and the app runs its wallet screen, then every call is typed: create, list, default, rename, remove', async () => {
    const backend = createTokengateClient({ baseUrl: bff.url, token: () => token({ sub: 'client-ts-backend', scope: 'customers:write customers:any' }) });
    const made = await backend.POST('/v1/customers', {
      params: { header: { 'Idempotency-Key': randomUUID() } },
      body: { customerid: `client-ts-${randomUUID()}`, first_name: 'Ada', last_name: 'Lovelace' },
    });
    expect(made.response.status).toBe(201);
    const again = await backend.POST('/v1/customers', {
      params: { header: { 'Idempotency-Key': randomUUID() } },
      body: { customerid: 'client-ts-dup', company: 'Dup Ltd' },
    });
    expect(again.response.status).toBe(201);
    const dup = await backend.POST('/v1/customers', { params: { header: { 'Idempotency-Key': randomUUID() } }, body: { customerid: 'client-ts-dup', company: 'Dup Ltd' } });
    expect(dup.error?.error.code).toBe('customer_exists');
    expect(dup.error?.error.custkey).toBe(again.data?.key);

    const shopper = createTokengateClient({ baseUrl: bff.url, token: () => token({ sub: 'client-ts-app', custkey: customer, scope: 'payment_methods:read payment_methods:write customers:read' }) });
    const wallet = await shopper.GET('/v1/customers/{custkey}/payment_methods', { params: { path: { custkey: customer } } });
    const cards = wallet.data?.data ?? [];
    expect(cards.filter((m) => m.default)).toHaveLength(1);
    const other = cards.find((m) => !m.default) as (typeof cards)[number];
    const made2 = await shopper.PATCH('/v1/customers/{custkey}/payment_methods/{pmkey}', { params: { path: { custkey: customer, pmkey: other.key } }, body: { default: true, method_name: 'Everyday' } });
    expect(made2.data).toMatchObject({ key: other.key, default: true, method_name: 'Everyday' });
    const profile = await shopper.GET('/v1/customers/{custkey}', { params: { path: { custkey: customer } } });
    expect(profile.data?.payment_methods?.find((m) => m.default)?.key).toBe(other.key);
    const removed = await shopper.DELETE('/v1/customers/{custkey}/payment_methods/{pmkey}', { params: { path: { custkey: customer, pmkey: declined } } });
    expect(removed.response.status).toBe(204);
  });
});
