/**
 * Realistic merchant identifiers for measuring the card detector's precision (issue 10): clock values,
 * snowflake ids, zero-padded order numbers, UUIDs, GTIN/EAN codes and phone numbers, each in the forms
 * merchants write them. Every one is made Luhn-valid ON PURPOSE (its check digit is chosen), so Luhn alone
 * would refuse all of them: only the network ranges can tell them from card numbers.
 * Deterministic for a seed, so the published figures can be reproduced.
 */

export type MerchantIdKind = 'ms-timestamp' | 'us-timestamp' | 'ns-timestamp' | 'clock-counter' | 'snowflake' | 'zero-padded-order' | 'uuid' | 'gtin' | 'phone';

export interface MerchantId {
  kind: MerchantIdKind;
  /** The identifier as a merchant would send it (invoice, Idempotency-Key, X-Request-Id). */
  text: string;
}

/** mulberry32: a small seeded PRNG (Math.random cannot be seeded). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The digit that makes `body + digit` pass Luhn. */
export function luhnCheckDigit(body: string): string {
  let sum = 0;
  let double = true; // the check digit will sit at the rightmost place, so the body's last digit is doubled
  for (let i = body.length - 1; i >= 0; i--) {
    let d = body.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return String((10 - (sum % 10)) % 10);
}

/** Replaces the last digit so the whole digit string passes Luhn. */
export function makeLuhnValid(digits: string): string {
  return digits.slice(0, -1) + luhnCheckDigit(digits.slice(0, -1));
}

type Rand = () => number;
const int = (rand: Rand, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
const digitsOf = (rand: Rand, n: number) => Array.from({ length: n }, () => String(int(rand, 0, 9))).join('');

// Clock values between 2015 and 2035 (from September 2039, 22xx… µs and ns values enter Mir's and Mastercard's ranges).
const FROM_MS = Date.UTC(2015, 0, 1);
const TO_MS = Date.UTC(2035, 0, 1);
const clockMs = (rand: Rand) => FROM_MS + Math.floor(rand() * (TO_MS - FROM_MS));

function msTimestamp(rand: Rand): string {
  const ms = makeLuhnValid(String(clockMs(rand)));
  return pick(rand, [ms, `ORD-${ms}`, `order-${ms}-${int(rand, 1, 9)}`, `inv_${ms}`, `cart-${ms}`]);
}

function usTimestamp(rand: Rand): string {
  const us = makeLuhnValid(String(clockMs(rand)) + digitsOf(rand, 3));
  return pick(rand, [us, `evt_${us}`, `ORD-${us}`]);
}

function nsTimestamp(rand: Rand): string {
  const ns = makeLuhnValid(String(clockMs(rand)) + digitsOf(rand, 6));
  return pick(rand, [ns, `trace-${ns}`]);
}

/**
 * A clock value and a counter in a group of their own (`order-<ms>-42`, `<s>-00042`): the digits of both together
 * are made Luhn-valid, so a ms value with a 2-digit counter, or a seconds value with a 5-digit one, is a
 * 15-digit number starting with 1, UATP's shape but for its groups (networks.json, clockGroups).
 */
function clockCounter(rand: Rand): string {
  const seconds = rand() < 0.3;
  const clock = seconds ? String(Math.floor(clockMs(rand) / 1000)) : String(clockMs(rand));
  const width = seconds ? int(rand, 1, 6) : int(rand, 1, 4);
  const counter = digitsOf(rand, width);
  const joined = makeLuhnValid(clock + counter);
  const tail = joined.slice(clock.length);
  const sep = pick(rand, ['-', '_', '.', '/', ' ']);
  // The counter first (`shop-12-1795369789000`), sized to make 15 digits from 1 with the clock: UATP's shape again.
  const before = makeLuhnValid(`1${digitsOf(rand, seconds ? 4 : 1)}${clock}`);
  const lead = before.length - clock.length;
  return pick(rand, [`${clock}${sep}${tail}`, `order-${clock}${sep}${tail}`, `INV${sep}${clock}${sep}${tail}`, `shop-${before.slice(0, lead)}${sep}${before.slice(lead)}`]);
}

// Twitter (2010-11-04) and Discord (2015-01-01) epochs: 41-bit ms, 10-bit worker, 12-bit sequence.
const SNOWFLAKE_EPOCHS = [1288834974657n, 1420070400000n];

function snowflake(rand: Rand): string {
  const epoch = pick(rand, SNOWFLAKE_EPOCHS);
  const id = ((BigInt(clockMs(rand)) - epoch) << 22n) | (BigInt(int(rand, 0, 1023)) << 12n) | BigInt(int(rand, 0, 4095));
  const s = makeLuhnValid(id.toString());
  return pick(rand, [s, `msg-${s}`]);
}

function zeroPaddedOrder(rand: Rand): string {
  const width = int(rand, 12, 19);
  const n = makeLuhnValid(String(int(rand, 1, 10 ** int(rand, 2, 9))).padStart(width, '0'));
  return pick(rand, [n, `INV-${n}`, `PO${n}`]);
}

const hex = (rand: Rand, n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(rand, 0, 15)]).join('');

/**
 * A v4 UUID, as `crypto.randomUUID()` writes it or upper-cased, whose decimal stretch is made Luhn-valid: its
 * last group all decimal (about 1 in 280 come out so), or its first three groups, the version digit included
 * (8-4-4: 16 digits, about 1 in 2,300).
 */
function uuid(rand: Rand): string {
  const variant = pick(rand, ['8', '9', 'a', 'b']);
  let text: string;
  if (int(rand, 0, 1) === 0) {
    text = `${hex(rand, 8)}-${hex(rand, 4)}-4${hex(rand, 3)}-${variant}${hex(rand, 3)}-${makeLuhnValid(digitsOf(rand, 12))}`;
  } else {
    const lead = makeLuhnValid(`${digitsOf(rand, 12)}4${digitsOf(rand, 3)}`);
    text = `${lead.slice(0, 8)}-${lead.slice(8, 12)}-${lead.slice(12)}-${variant}${hex(rand, 3)}-${hex(rand, 12)}`;
  }
  return int(rand, 0, 3) === 0 ? text.toUpperCase() : text;
}

// GS1 prefixes seen on shelves (US/CA, FR, DE, JP, UK, CH, IT, ES, NL, CN, AU, books).
const GS1_PREFIXES = ['00', '01', '03', '06', '08', '30', '34', '37', '40', '42', '45', '49', '50', '76', '80', '84', '87', '690', '693', '93', '978', '979'];

function gtin(rand: Rand): string {
  const form = int(rand, 0, 2);
  if (form === 0) return makeLuhnValid(`0${digitsOf(rand, 11)}`); // UPC-A (GTIN-12)
  const ean13 = (pick(rand, GS1_PREFIXES) + digitsOf(rand, 13)).slice(0, 13);
  if (form === 1) return makeLuhnValid(ean13); // EAN-13
  return makeLuhnValid(`${int(rand, 0, 8)}${ean13}`); // GTIN-14: packaging indicator + EAN-13
}

// E.164 country codes and national number lengths giving 12 to 15 digits in all.
const PHONE_PLANS: readonly { cc: string; national: number[] }[] = [
  { cc: '1', national: [11, 12] }, // US extensions
  { cc: '44', national: [10] },
  { cc: '49', national: [10, 11] },
  { cc: '33', national: [10] },
  { cc: '39', national: [10] },
  { cc: '7', national: [11] },
  { cc: '86', national: [11] },
  { cc: '91', national: [10] },
  { cc: '62', national: [10, 11] },
  { cc: '234', national: [10] },
  { cc: '380', national: [9] },
  { cc: '971', national: [9] },
  { cc: '55', national: [11] },
];

function phone(rand: Rand): string {
  const plan = pick(rand, PHONE_PLANS);
  const all = makeLuhnValid(plan.cc + digitsOf(rand, pick(rand, plan.national)));
  const national = all.slice(plan.cc.length);
  const cut = int(rand, 2, 4);
  const form = int(rand, 0, 4);
  if (form === 0) return `+${all}`;
  if (form === 1) return `+${plan.cc} ${national.slice(0, cut)} ${national.slice(cut)}`;
  if (form === 2) return `+${plan.cc}-${national.slice(0, cut)}-${national.slice(cut)}`;
  if (form === 3) return `00${all}`;
  return `tel:+${plan.cc}.${national.slice(0, cut)}.${national.slice(cut)}`;
}

const MAKERS: Readonly<Record<MerchantIdKind, (rand: Rand) => string>> = {
  'ms-timestamp': msTimestamp,
  'us-timestamp': usTimestamp,
  'ns-timestamp': nsTimestamp,
  'clock-counter': clockCounter,
  snowflake,
  'zero-padded-order': zeroPaddedOrder,
  uuid,
  gtin,
  phone,
};

export const MERCHANT_ID_KINDS = Object.keys(MAKERS) as MerchantIdKind[];

/** `count` identifiers, the kinds in turn. */
export function merchantIds(count: number, seed = 10): MerchantId[] {
  const rand = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const kind = MERCHANT_ID_KINDS[i % MERCHANT_ID_KINDS.length] as MerchantIdKind;
    return { kind, text: MAKERS[kind](rand) };
  });
}
