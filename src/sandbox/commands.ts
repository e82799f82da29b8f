/**
 * The `command` of POST /transactions, as real clients spell it. The REST reference's examples say `sale`
 * (UsaEPay.NET docs/api-rest.md, "Credit/Debit Card Sale" and "Token Sale"), the spec and the .NET client say
 * `cc:sale`; the legacy `cc:` prefix appears on other commands too. Every spelling maps to one canonical name,
 * which is what the handlers dispatch on.
 */

const ALIASES: Readonly<Record<string, string>> = {
  sale: 'cc:sale',
  'cc:sale': 'cc:sale',
  authonly: 'authonly',
  'cc:authonly': 'authonly',
  capture: 'cc:capture',
  'cc:capture': 'cc:capture',
  void: 'void',
  'cc:void': 'void',
  'void:release': 'cc:void:release',
  'cc:void:release': 'cc:void:release',
  refund: 'refund',
  'cc:refund': 'refund',
  creditvoid: 'creditvoid',
  'cc:creditvoid': 'creditvoid',
  'refund:adjust': 'refund:adjust',
  'cc:refund:adjust': 'refund:adjust',
  'cc:save': 'cc:save',
  'cc:adjust': 'cc:adjust',
  adjust: 'cc:adjust',
  unvoid: 'unvoid',
  'cc:unvoid': 'unvoid',
  // Bank payments (gateway-facts.md, ACH) and a saved method charged by its key (ach/check-commands.ts).
  'check:sale': 'check:sale',
  'check:credit': 'check:credit',
  'customer:sale': 'customer:sale',
};

/**
 * Commands of the real gateway that the emulator does not carry out (UsaEPay.NET UsaEPayCommandTypes.cs and
 * the reference's command list). They answer the emulator's 400/40003, not the gateway's "Unknown command",
 * so a client that uses one learns it hit a limit of the sandbox, not a typo.
 */
const REAL_ONLY = new Set([
  'cash:sale', 'quicksale', 'cc:credit', 'credit', 'cash:refund', 'quickrefund',
  'cc:capture:reauth', 'cc:capture:override', 'cc:capture:error', 'cc:postauth', 'postauth',
  'customer:refund',
]);

export type CommandClass =
  | { kind: 'missing' }
  /** A command the emulator handles, by its canonical name. */
  | { kind: 'known'; name: string }
  /** A real command the emulator does not carry out. */
  | { kind: 'not-emulated'; name: string }
  | { kind: 'unknown' };

export function classifyCommand(raw: unknown): CommandClass {
  if (raw === undefined || raw === null || raw === '') return { kind: 'missing' };
  if (typeof raw !== 'string') return { kind: 'unknown' };
  const name = ALIASES[raw];
  if (name) return { kind: 'known', name };
  if (REAL_ONLY.has(raw)) return { kind: 'not-emulated', name: raw };
  return { kind: 'unknown' };
}

/** The gateway's error code for a command it does not know: a NUMBER on the wire (UsaEPay.NET docs/ENDPOINT-VALIDATION-CHECKLIST.md #103). */
export const UNKNOWN_COMMAND_ERROR_CODE = 20019;

/**
 * The answer to an unknown command: HTTP 200, transaction-shaped, result E. Nothing was processed, so it
 * carries no `key` or `refnum` (as the 429 body, gateway-facts.md, Rate limits).
 */
export function unknownCommandAnswer(): Record<string, unknown> {
  return { type: 'transaction', is_duplicate: 'N', result_code: 'E', result: 'Error', authcode: '', error: 'Unknown command', error_code: UNKNOWN_COMMAND_ERROR_CODE };
}
