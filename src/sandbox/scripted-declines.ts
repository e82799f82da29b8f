import type { CardOutcome } from './cards';

/**
 * "Decline this stored card for the next N attempts, then approve" (issue 37: the test cards decline the same way
 * every time, so dunning could not be tested). Keyed by the payment method; each sale on it takes one attempt and
 * declines with the given code (the decline texts of gateway-facts.md's codes); after the last, the card's own
 * outcome returns. README.md beside this file, "Declines on request".
 */
const TEXTS: Readonly<Record<string, string>> = {
  '10127': 'Card Declined (00)',
  '10205': 'Do Not Honor',
  '10251': 'Insufficient funds',
  '10257': 'Transaction not permitted',
  '10262': 'Restricted Card',
  '79248': 'Customer Requested Stop on Recurring',
};

export const SCRIPTABLE_DECLINE_CODES: readonly string[] = Object.keys(TEXTS);

export class ScriptedDeclines {
  private readonly left = new Map<string, { attempts: number; code: string }>();

  /** The next `attempts` sales on `pmkey` decline with `code` (0 clears it). */
  set(pmkey: string, attempts: number, code = '10251'): void {
    if (!Number.isInteger(attempts) || attempts < 0 || attempts > 1000) throw new Error('attempts must be an integer from 0 to 1000');
    if (!(code in TEXTS)) throw new Error(`error_code must be one of ${SCRIPTABLE_DECLINE_CODES.join(', ')}`);
    if (attempts === 0) this.left.delete(pmkey);
    else this.left.set(pmkey, { attempts, code });
  }

  /** The scripted decline of this sale, if one is left for the method (and one fewer after). */
  take(pmkey: string | undefined, card: CardOutcome): CardOutcome | undefined {
    if (pmkey === undefined) return undefined;
    const entry = this.left.get(pmkey);
    if (!entry) return undefined;
    if (--entry.attempts <= 0) this.left.delete(pmkey);
    return { kind: 'declined', avs: card.avs, cvc: card.cvc, decline: { error: TEXTS[entry.code] ?? 'Declined', error_code: entry.code } };
  }

  clear(): void {
    this.left.clear();
  }
}
