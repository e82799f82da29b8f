import { createHash, randomBytes } from 'node:crypto';
import type { Secret } from '../config/secret';

/** A fresh random seed per call: 32 lowercase hex, one of the seed shapes real clients use (gateway-facts.md). */
export function randomSeed(): string {
  return randomBytes(16).toString('hex');
}

/** `s2/<seed>/<sha256 hex of apiKey + seed + PIN>` (gateway-api-v2.md §5, steps 2–3). */
export function apiHash(apiKey: string, seed: string, pin: string): string {
  const digest = createHash('sha256').update(apiKey + seed + pin, 'utf8').digest('hex');
  return `s2/${seed}/${digest}`;
}

/** `Basic base64(apiKey:apihash)` (§5, steps 4–5). */
export function authorizationHeader(apiKey: string, seed: string, pin: string): string {
  return 'Basic ' + Buffer.from(`${apiKey}:${apiHash(apiKey, seed, pin)}`, 'utf8').toString('base64');
}

/** Signs every gateway call; the key and PIN are revealed only inside this closure. */
export function createSigner(apiKey: Secret, apiPin: Secret, seed: () => string = randomSeed): () => string {
  return () => authorizationHeader(apiKey.reveal(), seed(), apiPin.reveal());
}
