import { isRoutingNumber } from '../../src/bank/aba';
import { containsBankNumbers } from '../../src/bank/bank-data';
import { findRawPaymentData } from '../../src/http/card-guard';
import { BANK_MISSED_KINDS, BANK_NEGATIVE_KINDS, BANK_POSITIVE_KINDS, bankMissed, bankNegatives, bankPositives, type Sample } from '../support/bank-corpus';
import { merchantIds, seededRandom } from '../support/merchant-ids';

/**
 * Precision and recall of the bank-data rule (issue 38) on test/support/bank-corpus.ts, 1,000 values per kind.
 * docs/card-data.md ("Bank data") publishes these figures; the test pins them, so a change to the rule that moves
 * one must update the page. A value is sent the way a sale carries free text: invoice, description,
 * Idempotency-Key and X-Request-Id, through the guard's one walk. "Refused as bank data" leaves out what the card
 * rule refuses first (a 9-digit and a 6-digit number together may be a card number).
 */
function refusedAsBank(text: string): boolean {
  const body = { customer: 'c1', payment_method: 'pm1', amount: '10.00', invoice: text, description: text };
  return findRawPaymentData({ headers: { 'idempotency-key': text, 'x-request-id': text }, originalUrl: '/v1/sales', query: {}, body })?.kind === 'bank';
}

function countByKind<K extends string>(kinds: readonly K[], samples: readonly Sample<K>[], test: (text: string) => boolean): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const kind of kinds) out[kind] = samples.filter((s) => s.kind === kind && test(s.text)).length;
  return out;
}

const ZERO_KINDS = BANK_NEGATIVE_KINDS.filter((k) => k !== 'phone-pair' && k !== 'two-bare-numbers');

describe('bank rule precision on what merchants send', () => {
  it('when every 9-digit number in the corpus is made a routing number on purpose, then only two bare numbers apart by white space are refused', () => {
    const refused = countByKind(BANK_NEGATIVE_KINDS, bankNegatives(1000, 'forced'), refusedAsBank);
    for (const kind of ZERO_KINDS) expect([kind, refused[kind]]).toEqual([kind, 0]);
    // Two phone numbers joined by ' / ' (one form in five) and two bare numbers are bank details' very shape.
    expect(refused['phone-pair']).toBe(168);
    expect(refused['two-bare-numbers']).toBe(977); // the other 23 are refused first as card numbers
  });

  it('when the 9-digit numbers are random, as a merchant meets them, then 36 phone pairs and 24 bare pairs of 1,000 are refused, nothing else', () => {
    const refused = countByKind(BANK_NEGATIVE_KINDS, bankNegatives(1000, 'random'), refusedAsBank);
    for (const kind of ZERO_KINDS) expect([kind, refused[kind]]).toEqual([kind, 0]);
    expect(refused['phone-pair']).toBe(36);
    expect(refused['two-bare-numbers']).toBe(24);
  });

  it('when the card rule\'s 10,000 merchant identifiers are sent, then none is refused as bank data', () => {
    expect(merchantIds(10_000).filter((id) => refusedAsBank(id.text)).map((id) => id.text)).toEqual([]);
  });

  it('when 100,000 lone 9-digit ids (one in 26 a routing number) are sent bare or as ORD-…, #…, …-0001, then none is refused', () => {
    const rand = seededRandom(9);
    const wrongly: string[] = [];
    let routing = 0;
    for (let i = 0; i < 100_000; i++) {
      const n = String(Math.floor(rand() * 1e9)).padStart(9, '0');
      if (isRoutingNumber(n)) routing++;
      for (const text of [n, `ORD-${n}`, `#${n}`, `${n}-0001`, `order ${n}`]) if (containsBankNumbers(text)) wrongly.push(text);
    }
    expect(wrongly).toEqual([]);
    expect(routing).toBeGreaterThan(3500); // a routing number's checks alone would refuse about 3,800 of these
  });
});

describe('bank rule recall', () => {
  it('when routing and account numbers are written in the forms people type (spaced, slashed, on two lines, MICR, labelled, either order, other scripts), then every one is refused', () => {
    // Through the guard's walk too (its card scan tells the bank rule which values to read); a few are card numbers as well.
    const refusedByGuard = (text: string) => findRawPaymentData({ headers: {}, originalUrl: '/v1/sales', query: {}, body: { description: text } }) !== undefined;
    const found = countByKind(BANK_POSITIVE_KINDS, bankPositives(1000), (text) => containsBankNumbers(text) && refusedByGuard(text));
    for (const kind of BANK_POSITIVE_KINDS) expect([kind, found[kind]]).toEqual([kind, 1000]);
  });

  it('when they are joined by punctuation alone, listed with a comma, or the routing number is itself grouped, then they pass (the rule\'s known limits, docs/card-data.md)', () => {
    const found = countByKind(BANK_MISSED_KINDS, bankMissed(1000), containsBankNumbers);
    for (const kind of BANK_MISSED_KINDS) expect([kind, found[kind]]).toEqual([kind, 0]);
  });
});
