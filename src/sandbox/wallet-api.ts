import type { Body } from './api';
import type { SandboxCore } from './core';
import { ERRORS } from './errors';
import { fail } from './reads';
import type { Processed } from './respond';
import type { ApiRoute } from './routes';
import { createCustomer, deleteCustomer, updateCustomer } from './wallet-customers';
import { addPaymentMethods, deletePaymentMethod, updatePaymentMethod } from './wallet-methods';

/**
 * The wallet's writes (gateway-facts.md, "Managing customers and payment methods"): POST/PUT/DELETE of
 * customers and of their payment methods. Checked like every API call (path, IP, rate limit, authentication,
 * faults) before they get here; the body was read by api.ts.
 */

export type WalletRoute = Extract<ApiRoute, { kind: 'customer_create' | 'customer_update' | 'customer_delete' | 'payment_methods_add' | 'payment_method_update' | 'payment_method_delete' }>;

const WALLET_KINDS = new Set(['customer_create', 'customer_update', 'customer_delete', 'payment_methods_add', 'payment_method_update', 'payment_method_delete']);

export function isWalletRoute(route: ApiRoute): route is WalletRoute {
  return WALLET_KINDS.has(route.kind);
}

/** The JSON of a write's body (a body is required: an empty one is not JSON). */
function json(body: Body | undefined): { value: unknown } | { answer: Processed } {
  if (!body?.ok) return { answer: fail(ERRORS.bodyTooLarge) };
  try {
    return { value: JSON.parse(body.text) };
  } catch {
    return { answer: fail(ERRORS.invalidJson) };
  }
}

export function handleWalletRoute(core: SandboxCore, route: WalletRoute, body: Body | undefined, now: Date): Processed {
  // A DELETE's body is never read: the PHP SDK sends `[]`, the .NET client `{}`; both are accepted as at the gateway.
  if (route.kind === 'customer_delete') return deleteCustomer(core.fixtures, route.customer);
  if (route.kind === 'payment_method_delete') return deletePaymentMethod(core.fixtures, route.customer, route.method);
  const parsed = json(body);
  if ('answer' in parsed) return parsed.answer;
  const format = core.settings.wireFormat;
  switch (route.kind) {
    case 'customer_create':
      return createCustomer(core.fixtures, parsed.value, format);
    case 'customer_update':
      return updateCustomer(core.fixtures, route.customer, parsed.value, format);
    case 'payment_methods_add':
      return addPaymentMethods(core, route.customer, parsed.value, now);
    case 'payment_method_update':
      return updatePaymentMethod(core.fixtures, route.customer, route.method, parsed.value, now);
  }
}
