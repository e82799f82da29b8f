/**
 * A corpus for the bank-data rule's precision and recall (issue 38; docs/card-data.md, "Bank data"): what
 * merchants send in free-text fields (order and invoice numbers, phone numbers of many countries, dates and times,
 * ZIP+4 and addresses, SSN shapes, amounts, references, UUIDs, snowflake ids) and bank details in the forms people
 * type them. Deterministic for a seed.
 *
 * `routing: 'forced'` makes EVERY 9-digit number in the negatives a routing number (a Federal Reserve routing
 * symbol and the ABA checksum, chosen on purpose), the worst case, as the card corpus makes every id Luhn-valid:
 * then only the rule's other conditions (beside an account-like number, not inside an identifier) keep a value
 * through. `'random'` leaves them random: what a merchant meets (one in 26 is a routing number).
 */
import { seededRandom } from './merchant-ids';

type Rand = () => number;
const int = (rand: Rand, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
const digitsOf = (rand: Rand, n: number) => Array.from({ length: n }, () => String(int(rand, 0, 9))).join('');
const two = (n: number) => String(n).padStart(2, '0');

const SYMBOLS = [...Array.from({ length: 13 }, (_, n) => n), ...Array.from({ length: 12 }, (_, n) => 21 + n), ...Array.from({ length: 12 }, (_, n) => 61 + n), 80];
const WEIGHTS = [3, 7, 1, 3, 7, 1, 3, 7];

/** Nine digits made a routing number: `lead` (or a routing symbol), random middle digits, the ABA check digit. */
export function makeRouting(rand: Rand, lead?: string): string {
  const body = ((lead ?? two(pick(rand, SYMBOLS))) + digitsOf(rand, 8)).slice(0, 8);
  const sum = Array.from(body).reduce((s, c, k) => s + (WEIGHTS[k] as number) * Number(c), 0);
  return body + String((10 - (sum % 10)) % 10);
}

export type BankNegativeKind =
  | 'order-id' | 'order-with-numbers' | 'phone' | 'phone-pair' | 'date-time' | 'zip-address' | 'ssn' | 'invoice'
  | 'amount' | 'reference' | 'uuid' | 'snowflake' | 'two-bare-numbers';

export interface Sample<K> {
  kind: K;
  text: string;
}

/** A 9-digit number as the corpus needs it: a routing number (forced), or random digits (random). */
type Nine = (lead?: string) => string;

const date = (rand: Rand) => {
  const [y, m, d] = [int(rand, 2015, 2035), int(rand, 1, 12), int(rand, 1, 28)];
  return pick(rand, [`${y}-${two(m)}-${two(d)}`, `${two(d)}/${two(m)}/${y}`, `${two(m)}/${two(d)}/${y}`, `${two(d)}.${two(m)}.${y}`, `${y}/${two(m)}/${two(d)}`]);
};
const time = (rand: Rand) => pick(rand, [`${two(int(rand, 0, 23))}:${two(int(rand, 0, 59))}`, `${two(int(rand, 0, 23))}:${two(int(rand, 0, 59))}:${two(int(rand, 0, 59))}`, `${int(rand, 1, 12)}:${two(int(rand, 0, 59))} pm`]);
const amount = (rand: Rand) => pick(rand, [`${int(rand, 1, 99999)}.${two(int(rand, 0, 99))}`, `$${int(rand, 1, 999)},${String(int(rand, 0, 999)).padStart(3, '0')}.${two(int(rand, 0, 99))}`, `${int(rand, 1, 9999)},${two(int(rand, 0, 99))} EUR`, `USD ${int(rand, 1000, 99999)}.00`]);
const hex = (rand: Rand, n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(rand, 0, 15)]).join('');

const NEGATIVES: Readonly<Record<BankNegativeKind, (rand: Rand, nine: Nine) => string>> = {
  'order-id': (rand, nine) => {
    const n = nine();
    return pick(rand, [n, `ORD-${n}`, `order ${n}`, `#${n}`, `${n}-${int(rand, 1, 9999)}`, `${n}/${int(rand, 1, 99)}`, `INV-${int(rand, 2015, 2035)}-${n}`, `${n}_${digitsOf(rand, 4)}`, `PO${n}`, `Order No. ${n}`]);
  },
  'order-with-numbers': (rand, nine) => {
    const n = nine();
    return pick(rand, [
      `Order ${n}, ${int(rand, 1, 5000)} items`, `Order ${n} for ${int(rand, 1, 5000)} items`, `Order ${n} total ${amount(rand)}`,
      `Order ${n} placed ${date(rand)} ${time(rand)}`, `${n} ${date(rand)}`, `${date(rand)} ${n}`, `${n} ${amount(rand)}`, `${n} ${time(rand)}`,
      `Order ${n}, ship to ${int(rand, 1, 9999)} Main St`, `${n} x ${int(rand, 1000, 9999)}`, `${n}, ${digitsOf(rand, int(rand, 4, 12))}`,
      `${n}; ${digitsOf(rand, int(rand, 4, 12))}`, `qty ${int(rand, 1000, 9999)} order ${n}`,
    ]);
  },
  phone: (rand, nine) =>
    pick(rand, [
      `(${digitsOf(rand, 3)}) ${digitsOf(rand, 3)}-${digitsOf(rand, 4)}`, `+1 ${digitsOf(rand, 3)} ${digitsOf(rand, 3)} ${digitsOf(rand, 4)}`, `${digitsOf(rand, 3)}-${digitsOf(rand, 3)}-${digitsOf(rand, 4)}`,
      `+34 ${nine('6')}`, `+34 ${nine('7')}`, `+971 ${nine('5')}`, `+353 ${nine('8')}`, `+33 ${nine('6')}`, `+972 ${nine('5')}`, `+420 ${nine('6')}`, `+380 ${nine('6')}`,
      `+44 7700 ${digitsOf(rand, 6)}`, `+49 1512 ${digitsOf(rand, 7)}`, `+86 138 ${digitsOf(rand, 4)} ${digitsOf(rand, 4)}`, `+33 6 ${two(int(rand, 0, 99))} ${two(int(rand, 0, 99))} ${two(int(rand, 0, 99))} ${two(int(rand, 0, 99))}`,
      `+91 ${digitsOf(rand, 5)} ${digitsOf(rand, 5)}`, `+55 11 9${digitsOf(rand, 4)}-${digitsOf(rand, 4)}`, `${nine('6')}`, `tel:+34-${nine('6')}`, `+1-800-${digitsOf(rand, 3)}-${digitsOf(rand, 4)} ext. ${digitsOf(rand, 4)}`,
    ]),
  // Two national numbers in one field, the way a shopper types them: joined by ' / ' they are two numbers beside each other.
  'phone-pair': (rand, nine) => pick(rand, [`${nine('6')} / ${nine('6')}`, `${nine('6')} or ${nine('7')}`, `${nine('6')}, ${nine('6')}`, `+34 ${nine('6')} / +34 ${nine('6')}`, `mobile ${nine('6')} home ${nine('9')}`]),
  'date-time': (rand, nine) => pick(rand, [`${date(rand)} ${time(rand)}`, `${date(rand)}T${time(rand)}:00Z`, `delivered ${date(rand)} ${time(rand)}`, `${nine()} ${date(rand)} ${time(rand)}`, `${date(rand)} ${time(rand)} ${nine()}`, `${time(rand)} ${nine()}`]),
  'zip-address': (rand, nine) => {
    const zip = `${digitsOf(rand, 5)}-${digitsOf(rand, 4)}`;
    return pick(rand, [
      `${int(rand, 1, 9999)} Main St, Springfield, IL ${zip}`, `${int(rand, 1, 99999)} Elm Avenue Apt ${int(rand, 1, 999)}, Austin TX ${zip}`,
      `Springfield IL ${nine()}`, `PO Box ${int(rand, 1, 99999)}, Denver CO ${nine()}`, `${int(rand, 1000, 99999)} Sunset Blvd, ${nine()}`, zip, nine(),
    ]);
  },
  ssn: (rand, nine) => {
    const n = nine();
    return pick(rand, [`${n.slice(0, 3)}-${n.slice(3, 5)}-${n.slice(5)}`, `${n.slice(0, 3)} ${n.slice(3, 5)} ${n.slice(5)}`, n, `SSN ${n}`, `ssn: ${n}`]);
  },
  invoice: (rand, nine) => {
    const n = nine();
    return pick(rand, [`INV-${int(rand, 2015, 2035)}-${n}`, `${int(rand, 2015, 2035)}-${n}`, `${n}-${digitsOf(rand, 4)}`, `${n}/${digitsOf(rand, 6)}`, `${n}.${digitsOf(rand, 5)}`, `INV ${n}-${digitsOf(rand, 4)}`, `Invoice ${n} PO ${digitsOf(rand, 6)}`, `invoice #${n}`]);
  },
  amount: (rand, nine) => pick(rand, [amount(rand), `${nine()}.00`, `$${nine()}.${two(int(rand, 0, 99))}`, `${nine()},${two(int(rand, 0, 99))} EUR`, `total ${amount(rand)} on ${nine()}`]),
  reference: (rand, nine) => pick(rand, [`REF ${nine()}`, `Ref: ${nine()}/${int(rand, 1, 999)}`, `Store ${int(rand, 1000, 9999)} / Register ${int(rand, 1, 99)} / Txn ${nine()}`, `Batch ${nine()} line ${int(rand, 1000, 9999)}`, `cust-${nine()}-${digitsOf(rand, 6)}`, `${nine()}@shop.example`, `SKU ${nine()} qty ${int(rand, 1000, 9999)}`]),
  uuid: (rand, nine) => {
    const n = nine() + digitsOf(rand, 3);
    return pick(rand, [`${hex(rand, 8)}-${hex(rand, 4)}-4${hex(rand, 3)}-a${hex(rand, 3)}-${n}`, `${n.slice(0, 8)}-${n.slice(8)}-4${digitsOf(rand, 3)}-${digitsOf(rand, 4)}-${hex(rand, 12)}`, `${hex(rand, 8)}-${hex(rand, 4)}-4${hex(rand, 3)}-${digitsOf(rand, 4)}-${n}`]);
  },
  snowflake: (rand, nine) => pick(rand, [`${digitsOf(rand, 18)}`, `msg-${digitsOf(rand, 19)}`, `${nine()}${digitsOf(rand, 9)}`, `${digitsOf(rand, 18)} ${nine()}`]),
  // Indistinguishable from bank details: two bare numbers, one of 9 digits, apart by white space. Reported, not hidden.
  'two-bare-numbers': (rand, nine) => pick(rand, [`${nine()} ${digitsOf(rand, int(rand, 4, 12))}`, `${digitsOf(rand, int(rand, 4, 12))} ${nine()}`, `${nine()} / ${digitsOf(rand, int(rand, 4, 12))}`]),
};

export const BANK_NEGATIVE_KINDS = Object.keys(NEGATIVES) as BankNegativeKind[];

/** `perKind` values of every kind, the kinds in turn. */
export function bankNegatives(perKind: number, routing: 'forced' | 'random', seed = 38): Sample<BankNegativeKind>[] {
  const rand = seededRandom(seed);
  const nine: Nine = (lead) => (routing === 'forced' ? makeRouting(rand, lead === undefined ? undefined : lead + String(int(rand, 1, 9))) : (lead ?? String(int(rand, 0, 9))) + digitsOf(rand, 8));
  const out: Sample<BankNegativeKind>[] = [];
  for (let i = 0; i < perKind; i++) for (const kind of BANK_NEGATIVE_KINDS) out.push({ kind, text: NEGATIVES[kind](rand, nine) });
  return out;
}

export type BankPositiveKind = 'spaced' | 'slash-or-dash-spaced' | 'lines' | 'micr' | 'labelled' | 'account-first' | 'other-scripts';
/** Forms the rule lets through on purpose (docs/card-data.md): measured as its recall's limits. */
export type BankMissedKind = 'joined-by-punctuation' | 'comma-list' | 'grouped-routing';

const wide = (s: string) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d)));
const arabic = (s: string) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0x0660 + Number(d)));

const POSITIVES: Readonly<Record<BankPositiveKind, (rand: Rand, r: string, a: string) => string>> = {
  spaced: (rand, r, a) => pick(rand, [`${r} ${a}`, `${r}  ${a}`, `${r}\t${a}`, `pay from ${r} ${a}`, `${r} ${a} ${int(rand, 100, 9999)}`]),
  'slash-or-dash-spaced': (rand, r, a) => pick(rand, [`${r} / ${a}`, `${r} - ${a}`, `${r} – ${a}`, `${r} | ${a}`, `${r}: ${a}`]),
  lines: (rand, r, a) => pick(rand, [`${r}\n${a}`, `${r}\r\n${a}`, `${r}\u2028${a}`]),
  micr: (rand, r, a) => pick(rand, [`⑆${r}⑆ ${a}⑈`, `⑈${int(rand, 100, 9999)}⑈ ⑆${r}⑆ ${a}⑈`, `⑆${r}⑆${a}⑈${int(rand, 100, 9999)}`]),
  labelled: (rand, r, a) =>
    pick(rand, [
      `routing ${r} account ${a}`, `Routing: ${r}, Account: ${a}`, `RTN ${r} ACCT ${a}`, `ABA# ${r} / Acct No. ${a}`, `routing=${r}&account=${a}`,
      `{"routing":"${r}","account":"${a}"}`, `ABA${r} ACCT${a}`, `bank: ${r}; checking ${a}`, `routing number ${r}, account number ${a}`,
    ]),
  'account-first': (rand, r, a) => pick(rand, [`${a} ${r}`, `acct ${a} routing ${r}`, `my account is ${a} and routing ${r}`, `Account ${a}, ABA ${r}`]),
  'other-scripts': (rand, r, a) => pick(rand, [wide(`${r} ${a}`), arabic(`${r} ${a}`), `${r}\u00a0${a}`, `${r}\u200b ${a}`, `${r.slice(0, 4)}\u200b${r.slice(4)} ${a}`]),
};

const MISSED: Readonly<Record<BankMissedKind, (rand: Rand, r: string, a: string) => string>> = {
  'joined-by-punctuation': (rand, r, a) => pick(rand, [`${r}-${a}`, `${r}/${a}`, `${r}:${a}`, `${r}.${a}`]),
  'comma-list': (rand, r, a) => pick(rand, [`${r}, ${a}`, `${r},${a}`, `${r}; ${a}`]),
  'grouped-routing': (rand, r, a) => `${r.slice(0, 3)} ${r.slice(3, 6)} ${r.slice(6)} ${a}`,
};

export const BANK_POSITIVE_KINDS = Object.keys(POSITIVES) as BankPositiveKind[];
export const BANK_MISSED_KINDS = Object.keys(MISSED) as BankMissedKind[];

function details(rand: Rand): [string, string] {
  const length = int(rand, 4, 17);
  return [makeRouting(rand), String(int(rand, 1, 9)) + digitsOf(rand, length - 1)];
}

/** Bank details in the forms the rule refuses, `perKind` of each. */
export function bankPositives(perKind: number, seed = 380): Sample<BankPositiveKind>[] {
  const rand = seededRandom(seed);
  const out: Sample<BankPositiveKind>[] = [];
  for (let i = 0; i < perKind; i++) for (const kind of BANK_POSITIVE_KINDS) out.push({ kind, text: POSITIVES[kind](rand, ...details(rand)) });
  return out;
}

/** Bank details in forms the rule lets through on purpose, `perKind` of each. */
export function bankMissed(perKind: number, seed = 381): Sample<BankMissedKind>[] {
  const rand = seededRandom(seed);
  const out: Sample<BankMissedKind>[] = [];
  for (let i = 0; i < perKind; i++) for (const kind of BANK_MISSED_KINDS) out.push({ kind, text: MISSED[kind](rand, ...details(rand)) });
  return out;
}
