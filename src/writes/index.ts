/** The one idempotency protocol for every write (sales, follow-ups, adding a card) and its error taxonomy. */
export { createWriteProtocol, writeReference, type Attempt, type WriteProtocol, type WriteProtocolDeps, type WriteResult, type WriteSpec, type Written } from './protocol';
export { WriteNotSentError, sentness, unwrapNotSent } from './not-sent';
export { WriteInProgressError, WriteKeyReusedError, WriteOutcomeUnknownError } from './errors';
export { KEEP_AT_LEAST_MS, keepLater, keepNow, type LaterPart, type WhenStoreReady } from './keep-later';
