/** The gateway's webhooks in (contract, "Gateway webhooks (in)"; issue 27, item 1). */
export { createGatewayWebhookIntake, type GatewayWebhookIntake, type IntakeDeps, type IntakeResult } from './intake';
export { createWebhookConfirmation, type Confirm, type WebhookConfirmation } from './confirm';
export { createMemoryWebhookStore, createRedisWebhookStore } from './redis-webhook-store';
export { signatureHolds } from './signature';
export type { WebhookStore } from './types';
