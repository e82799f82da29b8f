/**
 * Published test card numbers of every network in src/card/networks.json: what a merchant or a tester is
 * most likely to paste into a request. Sources: the gateway's sandbox cards (shared/gateway-facts.md), and the
 * public test-card pages of Stripe, Braintree, Adyen, Cybersource, Authorize.Net, Worldpay and the Mastercard
 * Gateway. Networks with no public test number we could find get a number built in their range
 * (`constructed`: prefix, zeros, Luhn check digit), so recall is still proved for every row of the table.
 */
export interface TestCard {
  network: string;
  number: string;
  constructed?: true;
}

const published = (network: string, ...numbers: string[]): TestCard[] => numbers.map((number) => ({ network, number }));
const constructed = (network: string, number: string): TestCard => ({ network, number, constructed: true });

export const GATEWAY_TEST_CARDS: readonly string[] = [
  '4000100011112224', '4000100111112223', '4000100211112222', '4000200111112221', '4000300011112220',
  '4000300211112228', '4000300611112224', '4000300811112222', '4000300911112221', '4000301311112225',
  '4000000011112275', '4000000011112283', '4000000011112226', '4000000011112234', '371122223332225',
  '5555444433332226', '6011222233332224',
];

export const TEST_CARDS: readonly TestCard[] = [
  ...GATEWAY_TEST_CARDS.map((number) => ({ network: 'gateway sandbox', number })),
  ...published('Visa', '4242424242424242', '4000056655665556', '4111111111111111', '4012888888881881', '4222222222222', '4007000000027',
    '4012888818888', '4508750015741019', '4012000033330026', '4005519200000004', '4000000760000002'),
  ...published('Mastercard', '5555555555554444', '2223003122003222', '5200828282828210', '5105105105105100', '2223000048400011',
    '5123450000000008', '2223000000000007', '5111111111111118', '2222420000001113', '2222630000001125'),
  ...published('American Express', '378282246310005', '371449635398431', '378734493671000', '370000000000002', '371881634498004'),
  ...published('Discover', '6011111111111117', '6011000990139424', '6011981111111113', '6011000991300009', '6011000000000012'),
  ...published('Diners Club', '3056930009020004', '36227206271667', '30569309025904', '38520000023237', '36259600000004', '38000000000006'),
  ...published('JCB', '3566002020360505', '3530111333300000', '3088000000000017', '3566111111111113'),
  ...published('UnionPay', '6200000000000005', '6200000000000047', '6205500000000000004', '6243030000000001', '6221261111117766',
    '6223164991230014', '8171999927660000', '8171999900000000021', '6250947000000014'),
  ...published('Maestro', '6304000000000000', '6759649826438453', '6799990100000000019', '50339619890917', '586824160825533338',
    '6759411100000008', '6759560045005727054', '5641821111166669', '6703444444444449'),
  ...published('UATP', '135412345678911'),
  ...published('Dankort', '5019717010103742', '5019555544445555'),
  ...published('Elo', '5066991111111118'),
  ...published('Hipercard', '6062828888666688'),
  constructed('Mir', '2200000000000004'),
  constructed('RuPay', '6521000000000007'),
  constructed('Verve', '5061000000000005'),
  constructed('Verve', '5078650000000000004'),
  constructed('Troy', '9792000000000003'),
  constructed('BORICA', '2205000000000009'),
  constructed('UzCard', '8600000000000007'),
  constructed('Humo', '9860000000000000'),
  constructed('LankaPay', '3571110000000000'),
  constructed('InterPayment', '6360000000000001'),
  constructed('InstaPayment', '6370000000000009'),
];

/** How the number is printed on the card: 4-6-5 for 15 digits (Amex), 4-6-4 for 14 (Diners), else fours. */
export function printedGroups(number: string): string[] {
  const widths = number.length === 15 ? [4, 6, 5] : number.length === 14 ? [4, 6, 4] : [];
  if (widths.length === 0) return number.match(/.{1,4}/g) ?? [number];
  const groups: string[] = [];
  let at = 0;
  for (const w of widths) {
    groups.push(number.slice(at, at + w));
    at += w;
  }
  return groups;
}

export const PAN_SEPARATORS = [' ', '-', '.', '_', '/'] as const;

/** Ways people paste a number besides one separator: tabs, doubled spaces, spaced dashes, no-break spaces, en dashes. */
const PASTED_JOINS = ['\t', '  ', ' - ', '\u00a0', '\u2013'] as const;

/** The number unbroken, printed with each separator, and as pasted from documents. */
export function separatorForms(number: string): string[] {
  return [number, ...[...PAN_SEPARATORS, ...PASTED_JOINS].map((sep) => printedGroups(number).join(sep))];
}

/**
 * Digits of other scripts (issue 30, item 3: the contract's "digits of any script"), by the code point of their 0:
 * full-width (what a Japanese keyboard types), Arabic-Indic, Extended Arabic-Indic (Persian, Urdu), Devanagari,
 * Bengali, Thai, Myanmar, and the mathematical bold and monospace digits of "fancy text" generators (two UTF-16 units each).
 */
export const DIGIT_SCRIPTS: Readonly<Record<string, number>> = {
  'full-width': 0xff10, 'Arabic-Indic': 0x0660, 'Extended Arabic-Indic': 0x06f0, Devanagari: 0x0966, Bengali: 0x09e6,
  Thai: 0x0e50, Myanmar: 0x1040, 'mathematical bold': 0x1d7ce, 'mathematical monospace': 0x1d7f6,
};

/** The ASCII digits of the text written in the script whose 0 is `zero`. */
export function inScript(text: string, zero: number): string {
  return text.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + Number(d)));
}

/**
 * Joins the probe found taken as plain text (issue 30, item 3) and their kin: zero-width space, joiners, word joiner,
 * BOM, line and paragraph separators, plus signs, the ideographic space and the full-width hyphen-minus, and what
 * a Japanese IME types for "-" (ー).
 */
export const UNICODE_JOINS = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u2028', '\u2029', '+', '\u3000', '\uff0d', '\u30fc', ' \u200b+\u200b '] as const;

/** The number in every script, unbroken and grouped by every Unicode join, each digit of the groups in its script. */
export function scriptForms(number: string): string[] {
  return Object.values(DIGIT_SCRIPTS).flatMap((zero) => [inScript(number, zero), ...UNICODE_JOINS.map((join) => inScript(printedGroups(number).join(join), zero))]);
}
