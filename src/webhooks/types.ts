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
  /**
   * Confirmations to make (src/webhooks/confirm.ts), kept until done so a replica's restart loses none: `item` is
   * due at `dueMs`. `takeDue` hands each due item to one caller only (it is removed as it is taken).
   */
  queueConfirm(item: string, dueMs: number): Promise<void>;
  doneConfirm(item: string): Promise<void>;
  takeDueConfirms(nowMs: number, limit: number): Promise<string[]>;
}

/** How long an event's mark and a sale told of by invoice are kept. */
export const APPLIED_MARK_MS = 5 * 24 * 3600 * 1000;
export const SALE_EVIDENCE_MS = 2 * 24 * 3600 * 1000;
