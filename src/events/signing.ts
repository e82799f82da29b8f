import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signatures (standardwebhooks.com; the reference library `standardwebhooks`, which the
 * merchant's receivers verify with): `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`,
 * keyed with the bytes the secret (`whsec_` + base64) decodes to, one entry per configured secret (rotation: a
 * receiver that knows either verifies), separated by spaces.
 */
export interface EventSigner {
  headers(id: string, body: string, at?: Date): Record<string, string>;
}

/** `secrets`: EVENTS_WEBHOOK_SECRET split on spaces (config validated each as whsec_ + base64 of 24 to 64 bytes). */
export function createEventSigner(secrets: readonly string[]): EventSigner {
  const keys = secrets.map((s) => new Webhook(s));
  return {
    headers(id, body, at = new Date()) {
      return {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': keys.map((k) => k.sign(id, at, body)).join(' '),
      };
    },
  };
}
