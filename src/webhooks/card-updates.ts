import type { EventSink } from '../events/types';
import type { PaymentMethod } from '../gateway/types';
import type { SaleRecords } from '../sale-records';
import type { TokenService } from '../tokens/token-service';
import { methodObjects } from '../wallet/objects';
import type { WalletStore } from '../wallet/types';
import type { GatewayEvent } from './envelope';

/**
 * The gateway's card updater (gateway-facts.md, "The card updater"; issue 37, item 1): `cardupdate.<kind>` (the
 * reference's list spells it `cau.<kind>`), object `{"type":"cardupdate","original_card","status",
 * "updated_card":{number (masked), expiration (MMYY), type},"source":{"object":"paymethod"|"transaction","key"}}`.
 * The event names a payment method (or a transaction that charged it), never its customer: the wallet's index
 * (`customerOf`, written whenever tokengate learns a card) finds it; a sale tokengate made names both.
 *   updated_expiration, updated_card  the view's method takes the new expiry and last four (a view not loaded
 *                                     reads the gateway when next asked), the cached cardref token is dropped
 *                                     (it carries the old expiry), `payment_method.updated` is emitted;
 *   account_closed                    the card is flagged closed: the next renewal on it is a hard decline
 *                                     without a gateway call; `payment_method.updated` is emitted; a later
 *                                     `updated_card` (a new card behind the method) lifts the flag, a later
 *                                     `updated_expiration` does not (the closed account's card, a new date);
 *   created, submitted, contact_customer  nothing changes: acknowledged as ignored.
 * No gateway call is made here; applying an event twice changes nothing more (the intake's mark, and the
 * event log's dedupe on `change`, the event's own id).
 */
export type CardUpdateOutcome = 'applied' | 'unmatched' | 'ignored' | 'invalid';

export interface CardUpdates {
  /** Whether this event type is the card updater's. */
  handles(type: string): boolean;
  apply(event: GatewayEvent): Promise<CardUpdateOutcome>;
}

export interface CardUpdateDeps {
  wallet: Pick<WalletStore, 'customerOf' | 'read' | 'putMethod' | 'forget' | 'flagClosed' | 'clearClosed' | 'isRemoved'>;
  tokens: Pick<TokenService, 'evict'>;
  records: Pick<SaleRecords, 'get'>;
  events?: EventSink;
  appended?: () => void;
}

const KIND = /^(?:cardupdate|cau)\.([a-z_]{1,40})$/;
const CHANGING = new Set(['updated_expiration', 'updated_card', 'account_closed']);
const MMYY = /^(0[1-9]|1[0-2])\d{2}$/;
const KEY = /^[A-Za-z0-9_-]{1,64}$/;

const record = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** The new card's fields the view keeps (masked number: its last four only). */
function updatedFields(object: Record<string, unknown>): Partial<Pick<PaymentMethod, 'expires' | 'ccnum4last' | 'card_type'>> | undefined {
  const card = record(object.updated_card);
  if (!card) return undefined;
  const out: Partial<Pick<PaymentMethod, 'expires' | 'ccnum4last' | 'card_type'>> = {};
  const exp = typeof card.expiration === 'string' ? card.expiration : typeof card.expires === 'string' ? card.expires : undefined;
  if (exp !== undefined && MMYY.test(exp)) out.expires = exp;
  const last4 = typeof card.number === 'string' ? /(\d{4})$/.exec(card.number)?.[1] : undefined;
  if (last4) out.ccnum4last = last4;
  if (typeof card.type === 'string' && card.type.length <= 40) out.card_type = card.type;
  return out;
}

export function createCardUpdates(deps: CardUpdateDeps): CardUpdates {
  const { wallet, tokens } = deps;

  /** The customer and method the event's `source` names, when tokengate knows them. */
  async function owner(object: Record<string, unknown>): Promise<{ custkey: string; pmkey: string } | undefined | 'invalid'> {
    const source = record(object.source);
    const key = source?.key;
    if (typeof key !== 'string' || !KEY.test(key)) return 'invalid';
    if (source?.object === 'transaction') {
      const sale = await deps.records.get(key);
      const pmkey = sale?.fields?.payment_method;
      return sale && pmkey ? { custkey: sale.customer, pmkey } : undefined;
    }
    if (source?.object !== 'paymethod') return 'invalid';
    const custkey = await wallet.customerOf(key);
    return custkey === undefined ? undefined : { custkey, pmkey: key };
  }

  return {
    handles: (type) => KIND.test(type),
    async apply(event) {
      const kind = KIND.exec(event.type)?.[1] ?? '';
      if (!CHANGING.has(kind)) return 'ignored';
      const found = await owner(event.object);
      if (found === 'invalid') return 'invalid';
      if (!found || (await wallet.isRemoved(found.custkey, found.pmkey))) return 'unmatched';
      const { custkey, pmkey } = found;
      if (kind === 'account_closed') {
        await wallet.flagClosed(custkey, pmkey);
      } else {
        const fields = updatedFields(event.object);
        if (!fields) return 'invalid';
        const snap = await wallet.read(custkey);
        const method = snap.methods.find((m) => m.key === pmkey);
        // A view not loaded (or not holding the card): the next read asks the gateway, which has the new card.
        if (method && snap.seenMs !== undefined) await wallet.putMethod(custkey, pmkey, { ...method, ...fields }, false);
        else await wallet.forget(custkey);
        if (kind === 'updated_card') await wallet.clearClosed(custkey, pmkey);
      }
      await tokens.evict(custkey, pmkey);
      if (deps.events) {
        const snap = await wallet.read(custkey);
        const data = methodObjects(snap.methods, snap.chosenDefault).find((m) => m.key === pmkey) ?? { type: 'customerpaymentmethod', key: pmkey, customer: custkey };
        await deps.events.append([{ type: 'payment_method.updated', change: `payment_method.updated:${event.id}`, data }]);
        deps.appended?.();
      }
      return 'applied';
    },
  };
}
