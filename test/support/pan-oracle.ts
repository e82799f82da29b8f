/**
 * An independent, deliberately slow statement of the card-number rule, for property tests: one regex finds the
 * runs, every sequence of whole groups is tried, the network table is read as written
 * (prefix strings compared as strings) and Luhn is recomputed here. Shares no code with src/card/pan.ts.
 */
import table from '../../src/card/networks.json';
import { makeLuhnValid } from './merchant-ids';

/** A run: digit groups joined by one to three separators, of one kind or mixed (the contract's "any form"). */
const RUN = /\d+(?:[ \t\n\r\u00a0\u2007\u2009\u202f\u2010\u2011\u2012\u2013\u2212._/-]{1,3}\d+)*/g;
const ALNUM = /[A-Za-z0-9]/;

/** `groups`: the number's digit groups as written (unbroken: one). */
export function oracleNetwork(digits: string, groups: string[] = [digits]): string | undefined {
  for (const row of table.networks as { name: string; prefixes: string[]; lengths: number[]; clockGroups?: number[] }[]) {
    if (!row.lengths.includes(digits.length)) continue;
    if (groups.length > 1 && groups.some((g) => row.clockGroups?.includes(g.length))) continue;
    for (const prefix of row.prefixes) {
      const [low = '', high = low] = prefix.split('-');
      const head = digits.slice(0, low.length);
      if (head.length === low.length && head >= low && head <= high) return row.name;
    }
  }
  return undefined;
}

export function oracleIsCard(digits: string, groups: string[] = [digits]): boolean {
  return /^\d{12,19}$/.test(digits) && oracleNetwork(digits, groups) !== undefined && makeLuhnValid(digits) === digits;
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

function inUuid(text: string, start: number, end: number): boolean {
  return uuidSpans(text).some((u) => u.start <= start && end <= u.end);
}

function toRun(text: string, run: string, at: number): Run {
  const groups = [...run.matchAll(/\d+/g)].map((g) => ({ start: at + g.index, end: at + g.index + g[0].length }));
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
      const parts = groups.slice(i, j + 1).map((g) => text.slice(g.start, g.end));
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
        const parts = groups.slice(i, i + k + 1).map((g) => text.slice(g.start, g.end));
        const digits = parts.join('');
        return digits.length >= 12 && digits.length <= 19 && oracleNetwork(digits, parts) !== undefined;
      }),
    ),
  );
}
