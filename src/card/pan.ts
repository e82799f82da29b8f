import { luhnValid } from './luhn';

/**
 * Card-number detection shared by the card-data guard and log redaction (contract: "a digit string of
 * 13 to 19 digits (spaces or dashes allowed) that passes Luhn"). A run is a digit followed by 12 to 18 more
 * digits, each optionally preceded by ONE space or dash; runs glued to further digits are not PANs.
 */
const PAN_RUN = /(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/g;

export function isPan(candidate: string): boolean {
  const digits = candidate.replace(/[ -]/g, '');
  return digits.length >= 13 && digits.length <= 19 && /^\d+$/.test(digits) && luhnValid(digits);
}

/** True when any PAN-like run in the text passes Luhn. */
export function containsPan(text: string): boolean {
  for (const match of text.matchAll(PAN_RUN)) {
    if (isPan(match[0])) return true;
  }
  return false;
}

/** Replaces every Luhn-valid PAN-like run with the replacement. */
export function redactPans(text: string, replacement = '[card]'): string {
  if (text.length < 13) return text;
  return text.replace(PAN_RUN, (run) => (isPan(run) ? replacement : run));
}
