import table from '../../src/card/character-classes.json';
import { asciiDigits, isDigitKind, kindAt } from '../../src/card/characters';
import { maskCardNumber } from '../../src/card/mask';
import { containsPan, isPan, redactPans, redactPansDeep } from '../../src/card/pan';
import { parsePaymentMethod, parseTransaction, ShapeError } from '../../src/gateway/parse';
import { findCardData } from '../../src/http/card-guard';
import { storedResponseJson } from '../../src/idempotency/scrub';
import { redactValue } from '../../src/observability/redact';
import { scrubAttributes } from '../../src/observability/span-redaction';
import { encodeSaleFields } from '../../src/sale-records/fields';
import { makeLuhnValid, merchantIds } from '../support/merchant-ids';
import { oracleAsciiDigits, oracleHasNetworkCandidate } from '../support/pan-oracle';
import { DIGIT_SCRIPTS, inScript, printedGroups, scriptForms, TEST_CARDS, UNICODE_JOINS } from '../support/test-cards';

/**
 * Card numbers in other scripts (issue 30, item 3; contract.md, 422 card_data_forbidden: "12 to 19 digits of any
 * script … separators of any kind"). An outside probe sent these as a cardholder and a method name: all were
 * taken, stored at the gateway, echoed in every list and kept 24 h in the idempotency record.
 */
const PAN = '4000100011112224';
const PROBE = ['４０００１０００１１１１２２２４', '٤٠٠٠١٠٠٠١١١١٢٢٢٤', '4000\u200b1000\u200b1111\u200b2224', '4000\u20281000\u20281111\u20282224', '4000+1000+1111+2224'];
/** True when the text still holds the card's digits in a row, whatever their script and whatever stands between them. */
const holdsPan = (text: string) => oracleAsciiDigits(text).includes(PAN);

describe('card numbers written in other scripts or joined by other characters', () => {
  it.each(PROBE)('when the probe sends %j, then it is a card number, found, redacted and masked', (form) => {
    expect([isPan(form), containsPan(`name ${form}.`), containsPan(form, { delimited: true })]).toEqual([true, true, true]);
    expect(redactPans(`name ${form}.`)).toBe('name [card].');
    expect(maskCardNumber(form)).toBe('4000xxxxxxxx2224');
  });

  it('when any published test number is written in another script, unbroken or grouped by zero-width, line, plus or ideographic joins, then it is found and redacted', () => {
    for (const { number } of TEST_CARDS) {
      for (const form of scriptForms(number)) {
        const text = `pay ${form} now`;
        expect([form, isPan(form), containsPan(text), oracleAsciiDigits(redactPans(text)).includes(number)]).toEqual([form, true, true, false]);
        expect([form, maskCardNumber(form)]).toEqual([form, number.slice(0, 4) + 'x'.repeat(number.length - 8) + number.slice(-4)]);
      }
    }
  });

  it('when digits of several scripts are mixed in one number, then each is read by its value', () => {
    const zeros = Object.values(DIGIT_SCRIPTS);
    const mixed = [...PAN].map((d, i) => inScript(d, zeros[i % zeros.length] as number)).join('');
    expect([containsPan(mixed), isPan(mixed), asciiDigits(mixed)]).toEqual([true, true, PAN]);
  });

  it('when zero-width characters stand among the separators, then only the visible ones count toward the three allowed', () => {
    expect(containsPan('4000 \u200b\u200b\u200b\u200b\u200b 1000 \u2060 1111\ufeff\ufeff2224')).toBe(true);
    expect(containsPan('4̲0̲0̲0̲ 1̲0̲0̲0̲ 1̲1̲1̲1̲ 2̲2̲2̲4̲')).toBe(true); // combining low lines: underlined digits
    expect(containsPan('４０００\u3000\u3000\u3000\u3000１０００\u3000\u3000\u3000\u3000１１１１\u3000\u3000\u3000\u3000２２２４')).toBe(false);
    expect(containsPan('4000+-+1000+-+1111+-+2224')).toBe(true);
  });

  it('when other digits are glued to a card number in another script, then the unbroken stretch is not one', () => {
    expect(containsPan('４０００１０００１１１１２２２４００００')).toBe(false);
    expect(containsPan(inScript(makeLuhnValid('4000100011112225'), 0x0660))).toBe(true);
    expect(containsPan(inScript('4000100011112225', 0x0660))).toBe(false); // fails Luhn
  });

  it('when merchant ids outside every network (clock values, snowflakes, order numbers, GTINs, phone numbers) are written in another script, then none is card data', () => {
    // UUIDs aside: hex digits are ASCII, so a "UUID" with full-width digits is no canonical one (and no program writes one).
    const outside = merchantIds(3000).filter((id) => id.kind !== 'uuid' && !oracleHasNetworkCandidate(id.text));
    for (const [script, zero] of Object.entries(DIGIT_SCRIPTS)) {
      const refused = outside.map((id) => inScript(id.text, zero)).filter((text) => containsPan(text) || containsPan(text, { delimited: true }));
      expect([script, refused]).toEqual([script, []]);
    }
  });
});

describe('what each character is to the rule (src/card/character-classes.json)', () => {
  it('when Intl writes 0 to 9 in any numbering system Unicode calls decimal, then each digit reads as its value', () => {
    let systems = 0;
    for (const system of Intl.supportedValuesOf('numberingSystem')) {
      const written = new Intl.NumberFormat('en', { numberingSystem: system, useGrouping: false }).format(1234567890);
      if (!/^\p{Nd}{10}$/u.test(written)) continue;
      expect([system, asciiDigits(written)]).toEqual([system, '1234567890']);
      systems++;
    }
    expect(systems).toBeGreaterThan(50);
  });

  it("when the table is compared with this Node's Unicode classes, then every digit, separator and invisible character agrees", () => {
    // Stale after a Node upgrade brings new digits or marks: rerun `node scripts/card-characters.js`.
    const extra = new Set(Object.keys(table.extraSeparators).map((h) => parseInt(h, 16)));
    const disagree: string[] = [];
    for (const base of [0, 0x10000, 0xe0000]) {
      for (let cp = base; cp < base + 0x10000; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        const ch = String.fromCodePoint(cp);
        const expected = /\p{Nd}/u.test(ch) ? Number(oracleAsciiDigits(ch))
          : /[\p{Default_Ignorable_Code_Point}\p{Mn}\p{Me}]/u.test(ch) ? 'invisible'
          : /[\p{White_Space}\p{Pd}]/u.test(ch) || extra.has(cp) ? 'separator' : 'other';
        const kind = kindAt(ch, 0) & 15;
        const actual = isDigitKind(kind) ? kind : ['separator', 'invisible', 'other'][kind - 10];
        if (actual !== expected) disagree.push(`U+${cp.toString(16)} ${String(actual)} != ${String(expected)}`);
      }
    }
    expect(disagree).toEqual([]);
  });

  it('when a surrogate stands alone or at the end of the text, then it is no digit', () => {
    expect(isDigitKind(kindAt('\ud835', 0))).toBe(false);
    expect(isDigitKind(kindAt('\ud835x', 0))).toBe(false);
    expect(containsPan('\udfce4000100011112224\ud835')).toBe(true);
  });
});

describe('every place the detector guards', () => {
  const latin1 = (text: string) => Buffer.from(text, 'utf8').toString('latin1'); // how Node hands UTF-8 header bytes over

  it.each(PROBE)('when %j is sent in a body, query, path or header, then the guard finds it there', (form) => {
    const at = (req: { headers?: Record<string, string>; originalUrl?: string; query?: unknown; body?: unknown }) =>
      findCardData({ headers: {}, originalUrl: '/v1/sales', query: {}, ...req });
    expect(at({ body: { cardholder: form, method_name: 'mine' } })).toBe('body');
    expect(at({ originalUrl: `/v1/sales?note=${encodeURIComponent(form)}`, query: { note: form } })).toBe('query');
    expect(at({ originalUrl: `/v1/customers/${encodeURIComponent(form)}/payment_methods` })).toBe('path');
    expect(at({ headers: { 'x-note': latin1(`pay ${form}`) } })).toBe('header');
    expect(containsPan(JSON.stringify({ cardholder: form }))).toBe(true); // the raw body, before JSON.parse
  });

  it.each(PROBE)('when %j reaches a log line, a span, a stored replay or a sale record, then it is scrubbed or left out', (form) => {
    expect(holdsPan(JSON.stringify(redactValue({ message: `cardholder ${form}`, meta: { name: form } })))).toBe(false);
    const attributes: Record<string, string> = { 'app.cardholder': form };
    scrubAttributes(attributes);
    expect(holdsPan(JSON.stringify(attributes))).toBe(false);
    expect(holdsPan(storedResponseJson({ status: 201, body: { cardholder: form, method_name: `x ${form}` }, headers: {} }))).toBe(false);
    expect(holdsPan(JSON.stringify(redactPansDeep({ a: [form] })))).toBe(false);
    const pairs = encodeSaleFields({ refnum: '3102154832', result_code: 'A', result: 'Approved', authcode: '1', amount: '1.00', invoice: form });
    expect([pairs.includes('invoice'), holdsPan(pairs.join(' '))]).toEqual([false, false]);
  });

  it.each(PROBE)('when the gateway answers %j in a payment method\'s text, then it is redacted; as a card number, then the answer is refused', (form) => {
    expect(holdsPan(JSON.stringify(parsePaymentMethod({ key: 'pm1', cardholder: form })))).toBe(false);
    expect(() => parseTransaction({ type: 'transaction', key: 'k1', refnum: '1', result_code: 'A', result: 'Approved', authcode: '1', creditcard: { number: form } })).toThrow(ShapeError);
  });

  it('when a masked number holds more than 8 digits of another script, then the gateway client does not trust it', () => {
    const number = '４０００ｘｘ１１１１２２２４'; // ten full-width digits: no card number, not the gateway's mask either
    expect(containsPan(number)).toBe(false);
    expect(() => parseTransaction({ type: 'transaction', key: 'k1', refnum: '1', result_code: 'A', result: 'Approved', authcode: '1', creditcard: { number } })).toThrow(ShapeError);
  });

  it('when a separator is one JSON escapes (form feed, vertical tab), then the stored replay still loses the number', () => {
    for (const join of ['\f', '\u000b', '\f\u200b\u000b']) {
      const form = printedGroups(PAN).join(join);
      expect([JSON.stringify(join), holdsPan(storedResponseJson({ status: 201, body: { note: form }, headers: {} }))]).toEqual([JSON.stringify(join), false]);
    }
  });

  it('when the sandbox or the logger masks a number written in another script or with invisible joins, then no middle digit is printed', () => {
    for (const form of [...PROBE, inScript(PAN, 0x1d7ce), `4000${UNICODE_JOINS.join('')}1000 1111 2224`]) {
      expect([form, maskCardNumber(form)]).toEqual([form, '4000xxxxxxxx2224']);
    }
    expect(maskCardNumber('٣٧١١-٢٢٢٢٣٣-٣٢٢٢٥')).toBe('3711xxxxxxx2225');
  });
});
