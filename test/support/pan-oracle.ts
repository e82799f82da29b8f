/**
 * An independent, deliberately slow statement of the card-number rule, for property tests: one regex finds the
 * runs, every sequence of whole groups is tried, the network table is read as written
 * (prefix strings compared as strings) and Luhn is recomputed here. Shares no code with src/card/pan.ts.
 */
import table from '../../src/card/networks.json';
import { makeLuhnValid } from './merchant-ids';

/**
 * Digit values from Intl, not from Unicode's layout (src/card/characters.ts counts from each run's 0): every
 * numbering system the engine knows writes 0 to 9 (\p{Nd} systems only: "hanidec"'s ideographs are no decimal
 * digits to Unicode). Digits of systems Intl lacks fall back to the distance from the run's 0, found by walking back.
 */
const INTL_DIGITS = new Map<string, number>();
for (const system of Intl.supportedValuesOf('numberingSystem')) {
  const written = [...new Intl.NumberFormat('en', { numberingSystem: system, useGrouping: false }).format(1234567890)];
  if (written.length !== 10 || !written.every((d) => /^\p{Nd}$/u.test(d))) continue;
  written.forEach((d, i) => INTL_DIGITS.set(d, (i + 1) % 10));
}

function digitValue(d: string): number {
  const known = INTL_DIGITS.get(d);
  if (known !== undefined) return known;
  let zero = d.codePointAt(0) as number;
  while (/^\p{Nd}$/u.test(String.fromCodePoint(zero - 1))) zero--;
  return ((d.codePointAt(0) as number) - zero) % 10;
}

/** The text's digits of any script as ASCII, everything else dropped. */
export function oracleAsciiDigits(text: string): string {
  return [...text].filter((c) => /^\p{Nd}$/u.test(c)).map(digitValue).join('');
}

/**
 * The contract's separators as a class of their own, written out: spaces and line breaks of any kind, dashes of
 * any kind and the minus sign, dots, underscores, slashes, plus signs (ASCII, full-width and what Japanese IMEs
 * type), and the zero-width characters (default-ignorable and nonspacing or enclosing marks), which never count
 * among the three a run allows between two groups.
 */
const SEEN = '[\\p{White_Space}\\p{Pd}\\u2212._/+\\uff0e\\u3002\\uff61\\u00b7\\u30fb\\uff65\\uff3f\\uff0f\\u2044\\u2215\\uff0b\\u30fc\\uff70]';
const UNSEEN = '[\\p{Default_Ignorable_Code_Point}\\p{Mn}\\p{Me}]';
/** A run: digit groups joined by one to three separators a reader sees (of one kind or mixed), and any unseen ones. */
const RUN = new RegExp(`\\p{Nd}+(?:(?:${UNSEEN}+|${UNSEEN}*(?:${SEEN}${UNSEEN}*){1,3})\\p{Nd}+)*`, 'gu');
const ALNUM = /[A-Za-z0-9]/;
const JOINS = new RegExp(`${SEEN}|${UNSEEN}`, 'gu');

/** The text with every separator and invisible character taken out and every digit written in ASCII: a card number echoed in any form shows whole. */
export function oracleFlatten(text: string): string {
  return text.replace(JOINS, '').replace(/\p{Nd}/gu, (d) => String(digitValue(d)));
}

/** `groups`: the number's digit groups as written (unbroken: one). */
export function oracleNetwork(digits: string, groups: string[] = [digits]): string | undefined {
  for (const row of table.networks as { name: string; prefixes: string[]; lengths: number[]; clockGroups?: number[] }[]) {
    if (!row.lengths.includes(digits.length)) continue;
    if (groups.length > 1 && groups.some((g) => (table as { clockGroups?: number[] }).clockGroups?.includes(g.length) || row.clockGroups?.includes(g.length))) continue;
    for (const prefix of row.prefixes) {
      const [low = '', high = low] = prefix.split('-');
      const head = digits.slice(0, low.length);
      if (head.length === low.length && head >= low && head <= high) return row.name;
    }
  }
  return undefined;
}

export function oracleIsCard(digits: string, groups: string[] = [digits]): boolean {
  return /^[0-9]{12,19}$/.test(digits) && oracleNetwork(digits, groups) !== undefined && makeLuhnValid(digits) === digits;
}

interface Run {
  start: number;
  end: number;
  groups: { start: number; end: number }[];
}

/** Canonical UUIDs (8-4-4-4-12 hex, touching no letter or digit): a run wholly inside one is an identifier. */
const UUID = /(?<![A-Za-z0-9])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![A-Za-z0-9])/g;

function uuidSpans(text: string): { start: number; end: number }[] {
  return [...text.matchAll(UUID)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
}

/** Hex digests (32 hex or more, touching no other letter or digit): a run wholly inside one is an identifier too. */
const HEX_ID = /(?<![A-Za-z0-9])[0-9A-Fa-f]{32,}(?![A-Za-z0-9])/g;

function hexIdSpans(text: string): { start: number; end: number }[] {
  return [...text.matchAll(HEX_ID)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
}

function inUuid(text: string, start: number, end: number): boolean {
  return [...uuidSpans(text), ...hexIdSpans(text)].some((u) => u.start <= start && end <= u.end);
}

function toRun(text: string, run: string, at: number): Run {
  const groups = [...run.matchAll(/\p{Nd}+/gu)].map((g) => ({ start: at + g.index, end: at + g.index + g[0].length }));
  return { start: at, end: at + run.length, groups };
}

/** The runs of the text, less those wholly inside a UUID. */
function runs(text: string): Run[] {
  return [...text.matchAll(RUN)].map((m) => toRun(text, m[0], m.index)).filter((run) => !inUuid(text, run.start, run.end));
}

function runHoldsCard(text: string, run: Run, delimited: boolean): boolean {
  const { groups } = run;
  for (let i = 0; i < groups.length; i++) {
    for (let j = i; j < groups.length; j++) {
      const from = (groups[i] as Run['groups'][number]).start;
      const to = (groups[j] as Run['groups'][number]).end;
      const parts = groups.slice(i, j + 1).map((g) => oracleAsciiDigits(text.slice(g.start, g.end)));
      const digits = parts.join('');
      if (delimited && (ALNUM.test(text[from - 1] ?? '') || ALNUM.test(text[to] ?? ''))) continue;
      if (oracleIsCard(digits, parts)) return true;
    }
  }
  return false;
}

export function oracleContainsPan(text: string, delimited = false): boolean {
  return runs(text).some((run) => runHoldsCard(text, run, delimited));
}

/** Every run holding a card number replaced, whole (runs never overlap: one regex pass). */
export function oracleRedact(text: string, replacement: string): string {
  return text.replace(RUN, (run, at: number) => (runHoldsCard(text, toRun(text, run, at), false) && !inUuid(text, at, at + run.length) ? replacement : run));
}

/** True when some candidate in the text (whole groups, 12–19 digits) has a network's prefix and length, Luhn aside. */
export function oracleHasNetworkCandidate(text: string): boolean {
  return runs(text).some(({ groups }) =>
    groups.some((_, i) =>
      groups.slice(i).some((_g, k) => {
        const parts = groups.slice(i, i + k + 1).map((g) => oracleAsciiDigits(text.slice(g.start, g.end)));
        const digits = parts.join('');
        return digits.length >= 12 && digits.length <= 19 && oracleNetwork(digits, parts) !== undefined;
      }),
    ),
  );
}
