import type { Attempt, CallOptions } from './client';
import { ShapeError, parseCustomer, parseDeleted, parsePaymentMethod, parsePaymentMethods, type OnRedacted } from './parse';
import { CUSTOMER_FIELDS, type Customer, type CustomerFields, type GatewayResult, type NewPaymentMethod, type PaymentMethod, type PaymentMethodChanges } from './types';

/**
 * The wallet at the gateway (gateway-facts.md, "Managing customers and payment methods"): customers and their
 * payment methods, created, read, changed and removed. Reads (`customer`, `payment_method`) may be re-sent once
 * after an answer that proves nothing, like every GET; writes (the other six) never are once they may have
 * reached the gateway (client.ts `call`), like a sale: the caller reconciles. An unknown customer (99999) or
 * payment method (40453) throws GatewayNotFoundError, whatever the HTTP status. A card-shaped number in an
 * answer's field is redacted and reported to `redactedIn(op)` (parse-wallet.ts), the answer kept.
 */

export type WalletOperation =
  | 'customer' | 'customer_create' | 'customer_update' | 'customer_delete'
  | 'payment_method' | 'payment_method_add' | 'payment_method_update' | 'payment_method_delete';

export interface WalletCalls {
  /** `POST /customers`: `company`, or `first_name` and `last_name`; the answer has no `payment_methods`. */
  createCustomer(fields: CustomerFields, options?: CallOptions): Promise<GatewayResult<Customer>>;
  /** `GET /customers/{custkey}`: with its `payment_methods`. */
  getCustomer(custkey: string, options?: CallOptions): Promise<GatewayResult<Customer>>;
  /** `PUT /customers/{custkey}`: only the fields given change ('' clears one); the answer has no `payment_methods`. */
  updateCustomer(custkey: string, fields: CustomerFields, options?: CallOptions): Promise<GatewayResult<Customer>>;
  /** `DELETE /customers/{custkey}`: the customer and all its payment methods. */
  deleteCustomer(custkey: string, options?: CallOptions): Promise<GatewayResult<void>>;
  /** `POST /customers/{custkey}/payment_methods`: one array in, the new methods out, in the same order. */
  addPaymentMethods(custkey: string, methods: readonly NewPaymentMethod[], options?: CallOptions): Promise<GatewayResult<PaymentMethod[]>>;
  /** addPaymentMethods with one method (the API still sends and answers an array). */
  addPaymentMethod(custkey: string, method: NewPaymentMethod, options?: CallOptions): Promise<GatewayResult<PaymentMethod>>;
  getPaymentMethod(custkey: string, pmkey: string, options?: CallOptions): Promise<GatewayResult<PaymentMethod>>;
  /** `PUT …/payment_methods/{pmkey}`: `method_name`, `expires`, `avs_street`, `avs_postalcode` and nothing else. */
  updatePaymentMethod(custkey: string, pmkey: string, changes: PaymentMethodChanges, options?: CallOptions): Promise<GatewayResult<PaymentMethod>>;
  /** `DELETE …/payment_methods/{pmkey}`. The gateway may still honour its cardref: never charge it again. */
  deletePaymentMethod(custkey: string, pmkey: string, options?: CallOptions): Promise<GatewayResult<void>>;
}

type Call = <T>(a: Attempt, parse: (body: unknown) => T, signal?: AbortSignal) => Promise<GatewayResult<T>>;

const customerPath = (custkey: string) => `customers/${encodeURIComponent(custkey)}`;
const methodPath = (custkey: string, pmkey: string) => `${customerPath(custkey)}/payment_methods/${encodeURIComponent(pmkey)}`;

/** Only the documented fields go out, so a caller's object never carries anything else to the gateway. */
function pick<K extends string>(source: Partial<Record<K, unknown>>, names: readonly K[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const n of names) if (source[n] !== undefined) out[n] = source[n];
  return out;
}

const NEW_METHOD_NAMES = ['pay_type', 'transaction_key', 'payment_key', 'method_name', 'default', 'sortord'] as const;
const METHOD_CHANGE_NAMES = ['method_name', 'expires', 'avs_street', 'avs_postalcode'] as const;

export function walletCalls(call: Call, redactedIn: (op: WalletOperation) => OnRedacted): WalletCalls {
  function add(custkey: string, methods: readonly NewPaymentMethod[], signal?: AbortSignal) {
    const body = methods.map((m) => pick(m, NEW_METHOD_NAMES));
    return call({ op: 'payment_method_add', method: 'POST', path: `${customerPath(custkey)}/payment_methods`, body }, (b) => {
      const added = parsePaymentMethods(b, redactedIn('payment_method_add'));
      // One new method per item, in request order: anything else cannot be matched to what was asked.
      if (added.length !== methods.length) throw new ShapeError('the answer does not hold one method per item sent');
      return added;
    }, signal);
  }

  return {
    createCustomer(fields, o) {
      return call({ op: 'customer_create', method: 'POST', path: 'customers', body: pick(fields, CUSTOMER_FIELDS) }, (b) => parseCustomer(b, redactedIn('customer_create')), o?.signal);
    },
    getCustomer(custkey, o) {
      return call({ op: 'customer', method: 'GET', path: customerPath(custkey) }, (b) => parseCustomer(b, redactedIn('customer')), o?.signal);
    },
    updateCustomer(custkey, fields, o) {
      return call({ op: 'customer_update', method: 'PUT', path: customerPath(custkey), body: pick(fields, CUSTOMER_FIELDS) }, (b) => parseCustomer(b, redactedIn('customer_update')), o?.signal);
    },
    deleteCustomer(custkey, o) {
      return call({ op: 'customer_delete', method: 'DELETE', path: customerPath(custkey) }, parseDeleted, o?.signal);
    },
    addPaymentMethods(custkey, methods, o) {
      return add(custkey, methods, o?.signal);
    },
    async addPaymentMethod(custkey, method, o) {
      const result = await add(custkey, [method], o?.signal);
      return { ...result, value: result.value[0] as PaymentMethod };
    },
    getPaymentMethod(custkey, pmkey, o) {
      return call({ op: 'payment_method', method: 'GET', path: methodPath(custkey, pmkey) }, (b) => parsePaymentMethod(b, redactedIn('payment_method')), o?.signal);
    },
    updatePaymentMethod(custkey, pmkey, changes, o) {
      return call({ op: 'payment_method_update', method: 'PUT', path: methodPath(custkey, pmkey), body: pick(changes, METHOD_CHANGE_NAMES) }, (b) => parsePaymentMethod(b, redactedIn('payment_method_update')), o?.signal);
    },
    deletePaymentMethod(custkey, pmkey, o) {
      return call({ op: 'payment_method_delete', method: 'DELETE', path: methodPath(custkey, pmkey) }, parseDeleted, o?.signal);
    },
  };
}
