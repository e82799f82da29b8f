import type { TransactionDetail } from '../gateway/types';
import type { UnknownRecord } from '../idempotency';
import type { AnswerOf } from '../reconcile/find';
import { saleView } from '../sales/sale-view';
import { CardDeclined, GatewayErrorApi } from './errors';
import { newRequestId } from './request-id';

/**
 * What a write found by the reconciler answers from then on (issue 12): the same statuses and error envelope
 * as the first attempt would have sent, with the sale as the gateway records it (the `GET /v1/sales/{key}`
 * shape: status, amounts, refunds). The reconciler adds `Tokengate-Reconciled: true` to the stored headers.
 */
export const reconciledAnswer: AnswerOf = (record: UnknownRecord, tx: TransactionDetail) => {
  const sale = { ...saleView(tx), customer: record.context?.customer ?? tx.custkey };
  const charged = tx.result_code === 'A' || tx.result_code === 'P';
  if (charged) return { kind: 'found', charged, transaction: tx.key, response: { status: 201, body: sale, headers: {} } };
  const error = tx.result_code === 'E' ? new GatewayErrorApi('gateway_error') : new CardDeclined(sale);
  return { kind: 'found', charged, transaction: tx.key, response: { status: error.status, body: error.toBody(newRequestId()), headers: { ...error.headers } } };
};
