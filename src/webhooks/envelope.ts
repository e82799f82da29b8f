/**
 * The gateway's webhook body, read once its signature holds (gateway-facts.md, Webhooks):
 * `{"type":"event","event_triggered","event_type","event_body":{"merchant","object","changes"},"event_id"}`.
 * The object is "a subset of data from the object involved": a transaction or a batch.
 */
export interface GatewayEvent {
  id: string;
  type: string;
  /** The event's subset object (a transaction or a batch). */
  object: Record<string, unknown>;
}

const ID = /^[A-Za-z0-9_-]{8,128}$/;

/** The event, or undefined when the body is not one (the caller answers 400, echoing nothing). */
export function parseGatewayEvent(text: string): GatewayEvent | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { type, event_id: id, event_type: eventType, event_body: eventBody } = body as Record<string, unknown>;
  if (type !== 'event' || typeof id !== 'string' || !ID.test(id) || typeof eventType !== 'string' || eventType.length > 100) return undefined;
  const object = (eventBody as { object?: unknown } | null | undefined)?.object;
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return undefined;
  return { id, type: eventType, object: object as Record<string, unknown> };
}

/** The event types the intake applies; any other is acknowledged and counted as ignored. */
export const APPLIED_TYPES = [
  'transaction.sale.success', 'transaction.sale.failure', 'transaction.sale.voided', 'transaction.sale.captured', 'transaction.sale.adjusted',
  'transaction.refund.success', 'settlement.batch.success',
] as const;
