import type { StoredResponse } from '../idempotency';
import { saleObject, type SaleFacts } from '../sales/sale-object';
import type { PayInput } from '../sales/checkout';
import type { SaleOutcome } from '../sales/sale-service';
import { CardDeclined, GatewayErrorApi, InvalidRequest } from './errors';

/**
 * A sale's answer: 201 the sale, 402 card_declined carrying it, 502 for a gateway error (result E); with a Pay.js
 * payment key, a result E is the gateway refusing the key (unknown, expired or used: its codes are not published),
 * 400 invalid_request naming `body.payment_key`, as when adding a card. Sent without `authorization`, the key went
 * out as a card's: a check form's key is refused there too, and nothing in the key tells the two apart (both forms
 * answer the same opaque `payment_key`, gateway-facts.md, ACH), so the answer also names the field a bank key needs
 * (contract, "Bank payments"), as a condition: `body.authorization` `required_if_bank_payment_key`.
 */
export function renderSale(outcome: SaleOutcome, facts: SaleFacts, requestId: string, paid?: Pick<PayInput, 'paymentKey' | 'authorization'>): StoredResponse {
  const sale = saleObject(facts);
  if (outcome.kind === 'approved') return { status: 201, body: sale, headers: {} };
  const error = outcome.kind === 'declined'
    ? new CardDeclined(sale)
    : paid?.paymentKey !== undefined
      ? keyRefused(paid.authorization !== undefined)
      : new GatewayErrorApi('gateway_error');
  return { status: error.status, body: error.toBody(requestId), headers: { ...error.headers } };
}

/** A payment key sent without `authorization` that was a check form's: the 400 naming `body.authorization`. */
export const checkKeyAsCard = (): InvalidRequest => keyRefused(false);

function keyRefused(bank: boolean): InvalidRequest {
  if (bank) return new InvalidRequest([{ path: 'body.payment_key', rule: 'refused_by_gateway' }], 'The gateway refused the payment key: it is unknown, expired or already used.');
  return new InvalidRequest(
    [{ path: 'body.payment_key', rule: 'refused_by_gateway' }, { path: 'body.authorization', rule: 'required_if_bank_payment_key' }],
    'The gateway refused the payment key as a card\'s: it is unknown, expired or already used, or it is a bank account\'s (the check form\'s), which needs body.authorization.',
  );
}
