import { brandOf, isCardNumber, maskCardNumber } from './cards';
import type { SandboxCore } from './core';
import type { LifecycleEvent } from './webhooks/events';

/**
 * The gateway's card updater, on request (gateway-facts.md, "The card updater"; issue 37): the networks' updater
 * service changes a stored card and the gateway tells of it with a `cardupdate.*` webhook. No REST call starts it
 * at the gateway, so only tests and scripts do here (`sb.cardUpdate`, `POST /_sandbox/card-updates`).
 *   updated_expiration  the stored method's expiry is the new one (its token lives until then);
 *   updated_card        a new number and expiry behind the same method and token;
 *   account_closed      nothing changes here: the card still answers as its number says (whether a closed
 *                       account's charge is declined, and with which code, is undocumented), the merchant is told;
 *   contact_customer    nothing changes; the merchant is told.
 * The object: `{"type":"cardupdate","original_card":{number (masked),expiration,type},"status":"matched",
 * "updated_card":{…},"source":{"object":"paymethod"|"transaction","key"}}`: `source` names the payment method, or
 * (`source_transaction`) the transaction the caller names, as the reference's examples do both.
 */
export const CARD_UPDATE_KINDS = ['updated_expiration', 'updated_card', 'account_closed', 'contact_customer'] as const;
export type CardUpdateKind = (typeof CARD_UPDATE_KINDS)[number];

export interface CardUpdateRequest {
  custkey: string;
  pmkey: string;
  kind: CardUpdateKind;
  /** MMYY: the new expiry (updated_expiration, updated_card). */
  expiration?: string;
  /** The new card number (updated_card): a test card, never sent anywhere whole. */
  number?: string;
  /** `source` names this transaction instead of the payment method. */
  sourceTransaction?: string;
}

export class CardUpdateError extends Error {}

const cardOf = (number: string, expiration: string) => ({ number: maskCardNumber(number), expiration, type: brandOf(number) });

/** Applies the update to the stored method and returns the change the webhooks announce. */
export function cardUpdate(core: SandboxCore, req: CardUpdateRequest, now: number): LifecycleEvent {
  if (!(CARD_UPDATE_KINDS as readonly string[]).includes(req.kind)) throw new CardUpdateError(`kind must be one of ${CARD_UPDATE_KINDS.join(', ')}`);
  const { method } = core.fixtures.resolve(req.custkey, req.pmkey);
  const original = cardOf(method.number, method.expiration);
  const needsExpiry = req.kind === 'updated_expiration' || req.kind === 'updated_card';
  if (needsExpiry && (typeof req.expiration !== 'string' || !/^(0[1-9]|1[0-2])\d{2}$/.test(req.expiration))) throw new CardUpdateError('expiration must be MMYY');
  if (req.kind === 'updated_card' && (typeof req.number !== 'string' || !isCardNumber(req.number))) throw new CardUpdateError('number must be a card number');
  if (req.kind === 'updated_card') method.number = req.number as string;
  if (needsExpiry) core.fixtures.setExpiration(method, req.expiration as string);
  const updated = needsExpiry ? cardOf(method.number, method.expiration) : {};
  const source = req.sourceTransaction ? { object: 'transaction', key: req.sourceTransaction } : { object: 'paymethod', key: method.key };
  const object = { type: 'cardupdate', original_card: original, status: 'matched', updated_card: updated, source };
  return { type: `cardupdate.${req.kind}`, object, changes: { old: {}, new: {} }, now };
}
