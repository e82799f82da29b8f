/** Payment events out (contract, "Payment events (out)"; issue 27, items 2 and 4): the log, its delivery, the write table. */
export type { DueEvent, EventDraft, EventLog, EventSink, PaymentEvent, PaymentEventType } from './types';
export { EVENT_ID } from './entries';
export { createRedisEventLog, groupOf, type RedisEventLogOptions } from './redis-event-log';
export { createMemoryEventLog } from './memory-event-log';
export { createEventDelivery, type EventDelivery, type EventDeliverySettings } from './delivery';
export { createEventSigner, type EventSigner } from './signing';
export { createEventMetrics, destinationLabel, type EventMetrics } from './metrics';
export { eventsOfWrite, isWriteOp, type CompletedWrite, type WriteOp } from './write-events';

/** How long the log keeps an event and a change's dedupe mark: the contract's 7 days, and one more. */
export const EVENT_RETENTION_MS = 8 * 24 * 3600 * 1000;
