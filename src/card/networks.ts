import table from './networks.json';

/**
 * Which card network a digit string's prefix and length belong to (networks.json, sources named there).
 * Only digit strings that pass this AND Luhn are card numbers: Luhn alone passes one digit run in ten, so
 * clock values, snowflake ids and zero-padded order numbers would be refused at random.
 */

export interface NetworkRow {
  name: string;
  prefixes: string[];
  lengths: number[];
  /** Written in groups, a number with a group of one of these lengths is not this network's (networks.json: UATP). */
  clockGroups?: number[];
}

interface Rule {
  name: string;
  width: number;
  low: number;
  high: number;
  /** bit n set: length n is allowed */
  lengths: number;
  /** bit n set: a grouped number with a group of n digits is not this network's (clockGroups) */
  clockGroups: number;
}

export const NETWORKS: readonly NetworkRow[] = table.networks;

/**
 * Group lengths no card layout has and a clock value has (networks.json `clockGroups`, for every network): seconds
 * (10 digits) and milliseconds (13) since 1970, the usual tail of a merchant's generated id. "order-6-1795832866272"
 * is a counter and a millisecond clock, though its 14 digits are Maestro's and pass Luhn one time in ten (a test's
 * Idempotency-Key was refused so); "ref-412-1795832866272" would be Visa's 16. Unbroken, the digits are still tried.
 */
const CLOCK_GROUPS: readonly number[] = (table as { clockGroups?: number[] }).clockGroups ?? [];

function compile(rows: readonly NetworkRow[]): Rule[][] {
  const byFirstDigit: Rule[][] = Array.from({ length: 10 }, () => []);
  for (const row of rows) {
    const lengths = row.lengths.reduce((mask, n) => mask | (1 << n), 0);
    const clockGroups = [...CLOCK_GROUPS, ...(row.clockGroups ?? [])].reduce((mask, n) => mask | (1 << n), 0);
    for (const prefix of row.prefixes) {
      const [low = '', high = low] = prefix.split('-');
      if (!/^\d+$/.test(low) || !/^\d+$/.test(high) || low.length !== high.length || low > high || low.length > 6) {
        throw new Error(`networks.json: ${row.name} has a malformed prefix ${prefix}`);
      }
      // Indexed by first digit: a range such as 56-69 is split at each first digit it spans.
      const width = low.length;
      for (let d = Number(low[0]); d <= Number(high[0]); d++) {
        const from = d === Number(low[0]) ? Number(low) : d * 10 ** (width - 1);
        const to = d === Number(high[0]) ? Number(high) : (d + 1) * 10 ** (width - 1) - 1;
        (byFirstDigit[d] as Rule[]).push({ name: row.name, width, low: from, high: to, lengths, clockGroups });
      }
    }
  }
  return byFirstDigit;
}

const RULES = compile(NETWORKS);

const POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000];
export const PREFIX_DIGITS = 6; // the widest prefix in networks.json

/**
 * The first network whose ranges hold a number of `length` digits beginning with the six digits `first6`.
 * `groupLengths`: for a number written in groups, bit n set for each group of n digits; 0 when unbroken.
 */
export function cardNetworkByPrefix(first6: number, length: number, groupLengths = 0): string | undefined {
  const rules = RULES[Math.floor(first6 / 100000)];
  if (rules === undefined) return undefined;
  const bit = 1 << length;
  for (const rule of rules) {
    if ((rule.lengths & bit) === 0 || (groupLengths & rule.clockGroups) !== 0) continue;
    const prefix = Math.floor(first6 / (POW10[PREFIX_DIGITS - rule.width] as number));
    if (prefix >= rule.low && prefix <= rule.high) return rule.name;
  }
  return undefined;
}

/** The first network whose prefix and length fit these digits (ASCII digits only), or undefined. */
export function cardNetwork(digits: string): string | undefined {
  if (digits.length < PREFIX_DIGITS || !/^\d+$/.test(digits)) return undefined;
  return cardNetworkByPrefix(Number(digits.slice(0, PREFIX_DIGITS)), digits.length);
}
