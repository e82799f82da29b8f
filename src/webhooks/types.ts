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
  /**
   * An `ach.*` step about a sale whose record does not exist yet (guarantee 14: no return is lost), kept
   * EARLY_ACH_MS under the sale's key (`step`: its status, `detail`: what it carries) until the record appears
   * (src/webhooks/ach-events.ts). At most EARLY_ACH_MAX sales are kept: false when full (the event is then
   * answered, counted and logged as before: the gateway's own retries no longer help once it is answered).
   */
  keepEarlyAch(saleKey: string, step: string, detail: string): Promise<boolean>;
  /** The sales with kept steps, oldest first, at most `limit`. */
  earlyAchSales(limit: number): Promise<string[]>;
  /** A sale's kept steps (step, detail). */
  earlyAchOf(saleKey: string): Promise<Record<string, string>>;
  dropEarlyAch(saleKey: string): Promise<void>;
}

/** How long an event's mark and a sale told of by invoice are kept. */
export const APPLIED_MARK_MS = 5 * 24 * 3600 * 1000;
export const SALE_EVIDENCE_MS = 2 * 24 * 3600 * 1000;
/**
 * An `ach.*` event about a sale not recorded yet is kept 4 days: longer than the gateway's retries (~3 days) and
 * than the reconciler takes to record a sale whose answer was lost; the sale records themselves last 400 days
 * (SALE_RECORD_TTL_MS), past any late return (R10 "not authorized" comes up to 60 days after the debit).
 */
export const EARLY_ACH_MS = 4 * 24 * 3600 * 1000;
/** Sales with kept `ach.*` events: a bound on what unmatched events can hold in Redis (about 200 bytes each). */
export const EARLY_ACH_MAX = 10_000;
