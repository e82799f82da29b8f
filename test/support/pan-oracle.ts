/**
 * An independent, deliberately slow statement of the card-number rule, for property tests: one regex per
 * separator finds the runs, every sequence of whole groups is tried, the network table is read as written
 * (prefix strings compared as strings) and Luhn is recomputed here. Shares no code with src/card/pan.ts.
 */
import table from '../../src/card/networks.json';
import { makeLuhnValid } from './merchant-ids';

const SEPARATORS = [' ', '-', '.', '_', '/'];
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
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

function runs(text: string): Run[] {
  const uuids = [...text.matchAll(UUID)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  return allRuns(text).filter((run) => !uuids.some((u) => u.start <= run.start && run.end <= u.end));
}

function allRuns(text: string): Run[] {
  const found: Run[] = [];
  for (const sep of SEPARATORS) {
    for (const m of text.matchAll(new RegExp(`\\d+(?:${escape(sep)}\\d+)*`, 'g'))) {
      const groups: Run['groups'] = [];
      let at = m.index;
      for (const g of m[0].split(sep)) {
        groups.push({ start: at, end: at + g.length });
        at += g.length + 1;
      }
      found.push({ start: m.index, end: m.index + m[0].length, groups });
    }
  }
  return found;
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

/** Every run holding a card number replaced; runs that overlap (a shared group) are replaced as one. */
export function oracleRedact(text: string, replacement: string): string {
  const spans = runs(text)
    .filter((run) => runHoldsCard(text, run, false))
    .sort((a, b) => a.start - b.start);
  let out = '';
  let copied = 0;
  let open: { start: number; end: number } | undefined;
  for (const span of spans) {
    if (open && span.start < open.end) open.end = Math.max(open.end, span.end);
    else {
      if (open) {
        out += text.slice(copied, open.start) + replacement;
        copied = open.end;
      }
      open = { start: span.start, end: span.end };
    }
  }
  if (open) {
    out += text.slice(copied, open.start) + replacement;
    copied = open.end;
  }
  return out + text.slice(copied);
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
