import type { UnknownRecord } from '../idempotency';
import type { AnswerOf, Found } from '../reconcile/find';
import { fromCents } from '../gateway/money';
import { factsOfDetail, saleObject } from '../sales/sale-object';
import { CardDeclined, GatewayErrorApi } from './errors';
import { newRequestId } from './request-id';
import { renderAddCard } from './payment-method-answers';
import { checkKeyAsCard } from './render-sale';

/**
 * What a write found by the reconciler answers from then on (issue 12): the statuses and envelopes the first
 * attempt would have sent, with the sale as the gateway records it now: the one sale object, as GET reads it
 * (plus the payment method the write's record names). The reconciler adds `Tokengate-Reconciled: true` to the
 * stored headers.
 */
export const reconciledAnswer: AnswerOf = (record: UnknownRecord, found: Found) => {
  if (found.op === 'payment_method') {
    // A verification is voided once found: the card was checked, not charged.
    return { kind: 'found', charged: false, transaction: found.transaction, response: renderAddCard(found.result, newRequestId()) };
  }
  if (found.op === 'customer_create') return { kind: 'found', charged: false, transaction: found.customer.key, response: { status: 201, body: found.customer, headers: {} } };
  if (found.op === 'payment_method_remove' || found.op === 'customer_delete') return { kind: 'found', charged: false, transaction: '', response: { status: 204, body: null, headers: {} } };
  if (found.op === 'check_voided') {
    const error = checkKeyAsCard();
    return { kind: 'found', charged: false, transaction: found.detail.key, response: { status: error.status, body: error.toBody(newRequestId()), headers: { ...error.headers } } };
  }
  const tx = found.detail;
  if (found.op === 'refund') {
    const { key, refnum, amountCents, method } = found.refund;
    const body = { type: 'refund', key, refnum, sale: tx.key, amount: fromCents(amountCents), result_code: 'A', result: 'Approved', method };
    return { kind: 'found', charged: true, transaction: key, response: { status: 201, body, headers: {} } };
  }
  const paymentMethod = record.context?.payment_method;
  const bank = record.context?.bank;
  const kept = { ...found.kept, ...(paymentMethod ? { payment_method: paymentMethod } : {}), ...(bank && !found.kept?.bank ? { bank: { ...bank, ach_status: 'P' as const } } : {}) };
  const sale = saleObject(factsOfDetail(tx, { customer: record.context?.customer, fields: kept }));
  if (found.op === 'capture' || found.op === 'void') return { kind: 'found', charged: true, transaction: tx.key, response: { status: 200, body: sale, headers: {} } };
  const charged = tx.result_code === 'A' || tx.result_code === 'P';
  if (charged) return { kind: 'found', charged, transaction: tx.key, response: { status: 201, body: sale, headers: {} } };
  const error = tx.result_code === 'E' ? new GatewayErrorApi('gateway_error') : new CardDeclined(sale);
  return { kind: 'found', charged, transaction: tx.key, response: { status: error.status, body: error.toBody(newRequestId()), headers: { ...error.headers } } };
};
