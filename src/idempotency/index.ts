/** Idempotency keys for writes (sales, follow-ups, adding a card): fingerprinting, the store interface, its Redis and memory implementations. */
export { fingerprintRequest, canonicalJson } from './fingerprint';
export { StoreUnavailableError } from '../redis/errors';
export { createRedisIdempotencyStore, type RedisIdempotencyStoreOptions } from './redis-idempotency-store';
export { createMemoryIdempotencyStore, type MemoryIdempotencyStoreOptions } from './memory-idempotency-store';
export type {
  BeginOptions, BeginResult, IdempotencyStore, IdempotencyStoreSettings, InspectResult, StoredResponse, TransitionResult, CompleteResult, UnknownRecord, WriteContext,
} from './types';
