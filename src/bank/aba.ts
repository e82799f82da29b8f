/**
 * An ABA routing transit number (gateway-facts.md, "ACH": `routing`, 9 digits, "ABA checksum: 3·d1 + 7·d2 + d3
 * + 3·d4 + 7·d5 + d6 + 3·d7 + 7·d8 + d9 ≡ 0 mod 10"). One random 9-digit number in ten passes the checksum, so
 * the first two digits must also be a Federal Reserve routing symbol, as every routing number's are (ABA, "Key
 * to Routing Numbers"; Wikipedia "ABA routing transit number"): 00 the U.S. Government, 01–12 the twelve Federal
 * Reserve districts, 21–32 thrift institutions, 61–72 electronic transactions, 80 traveler's checks. Together
 * one random 9-digit number in 26 passes (38 symbols of 100, a tenth of them).
 */
const WEIGHTS = [3, 7, 1, 3, 7, 1, 3, 7, 1] as const;

/** True when the first two digits (0–99) are a Federal Reserve routing symbol. */
export function isRoutingSymbol(firstTwo: number): boolean {
  return firstTwo <= 12 || (firstTwo >= 21 && firstTwo <= 32) || (firstTwo >= 61 && firstTwo <= 72) || firstTwo === 80;
}

/** True when the nine digit values (0–9 each) pass the ABA checksum. */
export function abaChecksumValid(digits: ArrayLike<number>): boolean {
  if (digits.length !== 9) return false;
  let sum = 0;
  for (let k = 0; k < 9; k++) sum += (WEIGHTS[k] as number) * (digits[k] as number);
  return sum % 10 === 0;
}

/** True when the nine digit values are a routing number: a Federal Reserve routing symbol and the ABA checksum. */
export function isRoutingDigits(digits: ArrayLike<number>): boolean {
  return digits.length === 9 && isRoutingSymbol((digits[0] as number) * 10 + (digits[1] as number)) && abaChecksumValid(digits);
}

/** The same for a string of nine ASCII digits ("021000021"). */
export function isRoutingNumber(text: string): boolean {
  return /^[0-9]{9}$/.test(text) && isRoutingDigits(Array.from(text, (c) => c.charCodeAt(0) - 48));
}
