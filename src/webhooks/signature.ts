import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Secret } from '../config/secret';

const WELL_FORMED = /^[0-9a-f]{64}$/;

/**
 * The gateway's `X-Signature` (gateway-facts.md, Webhooks): lowercase hex HMAC-SHA256 of the raw body, keyed with
 * the merchant's signature key. Compared in constant time on equal-length buffers; a missing or malformed header
 * is compared too (against zeros), so it costs the same and answers the same as a wrong one. Nothing of the body
 * is parsed before this holds.
 */
export function signatureHolds(raw: Buffer, header: string | undefined, secret: Secret): boolean {
  const expected = createHmac('sha256', secret.reveal()).update(raw).digest();
  const wellFormed = typeof header === 'string' && WELL_FORMED.test(header);
  const given = wellFormed ? Buffer.from(header, 'hex') : Buffer.alloc(expected.length);
  return timingSafeEqual(expected, given) && wellFormed;
}
