import type { StoredResponse } from '../idempotency';
import type { AddCardResult } from '../payment-methods/add-card';
import { CardDeclined, InvalidRequest } from './errors';

/**
 * The answer of `POST /v1/customers/{custkey}/payment_methods`, the same whether the route or the reconciler
 * (issue 12) produced the result: 201 the payment method (masked, as the gateway lists it) with its
 * verification; 402 `card_declined` with the verification; 400 `invalid_request` when the gateway refused the
 * payment key (unknown, expired or already used: its codes are not published, so every E is read as that), and
 * the same 400 when the key was a check form's the gateway debited as a check (voided, its bank method removed:
 * src/payment-methods/check-key.ts): whatever the gateway does with such a key, the caller hears the same. A bank
 * account is kept by paying with it (`POST /v1/sales` with `authorization` and `save_payment_method`), never here.
 */
export function renderAddCard(result: AddCardResult, requestId: string): StoredResponse {
  if (result.kind === 'added') return { status: 201, body: { ...result.method, verification: result.verification }, headers: {} };
  const error = result.kind === 'declined'
    ? new CardDeclined({ type: 'card_verification', ...result.verification })
    : new InvalidRequest(
      [{ path: 'body.payment_key', rule: 'refused_by_gateway' }],
      'The gateway refused the payment key as a card\'s: it is unknown, expired or already used, or it is a bank account\'s (the check form\'s), '
        + 'which is kept by paying with it (POST /v1/sales with authorization and save_payment_method).',
    );
  return { status: error.status, body: error.toBody(requestId), headers: { ...error.headers } };
}
