import { asciiDigits } from './characters';

/**
 * The gateway's masking (spec 2.4): first four and last four digits kept, the middle replaced by `x`.
 * Only digits are read, of any script and printed as ASCII, so no separator, invisible character or
 * two-unit digit (`𝟒`) can shift a middle digit into the kept ends. Numbers too short to keep both ends are
 * fully masked.
 */
export function maskCardNumber(number: string): string {
  const digits = asciiDigits(number);
  if (digits.length < 9) return 'x'.repeat(digits.length);
  return digits.slice(0, 4) + 'x'.repeat(digits.length - 8) + digits.slice(-4);
}
