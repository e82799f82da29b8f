import { hash } from 'node:crypto';

/** The stable reference of the write under (scope, key): a hash, so it carries neither into other records. */
export function writeReference(scope: string, key: string): string {
  return hash('sha256', `${scope}\u0000${key}`, 'base64url').slice(0, 24);
}

/**
 * The custom field tokengate tags its refunds in (issue 42). The reference documents `custom_fields` on the
 * `refund` and `refund:adjust` requests and on a transaction's look-up and list items, so a refund's own
 * transaction in the batch lists says which write made it (no documented field of a refund names its sale).
 * The merchant sets field 20 up in the console (docs/operations.md); where the gateway drops it, an unknown
 * refund is never proven absent by its missing tag (src/reconcile/find-refund.ts).
 */
export const WRITE_TAG_FIELD = '20';

const TAG_PREFIX = 'tokengate:';

/** The custom fields a refund of this write carries: its reference, nothing of the caller's. */
export function writeTag(reference: string): Record<string, string> {
  return { [WRITE_TAG_FIELD]: `${TAG_PREFIX}${reference}` };
}

/** The write reference a transaction's custom fields name, or undefined when it carries no tokengate tag. */
export function taggedReference(customFields: Readonly<Record<string, string>> | undefined): string | undefined {
  const v = customFields?.[WRITE_TAG_FIELD];
  return v?.startsWith(TAG_PREFIX) ? v.slice(TAG_PREFIX.length) : undefined;
}
