import { createHmac, randomBytes } from 'node:crypto';
import { gatewayTime } from '../lookups';
import type { LifecycleEvent } from './events';

/**
 * The body the gateway posts (gateway-facts.md, Webhooks):
 * `{"type":"event","event_triggered","event_type","event_body":{"merchant":{"merch_key"},"object","changes":{"old","new"}},"event_id"}`,
 * serialised once, so every delivery of one event (retries, duplicates) sends the same bytes under the same
 * signature.
 */

export interface WebhookEvent {
  event_id: string;
  event_type: LifecycleEvent['type'];
  event_triggered: string;
  /** The exact bytes posted and signed. */
  raw: string;
}

/** `event_triggered` is the sandbox clock at the change, to the second, UTC (as every gateway time here). */
export function buildEvent(change: LifecycleEvent, merchKey: string): WebhookEvent {
  const event_id = randomBytes(32).toString('hex');
  const event_triggered = gatewayTime(change.now);
  const payload = {
    type: 'event',
    event_triggered,
    event_type: change.type,
    event_body: { merchant: { merch_key: merchKey }, object: change.object, changes: change.changes },
    event_id,
  };
  return { event_id, event_type: change.type, event_triggered, raw: JSON.stringify(payload) };
}

/** X-Signature: lowercase hex HMAC-SHA256 of the raw body keyed with the merchant's signature key; nothing else signed. */
export function signatureOf(raw: string, secret: string): string {
  return createHmac('sha256', secret).update(raw, 'utf8').digest('hex');
}
