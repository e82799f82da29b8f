import { hash, randomUUID } from 'node:crypto';
import type { Secret } from '../config/secret';

/**
 * A fresh random seed per call: 32 lowercase hex, one of the seed shapes real clients use (gateway-facts.md).
 * A v4 UUID's 122 random bits without its dashes: randomUUID draws from a buffered CSPRNG pool, where
 * randomBytes(16) is a system call per seed (measured at 1-2 % of the sale path's CPU).
 */
export function randomSeed(): string {
  return randomUUID().replaceAll('-', '');
}

/** `s2/<seed>/<sha256 hex of apiKey + seed + PIN>` (gateway-api-v2.md §5, steps 2–3). */
export function apiHash(apiKey: string, seed: string, pin: string): string {
  const digest = hash('sha256', apiKey + seed + pin, 'hex');
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
