import type { Bff } from './bff';

/** One answer of tokengate, parsed (204s have no body). */
export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { error?: { code?: string; message?: string; custkey?: string; details?: { path: string; rule: string }[] } };
}

/** Calls tokengate at `base` with a bearer token, an optional JSON body and Idempotency-Key. */
export async function call(base: string, method: string, path: string, bearer: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const h: Record<string, string> = { authorization: `Bearer ${bearer}`, ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? {} : (JSON.parse(text) as Answer['body']) };
}

/** Calls the sandbox accepted from this endpoint key so far (every kind): the gateway calls tokengate made. */
export function gatewayCalls(bff: Bff): number {
  return bff.sandbox.stats().endpoints.v2?.accepted ?? 0;
}

/** Gateway calls by the sandbox's kind (`customers`, `payment_methods`, `sale`, `cardref`, …). */
export function gatewayCallsOf(bff: Bff, kind: string): number {
  return bff.sandbox.stats().endpoints.v2?.acceptedByKind[kind] ?? 0;
}

/** A payment key minted the way the Pay.js card iframe mints it, for a test card (the public key from tokengate). */
export async function mintPaymentKey(bff: Bff, bearer: string, number: string, expiration = '1230'): Promise<string> {
  const config = await call(bff.url, 'GET', '/v1/payment-config', bearer);
  const res = await fetch(`${bff.sandbox.url}/js/v2/payment_key`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ public_key: config.body.public_key, card: { number, expiration, cvc: '123' } }),
  });
  const body = (await res.json()) as { payment_key?: string };
  if (res.status !== 200 || !body.payment_key) throw new Error(`mint: ${res.status}`);
  return body.payment_key;
}
