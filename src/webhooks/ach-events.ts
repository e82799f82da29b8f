import type { EventDraft, EventSink } from '../events/types';
import { ACH_RANK, type AchStatus, type SaleRecords } from '../sale-records';
import { factsOfView, saleObject } from '../sales/sale-object';
import { methodObjects } from '../wallet/objects';
import type { WalletStore } from '../wallet/types';
import type { Logger } from '../observability/logger';
import type { GatewayEvent } from './envelope';
import type { WebhookStore } from './types';

/**
 * The gateway's `ach.*` webhooks (gateway-facts.md, ACH; contract, "Bank payments"), applied without a gateway read:
 *   ach.submitted  P → B: `sale.submitted` (no longer voidable: a refund credits it back);
 *   ach.settled    → S: `sale.settled`;
 *   ach.returned   → R with `return_code` (from `changes.new.reason`), `returned_at` (`changes.new.returned`) and
 *                  `amount_returned` (what was debited): `sale.returned`, whatever the payment's age;
 *   ach.failed     → E: `sale.failed`;
 *   ach.voided     → V (the sale voided: its record too);
 *   ach.note_added a bank's notice of change: the saved method the sale charged is flagged (code and description
 *                  only; a corrected account or routing number in the note is dropped) and
 *                  `payment_method.bank_notice` is emitted.
 * A status only moves forward (P < B < S < R; E and V end it), so an event older than what the record knows, or
 * the same event twice, changes nothing. Each event's `change` is the sale's and the step's: one event per step.
 * A refund of a returned or failed payment is then refused atomically with the refund bounds (lua/reserve.lua).
 *
 * A refund of a bank payment is a credit to the account, a check transaction of its own, and the gateway tells of
 * its steps with the same `ach.*` events about the refund's key (the sandbox's reading: its ACH clock moves every
 * check; the reference lists the events, not which transactions send them). Tied to its sale through the refund
 * index, as `transaction.refund.*` is: `ach.voided` or `ach.failed` of a refund gives its money back in the sale's
 * view (`refund_voided`, with `refund.voided`: guarantee 12, the view follows the gateway's word); `ach.submitted`
 * and `ach.settled` change nothing; `ach.returned` of a credit (the shopper's bank sent the refund back) is logged
 * and counted, the view unchanged (nothing documents what the gateway then holds). A credit's `ach.returned` or
 * `ach.failed`, and a sale's `ach.failed`, change their settlement lines (onCreditReturned, onFailed). Before this, a voided refund of
 * a bank payment was kept as a step of an unknown sale and its money stayed refunded in the view (the soak's
 * money_views_disagree).
 */
export type AchOutcome = 'applied' | 'kept' | 'unmatched' | 'ignored' | 'invalid';

export interface AchEvents {
  handles(type: string): boolean;
  apply(event: GatewayEvent): Promise<AchOutcome>;
  /** Applies the kept steps of sales whose records now exist (answers how many sales); start() polls it. */
  applyKept(): Promise<number>;
  start(): void;
  stop(): void;
}

export interface AchEventDeps {
  records: Pick<SaleRecords, 'get' | 'view' | 'advanceAch' | 'saleOfRefund' | 'hear'>;
  wallet?: Pick<WalletStore, 'read' | 'putMethod' | 'isRemoved'>;
  events?: EventSink;
  appended?: () => void;
  /**
   * Where a step about a sale not recorded yet is kept (guarantee 14: no return is lost; a sale whose answer was
   * lost is recorded by the reconciler later), and how often kept steps are tried again (ms, default 10 s).
   */
  store?: Pick<WebhookStore, 'keepEarlyAch' | 'earlyAchSales' | 'earlyAchOf' | 'dropEarlyAch'>;
  keptPollMs?: number;
  logger?: Logger;
  /**
   * A return applied (or delivered again): the subscription whose period the sale paid learns of it (src/
   * subscriptions/returns.ts, applied once there), and the sale's settlement line changes (settlements'
   * bank-review.ts, once per return). Called on every delivery, so a crash between the sale's step and this
   * leaves the gateway's retry to finish it.
   */
  onReturned?: (sale: string, code: string | undefined) => Promise<unknown>;
  /**
   * A failure applied (`ach.failed`, or delivered again): it takes a return's path: the subscription whose period
   * the sale paid learns of it (returns.ts `failed`, a hard return), and the sale's settlement line changes as a
   * return's would (bank-review.ts, once), its batch closed or not. Called on every delivery, as onReturned.
   */
  onFailed?: (sale: string) => Promise<unknown>;
  /**
   * A credit of tokengate's (a bank payment's refund) came back: `ach.returned` (the shopper's bank sent it back)
   * or `ach.failed` about the credit's key. Its settlement line changes (bank-review.ts, once); called on every
   * delivery, kept ones included.
   */
  onCreditReturned?: (credit: string, sale: string, back: { how: 'returned' | 'failed'; code?: string; date?: string }) => Promise<unknown>;
}

/** Kept steps tried per poll (oldest first): a bound on one poll's Redis work. */
const KEPT_PER_POLL = 200;

type Step = { status: AchStatus; type?: EventDraft['type'] };
const STEP: Readonly<Record<string, Step>> = {
  'ach.submitted': { status: 'B', type: 'sale.submitted' },
  'ach.settled': { status: 'S', type: 'sale.settled' },
  'ach.returned': { status: 'R', type: 'sale.returned' },
  'ach.failed': { status: 'E', type: 'sale.failed' },
  'ach.voided': { status: 'V' },
};
/** The `ach.*` types the gateway documents (gateway-facts.md, ACH): each its own label in the webhook metric. */
export const ACH_EVENT_TYPES: readonly string[] = ['ach.submitted', 'ach.settled', 'ach.returned', 'ach.failed', 'ach.voided', 'ach.note_added'];
const FORWARD = ['ach.submitted', 'ach.settled', 'ach.returned'].map((t) => STEP[t] as Step);
const KEY = /^[A-Za-z0-9]{1,64}$/;

/** `R01: Insufficient Funds` → R01 (a code the facts list: R and two digits); anything else unknown. */
export function returnCodeOf(reason: unknown): string | undefined {
  return typeof reason === 'string' ? /^\s*(R\d{2})\b/.exec(reason)?.[1] : undefined;
}

/** `C02:Corrected Routing:123456789` → {C02, Corrected Routing}: the corrected data is never read. */
export function noticeOf(note: unknown): { code: string; description: string } | undefined {
  if (typeof note !== 'string') return undefined;
  const m = /^\s*(C\d{2})\s*:\s*([A-Za-z][A-Za-z /&-]{0,60}?)\s*(?::|$)/.exec(note);
  return m ? { code: m[1] as string, description: (m[2] as string).trim() } : undefined;
}

export function createAchEvents(deps: AchEventDeps): AchEvents {
  const { records } = deps;

  async function emit(drafts: EventDraft[]): Promise<void> {
    if (!deps.events || drafts.length === 0) return;
    await deps.events.append(drafts);
    deps.appended?.();
  }

  async function notice(event: GatewayEvent, saleKey: string): Promise<AchOutcome> {
    const sale = await records.get(saleKey);
    const pmkey = sale?.fields?.payment_method;
    const parsed = noticeOf(event.changed?.note);
    if (!parsed) return 'invalid';
    if (!sale || !pmkey || !deps.wallet || (await deps.wallet.isRemoved(sale.customer, pmkey))) return 'unmatched';
    const bankNotice = { ...parsed, received: event.triggered ?? '' };
    const snap = await deps.wallet.read(sale.customer);
    const method = snap.methods.find((m) => m.key === pmkey);
    // Flagged in the customer's view when it holds the method; a view not loaded yet cannot keep the flag (the
    // gateway's list has no such field): the merchant is told either way.
    let data: Record<string, unknown> = { type: 'customerpaymentmethod', key: pmkey, pay_type: 'check', bank_notice: bankNotice };
    if (method) {
      const flagged = { ...method, bank_notice: bankNotice };
      await deps.wallet.putMethod(sale.customer, pmkey, flagged, false);
      data = { ...methodObjects(snap.methods.map((m) => (m.key === pmkey ? flagged : m)), snap.chosenDefault).find((m) => m.key === pmkey) };
    }
    await emit([{ type: 'payment_method.bank_notice', change: `bank_notice:${event.id}`, data: { ...data, customer: sale.customer } }]);
    return 'applied';
  }

  /** Moves the status (lua/ach.lua) and emits each step passed; false when the sale has no bank record. */
  async function advance(saleKey: string, step: Step, returned?: { code?: string; date?: string }): Promise<boolean> {
    // One atomic step in Redis: events applied at once cannot overwrite each other, and only the delivery that
    // moved the status past a step emits that step's event.
    const moved = await records.advanceAch(saleKey, step.status, returned);
    if (!moved) return false;
    if (step.status === 'R' && moved.after === 'R') await deps.onReturned?.(saleKey, returned?.code);
    if (step.status === 'E' && moved.after === 'E') await deps.onFailed?.(saleKey);
    if (moved.after === moved.before) return true; // older news, or the same again
    // Delivered out of order (the gateway does not keep order), a later step tells of the ones before it too.
    const passed = step.status === 'E' || step.status === 'V' ? [step] : FORWARD.filter((s) => ACH_RANK[s.status] > ACH_RANK[moved.before] && ACH_RANK[s.status] <= ACH_RANK[step.status]);
    const view = await records.view(saleKey);
    if (view) {
      const data = saleObject(factsOfView(saleKey, view));
      await emit(passed.flatMap((s) => (s.type ? [{ type: s.type, change: `${s.type}:${saleKey}`, data }] : [])));
    }
    return true;
  }

  /** A step about a refund of a bank payment (a credit, tied to its sale by the refund index); undefined when `key` is no refund tokengate knows. */
  async function refundStep(key: string, type: string, returned?: { code?: string; date?: string }): Promise<AchOutcome | undefined> {
    const saleKey = await records.saleOfRefund(key);
    if (!saleKey) return undefined;
    if (type === 'ach.voided' || type === 'ach.failed') {
      const heard = await records.hear(saleKey, { kind: 'refund_voided', refundKey: key });
      // A failed credit went out in its batch and came back: its settlement line says so (a voided one never went).
      if (type === 'ach.failed') await deps.onCreditReturned?.(key, saleKey, { how: 'failed' });
      return heard === 'absent' || heard === 'unknown_refund' ? 'unmatched' : 'applied';
    }
    if (type === 'ach.returned') {
      deps.logger?.warn('a refund of a bank payment came back from the shopper\'s bank: the sale\'s view still counts it refunded', { sale: saleKey, refund: key });
      await deps.onCreditReturned?.(key, saleKey, { how: 'returned', ...(returned?.code ? { code: returned.code } : {}), ...(returned?.date ? { date: returned.date } : {}) });
      return 'unmatched';
    }
    return 'applied';
  }

  let timer: NodeJS.Timeout | undefined;
  async function applyKept(): Promise<number> {
    if (!deps.store) return 0;
    let done = 0;
    for (const saleKey of await deps.store.earlyAchSales(KEPT_PER_POLL)) {
      const kept = Object.entries(await deps.store.earlyAchOf(saleKey)).flatMap(([type, detail]) => (STEP[type] ? [{ type, step: STEP[type] as Step, detail }] : []));
      let applied = true;
      for (const { step, detail } of kept.sort((a, b) => ACH_RANK[a.step.status] - ACH_RANK[b.step.status])) {
        applied = (await advance(saleKey, step, JSON.parse(detail) as { code?: string; date?: string })) && applied;
        if (!applied) break;
      }
      // Not a sale: perhaps a refund whose answer was lost, now resolved and tied to its sale.
      if (!applied && (await records.saleOfRefund(saleKey))) {
        for (const { type, detail } of kept) await refundStep(saleKey, type, JSON.parse(detail) as { code?: string; date?: string });
        applied = true;
      }
      if (applied) {
        await deps.store.dropEarlyAch(saleKey);
        done += 1;
      }
    }
    return done;
  }

  return {
    handles: (type) => type.startsWith('ach.'),
    async apply(event) {
      const saleKey = event.object.key;
      if (typeof saleKey !== 'string' || !KEY.test(saleKey)) return 'invalid';
      if (event.type === 'ach.note_added') return notice(event, saleKey);
      const step = STEP[event.type];
      if (!step) return 'ignored';
      const change = event.changed ?? {};
      const returned = step.status === 'R' ? { code: returnCodeOf(change.reason), date: typeof change.returned === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(change.returned) ? change.returned : undefined } : undefined;
      if (await advance(saleKey, step, returned)) return 'applied';
      const ofRefund = await refundStep(saleKey, event.type, returned);
      if (ofRefund) return ofRefund;
      // No record yet: kept until it appears (a late return must change the sale, guarantee 14).
      if (deps.store && (await deps.store.keepEarlyAch(saleKey, event.type, JSON.stringify(returned ?? {})))) return 'kept';
      return 'unmatched';
    },
    applyKept,
    start() {
      if (!timer && deps.store) timer = setInterval(() => void applyKept().catch((err: unknown) => deps.logger?.warn('kept ach events: a try failed', { err: String(err) })), deps.keptPollMs ?? 10_000);
      timer?.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
