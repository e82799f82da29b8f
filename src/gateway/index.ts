export * from './client';
export * from './errors';
export * from './types';
export { parseRateLimitHeader, formatRateLimitHeader } from './rate-limit-header';
export { apiHash, authorizationHeader, createSigner, randomSeed } from './signer';
export type { WalletCalls, WalletOperation } from './wallet-calls';
