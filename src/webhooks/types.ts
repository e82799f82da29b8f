/**
 * What the intake keeps in Redis (shared by the replicas): which events took effect, and the sales the gateway
 * told of before tokengate could place them (a sale in flight whose answer will be lost), for the reconciler.
 */
export interface WebhookStore {
  /** Whether the event took effect already (its mark lasts `markMs`, at least 4 days: the gateway retries for ~3). */
  applied(eventId: string): Promise<boolean>;
  markApplied(eventId: string): Promise<void>;
  /** Keeps a sale's subset object under its invoice (masked card number only), for `salesByInvoice`. */
  keepSale(invoice: string, object: Record<string, unknown>): Promise<void>;
  /** The sales the gateway told of under `invoice`, newest last (src/reconcile resolves an unknown sale with them). */
  salesByInvoice(invoice: string): Promise<Record<string, unknown>[]>;
}

/** How long an event's mark and a sale told of by invoice are kept. */
export const APPLIED_MARK_MS = 5 * 24 * 3600 * 1000;
export const SALE_EVIDENCE_MS = 2 * 24 * 3600 * 1000;
