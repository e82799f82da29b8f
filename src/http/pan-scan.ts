/**
 * `hasPan(text, { delimited })`: the card-number check of the HTTP edge. It builds on src/card/pan.ts
 * (isPan: 13–19 digits, Luhn) but also looks INSIDE longer runs at group boundaries: card/pan.ts's
 * containsPan reads "1 4000100011112224" or "4000 1000 1111 2224 5" as one 17-digit run that fails Luhn,
 * so a card number next to one more digit group slipped through. Here every sequence of whole groups
 * (split at the single spaces or dashes) of 13–19 digits is tried; an unbroken digit stretch is never cut,
 * so "40001000111122240000" is still not a PAN.
 * `delimited`: the chosen groups must not touch letters either (header values: hex and base64 ids).
 */
import { isPan } from '../card/pan';

const RUN = /\d+(?:[ -]\d+)*/g;
const ALNUM = /[A-Za-z0-9]/;

export function hasPan(text: string, options: { delimited?: boolean } = {}): boolean {
  if (text.length < 13) return false;
  for (const match of text.matchAll(RUN)) {
    const groups = match[0].split(/[ -]/);
    const before = text[(match.index ?? 0) - 1] ?? '';
    const after = text[(match.index ?? 0) + match[0].length] ?? '';
    for (let i = 0; i < groups.length; i++) {
      let digits = '';
      for (let j = i; j < groups.length && digits.length + (groups[j] as string).length <= 19; j++) {
        digits += groups[j];
        if (digits.length < 13) continue;
        if (options.delimited && ((i === 0 && ALNUM.test(before)) || (j === groups.length - 1 && ALNUM.test(after)))) continue;
        if (isPan(digits)) return true;
      }
    }
  }
  return false;
}
