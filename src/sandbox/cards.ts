import { luhnValid } from '../card/luhn';
import { maskCardNumber } from '../card/mask';

/** The sandbox test cards and what the emulator answers for each (gateway-facts.md, Sandbox test cards). */

export interface CardOutcome {
  kind: 'approved' | 'declined' | 'partial';
  avs: string;
  cvc: string;
  /** Declines: text and code, e.g. "10127". */
  decline?: { error: string; error_code: string };
  /** Partial approvals: authorised percentage of the amount. */
  partialPercent?: number;
  /** Slow processor cards, in ms at slowCardScale 1. */
  delayMs?: number;
}

const approved = (avs = 'YYY', cvc = 'M', delayMs?: number): CardOutcome => ({ kind: 'approved', avs, cvc, ...(delayMs ? { delayMs } : {}) });
const declined = (error_code: string, error: string): CardOutcome => ({ kind: 'declined', avs: 'YYY', cvc: 'M', decline: { error, error_code } });
const partial = (partialPercent: number): CardOutcome => ({ kind: 'partial', avs: 'YYY', cvc: 'M', partialPercent });

export const TEST_CARDS: ReadonlyMap<string, CardOutcome> = new Map([
  ['4000100011112224', approved('YYY', 'M')],
  ['4000100111112223', approved('YYX')],
  ['4000100211112222', approved('NYZ')],
  ['4000200111112221', approved('YYY', 'N')],
  // The wire text carries the processor's code (UsaEPay.NET commit 7513e85, curl probe), beyond gateway-facts.md's "Card Declined".
  ['4000300011112220', declined('10127', 'Card Declined (00)')],
  ['4000300211112228', declined('10205', 'Do not Honor')],
  ['4000300611112224', declined('10251', 'Insufficient funds')],
  ['4000300811112222', declined('10257', 'Transaction not permitted')],
  ['4000300911112221', declined('10262', 'Restricted Card')],
  ['4000301311112225', declined('10297', 'Declined for CVV failure')],
  ['4000000011112275', partial(50)],
  ['4000000011112283', partial(75)],
  ['4000000011112226', approved('YYY', 'M', 5_000)],
  ['4000000011112234', approved('YYY', 'M', 15_000)],
  ['371122223332225', approved('YYY', 'M')],
  ['5555444433332226', approved()],
  ['6011222233332224', approved()],
]);

/**
 * The AVS and CVC cards of the gateway's test-card page beyond gateway-facts.md (docs/developer-reference-
 * testcards.md in UsaEPay.NET; the .NET client's AvsTests pass against the real sandbox with them). Approved,
 * with the listed AVS / CVC result. The fixtures need not hold them (they are not in TEST_CARDS).
 */
export const REFERENCE_CARDS: ReadonlyMap<string, CardOutcome> = new Map([
  ['4000100311112221', approved('NYW')],
  ['4000100411112220', approved('YNA')],
  ['4000100511112229', approved('NNN')],
  ['4000100611112228', approved('XXW')],
  ['4000100711112227', approved('XXU')],
  ['4000100811112226', approved('XXR')],
  ['4000100911112225', approved('XXS')],
  ['4000101011112222', approved('XXE')],
  ['4000101111112221', approved('XXG')],
  ['4000101211112220', approved('YYG')],
  ['4000101311112229', approved('GGG')],
  ['4000101411112228', approved('YGG')],
  ['4000200011112222', approved('YYY', 'M')],
  ['4000200211112220', approved('YYY', 'P')],
  ['4000200311112229', approved('YYY', 'S')],
  ['4000200411112228', approved('YYY', 'U')],
  ['4000200511112227', approved('YYY', 'X')],
  ['5555444433332234', approved('YYY', 'N')],
  ['5555444433332242', approved('YYY', 'P')],
  ['5555444433332259', approved('YYY', 'S')],
  ['5555444433332267', approved('YYY', 'U')],
  ['5555444433332275', approved('YYY', 'X')],
  ['6011222233332232', approved('YYY', 'N')],
  ['6011222233332240', approved('YYY', 'P')],
  ['6011222233332257', approved('YYY', 'S')],
  ['6011222233332265', approved('YYY', 'U')],
  ['6011222233332273', approved('YYY', 'X')],
]);

/** Any other Luhn-valid number is approved with full matches (an emulator choice; README). */
export function outcomeFor(number: string): CardOutcome {
  return TEST_CARDS.get(number) ?? REFERENCE_CARDS.get(number) ?? approved();
}

/** Result texts for the codes of gateway-facts.md (Transactions). */
export const AVS_TEXT: Readonly<Record<string, string>> = {
  YYY: 'Address: Match & 5 Digit Zip: Match',
  NYZ: 'Address: No Match & 5 Digit Zip: Match',
  YNA: 'Address: Match & 5 Digit Zip: No Match',
  NNN: 'Address: No Match & 5 Digit Zip: No Match',
  YYX: 'Address: Match & 9 Digit Zip: Match',
  NYW: 'Address: No Match & 9 Digit Zip: Match',
  XXW: 'Card Number Not On File',
  XXU: 'Address Information not verified for domestic transaction',
  XXR: 'Retry / System Unavailable',
  XXS: 'Service not supported',
  XXE: 'Address Verification Not Allowed For Card Type',
  XXG: 'Global Non-AVS participant',
  GGG: 'International Address: Match & Postal: Match',
  YYG: 'International Address: Match & Postal: Not Compatible',
  YGG: 'International Address: Not Compatible & Postal: Match',
};

export const CVC_TEXT: Readonly<Record<string, string>> = {
  M: 'Match',
  N: 'No Match',
  P: 'Not Processed',
  S: 'Should be on card but not so indicated',
  U: 'Issuer Not Certified',
  X: 'No response from association',
};

export type CardBrand = 'Visa' | 'MasterCard' | 'American Express' | 'Discover' | 'Unknown';

export function brandOf(number: string): CardBrand {
  if (/^3[47]/.test(number)) return 'American Express';
  if (/^4/.test(number)) return 'Visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return 'MasterCard';
  if (/^(6011|65|64[4-9])/.test(number)) return 'Discover';
  return 'Unknown';
}

/** Token `cardtype` (two digits). Only "03" = Amex is documented (gateway-facts.md); the rest are our choice. */
export const CARD_TYPE_CODE: Readonly<Record<CardBrand, string>> = {
  Visa: '01',
  MasterCard: '02',
  'American Express': '03',
  Discover: '04',
  Unknown: '00',
};

/**
 * `creditcard.type` of a transaction answer: "V" for Visa as captured (UsaEPay.NET WireFormatDeserializationTests,
 * CcSale); the other letters are the emulator's choice.
 */
export const CARD_TYPE_LETTER: Readonly<Record<CardBrand, string>> = {
  Visa: 'V',
  MasterCard: 'M',
  'American Express': 'A',
  Discover: 'DS',
  Unknown: '',
};

export function isCardNumber(number: string): boolean {
  return /^\d{13,19}$/.test(number) && luhnValid(number);
}

export { maskCardNumber };

/** Token shape: four hyphenated groups of four lowercase alphanumerics (gateway-facts.md, Card reference tokens). */
export const CARDREF_SHAPE = /^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/;
