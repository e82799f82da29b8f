import type { StoredResponse } from '../idempotency';
import { saleObject, type SaleFacts } from '../sales/sale-object';
import type { SaleOutcome } from '../sales/sale-service';
import { CardDeclined, GatewayErrorApi, InvalidRequest } from './errors';

/**
 * A sale's answer: 201 the sale, 402 card_declined carrying it, 502 for a gateway error (result E); with a Pay.js
 * payment key, a result E is the gateway refusing the key (unknown, expired or used: its codes are not published),
 * 400 invalid_request naming `body.payment_key`, as when adding a card.
 */
export function renderSale(outcome: SaleOutcome, facts: SaleFacts, requestId: string, paymentKey = false): StoredResponse {
  const sale = saleObject(facts);
  if (outcome.kind === 'approved') return { status: 201, body: sale, headers: {} };
  const error = outcome.kind === 'declined'
    ? new CardDeclined(sale)
    : paymentKey
      ? new InvalidRequest([{ path: 'body.payment_key', rule: 'refused_by_gateway' }], 'The gateway refused the payment key: it is unknown, expired or already used.')
      : new GatewayErrorApi('gateway_error');
  return { status: error.status, body: error.toBody(requestId), headers: { ...error.headers } };
}
