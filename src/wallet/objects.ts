import type { PaymentMethod } from '../gateway/types';
import type { CustomerRecord } from './types';

/**
 * The wallet's answers as the API gives them (and as its payment events carry them): the payment method object
 * and the customer object, masked (the gateway's masked fields only, never card data).
 *
 * The default card is tokengate's (issue 26, decision 2): the gateway's PUT cannot move it (four fields only),
 * and a customer whose methods all sort after 0 (the fixtures', the real sandbox's) has no gateway default. So the
 * default is, in order: the method a PATCH `default: true` chose; else the gateway's (`sortord` 0); else the
 * lowest `sortord`, then the earliest `added`. Exactly one method is `default: true` when the customer has any.
 */
export type PaymentMethodObject = PaymentMethod;

export interface CustomerObject extends CustomerRecord {
  payment_methods: PaymentMethodObject[];
}

const order = (m: PaymentMethod) => m.sortord ?? Number.MAX_SAFE_INTEGER;

/** The gateway's order: `sortord`, then `added` ("YYYY-MM-DD hh:mm:ss" sorts as text), then the key. */
function byGatewayOrder(a: PaymentMethod, b: PaymentMethod): number {
  return order(a) - order(b) || a.added.localeCompare(b.added) || a.key.localeCompare(b.key);
}

/** The key of the customer's default method (see above), or undefined when it has none. */
export function defaultMethodOf(methods: readonly PaymentMethod[], chosen: string | undefined): string | undefined {
  if (chosen !== undefined && methods.some((m) => m.key === chosen)) return chosen;
  return [...methods].sort(byGatewayOrder)[0]?.key;
}

/** The methods in the gateway's order, each carrying `default` by the wallet's rule. */
export function methodObjects(methods: readonly PaymentMethod[], chosen: string | undefined): PaymentMethodObject[] {
  const def = defaultMethodOf(methods, chosen);
  return [...methods].sort(byGatewayOrder).map((m) => ({ ...m, default: m.key === def }));
}

export function customerObject(customer: CustomerRecord, methods: readonly PaymentMethod[], chosen: string | undefined): CustomerObject {
  return { ...customer, payment_methods: methodObjects(methods, chosen) };
}

/** A customer as the gateway answered it, without the lists tokengate keeps apart. */
export function customerRecordOf(customer: CustomerRecord & { payment_methods?: unknown }): CustomerRecord {
  const { payment_methods: _methods, ...record } = customer;
  return record;
}
