/**
 * A typed client for tokengate, for frontends and internal services: `openapi-fetch` over the types
 * `openapi-typescript` generates from src/http/openapi.json (`npm run client:generate` writes schema.d.ts;
 * `npm run lint` fails when it is stale). Paths, parameters, bodies and every documented answer are typed:
 * `data` is the success body, `error` the error envelope of the status that came back.
 *
 *   import { createTokengateClient } from './clients/typescript';
 *   const api = createTokengateClient({ baseUrl: 'https://pay.example.com', token: () => session.jwt });
 *   const { data, error } = await api.POST('/v1/sales', {
 *     params: { header: { 'Idempotency-Key': crypto.randomUUID() } },
 *     body: { customer, payment_method: pm, amount: '10.00' },
 *   });
 *   if (error) show(error.error.code); else show(data.key);
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, paths };
export type Sale = components['schemas']['Sale'];
export type ApiError = components['schemas']['Error'];
/**
 * tokengate's payment events (`GET /v1/events`, and the body each EVENTS_WEBHOOK_URLS receiver gets): narrowed by
 * `type`, so `if (event.type === 'sale.succeeded') event.data.amount_captured` type-checks. Verify a delivery with
 * the `standardwebhooks` package before trusting it (docs/internal-services.md, "Payment events").
 */
export type PaymentEvent = components['schemas']['PaymentEvent'];
export type PaymentEventType = PaymentEvent['type'];
export type SaleEvent = components['schemas']['SaleEvent'];
export type RefundEvent = components['schemas']['RefundEvent'];
export type PaymentMethodEvent = components['schemas']['PaymentMethodEvent'];
export type CustomerEvent = components['schemas']['CustomerEvent'];
export type EventList = components['schemas']['EventList'];

export interface TokengateClientOptions {
  baseUrl: string;
  /** The caller's JWT, read on every request (so a refreshed token is used at once). */
  token: () => string | Promise<string>;
  fetch?: typeof globalThis.fetch;
}

export function createTokengateClient(options: TokengateClientOptions): Client<paths> {
  const client = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const auth: Middleware = {
    async onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${await options.token()}`);
      return request;
    },
  };
  client.use(auth);
  return client;
}
