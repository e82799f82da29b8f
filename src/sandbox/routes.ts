import type { RouteKind } from './faults';

/** The gateway's paths under /api/<v2 or endpoint key>/ (spec §4), matched with or without a trailing slash. */

export type ApiRoute =
  | { kind: 'sale' }
  | { kind: 'customers' }
  /** One customer (the PHP SDK's Customers::get with custkey). */
  | { kind: 'customer'; customer: string }
  | { kind: 'payment_methods'; customer: string }
  | { kind: 'payment_method'; customer: string; method: string }
  | { kind: 'cardref'; customer: string; method: string }
  /** The payment lifecycle's reads (lookups.ts) and the batch close. */
  | { kind: 'transaction'; key: string }
  | { kind: 'customer_transactions'; customer: string }
  | { kind: 'batches' }
  | { kind: 'batch'; batch: string }
  | { kind: 'batch_transactions'; batch: string }
  | { kind: 'batch_close' }
  /** The wallet's writes (wallet-api.ts): customers and their payment methods. */
  | { kind: 'customer_create' }
  | { kind: 'customer_update'; customer: string }
  | { kind: 'customer_delete'; customer: string }
  | { kind: 'payment_methods_add'; customer: string }
  | { kind: 'payment_method_update'; customer: string; method: string }
  | { kind: 'payment_method_delete'; customer: string; method: string }
  /** Pay.js: the merchant's public key (gateway-facts.md), a bare JSON string. */
  | { kind: 'publickey' }
  /** `/api/RATELIMT/`, `/api/IPACCESS/` and their `_` forms: no resource behind them. */
  | { kind: 'test-root' };

export const TEST_KEYS = new Set(['RATELIMT', 'IPACCESS']);

export interface ParsedPath {
  /** The segment after /api/, undefined when the path is not under /api/<something>. */
  endpointKey: string | undefined;
  route: ApiRoute | undefined;
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function parseApiPath(method: string, path: string): ParsedPath {
  const parts = path.split('/');
  if (parts[0] !== '' || parts[1] !== 'api' || !parts[2]) return { endpointKey: undefined, route: undefined };
  const endpointKey = decode(parts[2]);
  let rest = parts.slice(3);
  if (rest.length > 0 && rest[rest.length - 1] === '') rest = rest.slice(0, -1); // one trailing slash
  const segs = rest.map(decode);
  if (endpointKey === undefined || segs.some((s) => s === undefined || s === '')) return { endpointKey, route: undefined };
  const s = segs as string[];

  if (TEST_KEYS.has(endpointKey) && (s.length === 0 || (s.length === 1 && s[0] === '_'))) return { endpointKey, route: { kind: 'test-root' } };
  if (method === 'POST' && s.length === 1 && s[0] === 'transactions') return { endpointKey, route: { kind: 'sale' } };
  if (method === 'POST' && s.length === 3 && s[0] === 'batches' && s[1] === 'current' && s[2] === 'close') return { endpointKey, route: { kind: 'batch_close' } };
  const lifecycle = method === 'GET' ? lifecycleRoute(s) : undefined;
  if (lifecycle) return { endpointKey, route: lifecycle };
  if (method === 'GET' && s.length === 1 && s[0] === 'publickey') return { endpointKey, route: { kind: 'publickey' } };
  if (method !== 'GET' && s[0] === 'customers') return { endpointKey, route: walletRoute(method, s) };
  if (method !== 'GET' || s[0] !== 'customers') return { endpointKey, route: undefined };
  if (s.length === 1) return { endpointKey, route: { kind: 'customers' } };
  if (s.length === 2) return { endpointKey, route: { kind: 'customer', customer: s[1] as string } };
  if (s.length === 3 && s[2] === 'payment_methods') return { endpointKey, route: { kind: 'payment_methods', customer: s[1] as string } };
  if (s.length === 4 && s[2] === 'payment_methods') return { endpointKey, route: { kind: 'payment_method', customer: s[1] as string, method: s[3] as string } };
  if (s.length === 5 && s[2] === 'payment_methods' && s[4] === 'cardref') return { endpointKey, route: { kind: 'cardref', customer: s[1] as string, method: s[3] as string } };
  return { endpointKey, route: undefined };
}

/** POST/PUT/DELETE under customers/; the bulk deletes (`…/bulk`) are not emulated (404 like an unknown path). */
function walletRoute(method: string, s: string[]): ApiRoute | undefined {
  if (s.includes('bulk')) return undefined;
  const customer = s[1] as string;
  if (s.length === 1) return method === 'POST' ? { kind: 'customer_create' } : undefined;
  if (s.length === 2) return method === 'PUT' ? { kind: 'customer_update', customer } : method === 'DELETE' ? { kind: 'customer_delete', customer } : undefined;
  if (s[2] !== 'payment_methods') return undefined;
  if (s.length === 3) return method === 'POST' ? { kind: 'payment_methods_add', customer } : undefined;
  if (s.length !== 4) return undefined;
  const pm = s[3] as string;
  return method === 'PUT' ? { kind: 'payment_method_update', customer, method: pm } : method === 'DELETE' ? { kind: 'payment_method_delete', customer, method: pm } : undefined;
}

function lifecycleRoute(s: string[]): ApiRoute | undefined {
  if (s[0] === 'transactions' && s.length === 2) return { kind: 'transaction', key: s[1] as string };
  if (s[0] === 'customers' && s.length === 3 && s[2] === 'transactions') return { kind: 'customer_transactions', customer: s[1] as string };
  if (s[0] !== 'batches') return undefined;
  if (s.length === 1) return { kind: 'batches' };
  if (s.length === 2) return { kind: 'batch', batch: s[1] as string };
  if (s.length === 3 && s[2] === 'transactions') return { kind: 'batch_transactions', batch: s[1] as string };
  return undefined;
}

/** The fault-matching kind of a route (test paths take no faults; single objects match as their lists). */
export function faultKindOf(route: ApiRoute): RouteKind | undefined {
  if (route.kind === 'test-root') return undefined;
  if (route.kind === 'customer' || route.kind === 'customer_create' || route.kind === 'customer_update' || route.kind === 'customer_delete') return 'customers';
  if (route.kind === 'payment_methods_add' || route.kind === 'payment_method_update' || route.kind === 'payment_method_delete') return 'payment_methods';
  if (route.kind === 'publickey') return 'payment_methods'; // Pay.js set-up: faults for payment methods strike it too
  if (route.kind === 'payment_method') return 'payment_methods';
  if (route.kind === 'transaction' || route.kind === 'customer_transactions') return 'lookup';
  if (route.kind === 'batches' || route.kind === 'batch' || route.kind === 'batch_transactions' || route.kind === 'batch_close') return 'batches';
  // POST transactions: the command decides (api.ts reads the body first); 'sale' until then.
  return route.kind;
}
