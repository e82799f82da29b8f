/**
 * Every error the emulator answers, in one table (mirrored in README.md). Codes from gateway-facts.md are the
 * real gateway's; the others are the emulator's own choices where the documentation is silent.
 */

export interface GatewayErrorBody {
  error: string;
  errorcode: number;
}

export interface ErrorSpec {
  status: number;
  error: string;
  errorcode: number;
  /** HTTP reason phrase when the spec names one (§7). */
  reason?: string;
}

const spec = (status: number, errorcode: number, error: string, reason?: string): ErrorSpec => ({ status, errorcode, error, ...(reason ? { reason } : {}) });

export const ERRORS = {
  // gateway-facts.md, Authentication / spec §7
  pathNotFound: spec(404, 21001, 'Path not found'),
  authFailed: spec(401, 21002, 'API authentication failed'),
  pinRequired: spec(401, 20010, 'PIN required'),
  sourceKeyNotFound: spec(401, 23, 'Specified source key not found'),
  rateLimited: spec(429, 155, 'API Rate Limit Exceed', 'API Rate Limit Exceed'),
  accessDenied: spec(401, 156, 'Access Denied', 'Access Denied'),
  customerNotFound: spec(404, 99999, 'Customer Not Found'),
  transactionNotFound: spec(404, 20001, 'Transaction not found'),
  // gateway-facts.md, the wallet (HTTP statuses are the emulator's: the facts give none)
  paymentMethodNotFound: spec(404, 40453, 'Payment Method Not Found'),
  invalidExpiration: spec(400, 40452, 'Invalid expiration date'),
  noPaymentMethods: spec(400, 40457, 'No payment methods available'),
  /** `pay_type: transaction` naming a transaction the gateway does not have (its lookup code, 20001). */
  savedTransactionNotFound: spec(400, 20001, 'Transaction not found'),
  // gateway-facts.md, ACH (a saved bank method's account; the HTTP status is the emulator's)
  invalidRouting: spec(400, 38, 'Invalid routing number'),
  invalidAccount: spec(400, 39, 'Invalid checking account number'),
  // emulator choices
  batchNotFound: spec(404, 99997, 'Batch Not Found'),
  followUpTarget: spec(400, 40011, 'Give exactly one of trankey or refnum'),
  invalidJson: spec(400, 40000, 'Request body is not valid JSON'),
  bodyNotObject: spec(400, 40001, 'Request body must be a JSON object'),
  missingCommand: spec(400, 40002, 'Missing command'),
  unsupportedCommand: spec(400, 40003, 'Unsupported command'),
  missingAmount: spec(400, 40004, 'Missing amount'),
  invalidAmount: spec(400, 40005, 'Invalid amount'),
  missingCard: spec(400, 40006, 'Missing card data'),
  invalidAmountDetail: spec(400, 40007, 'Invalid amount_detail'),
  invalidField: spec(400, 40008, 'Invalid field'),
  ambiguousCard: spec(400, 40009, 'Give either UMCardRef or creditcard, not both'),
  ambiguousPaymentKey: spec(400, 40012, 'Give payment_key without creditcard or UMCardRef'),
  unknownPublicKey: spec(400, 40013, 'Unknown public key'),
  invalidListParam: spec(400, 40010, 'Invalid limit or offset'),
  bodyNotArray: spec(400, 40014, 'Request body must be a JSON array of payment methods'),
  missingCustomerName: spec(400, 40015, 'Give company, or first_name and last_name'),
  invalidCardNumber: spec(400, 40016, 'Invalid card number'),
  bodyTooLarge: spec(413, 41300, 'Request body too large'),
  internal: spec(500, 50000, 'Internal Server Error'),
  badGateway: spec(502, 50200, 'Bad Gateway'),
  unavailable: spec(503, 50300, 'Service Unavailable'),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorName = keyof typeof ERRORS;

export function errorBody(e: ErrorSpec, detail?: string): GatewayErrorBody {
  return { error: detail ? `${e.error}: ${detail}` : e.error, errorcode: e.errorcode };
}

/**
 * Transaction-level errors: HTTP 200 with result_code "E" and a string `error_code` (gateway-facts.md,
 * Transactions). 10142 is what the tokengate client recognises as "card reference invalid".
 */
export const CARDREF_INVALID_ERROR_CODE = '10142';

export const SALE_ERRORS = {
  cardrefInvalid: { error: 'Invalid card reference', error_code: CARDREF_INVALID_ERROR_CODE },
  invalidCardNumber: { error: 'Invalid card number', error_code: '10004' },
  invalidExpiration: { error: 'Invalid expiration date', error_code: '10006' },
  cardExpired: { error: 'Card expired', error_code: '10007' },
  // Pay.js payment keys (emulator choices: the facts name no codes; README, Pay.js).
  paymentKeyUnknown: { error: 'Invalid payment key', error_code: '10210' },
  paymentKeyUsed: { error: 'Payment key already used', error_code: '10211' },
  paymentKeyExpired: { error: 'Payment key expired', error_code: '10212' },
  // A removed payment method's token under SANDBOX_DELETED_CARDREF=refused (gateway-facts.md: exists, no longer valid).
  cardrefRemoved: { error: 'Invalid card reference token (2)', error_code: '602' },
} as const;

export type SaleErrorName = keyof typeof SALE_ERRORS;
