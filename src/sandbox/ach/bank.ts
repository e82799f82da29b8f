/**
 * Bank accounts as the sandbox sees them (gateway-facts.md, "ACH"): the ABA routing checksum, the return test
 * accounts and what a bank account shows once stored (last four only). Test data only: full numbers stay inside
 * the sandbox, as test card numbers do.
 */

export type AccountType = 'checking' | 'savings';

/** A bank account as a `check` object, a check form's payment key or a saved bank method holds it. */
export interface BankAccount {
  accountholder: string;
  /** Nine digits. */
  routing: string;
  account: string;
  account_type: AccountType;
}

/** 3·d1 + 7·d2 + d3 + 3·d4 + 7·d5 + d6 + 3·d7 + 7·d8 + d9 ≡ 0 (mod 10) (gateway-facts.md, ACH). */
export function passesAba(routing: string): boolean {
  if (!/^\d{9}$/.test(routing)) return false;
  const w = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (w[i] as number) * Number(routing[i]);
  return sum % 10 === 0;
}

/** The routing number the gateway's test data says "gives an error" (it also fails the ABA check). */
export const ERROR_ROUTING = '987654321';

/** An account number as the sandbox takes it: 4 to 17 digits (NACHA's DFI account field is 17 wide). */
export const ACCOUNT_SHAPE = /^\d{4,17}$/;

/**
 * The return test accounts 10178101 to 10178116 (gateway-facts.md, ACH), each with its return code. The facts list
 * R01, R02, R03, R04, R06, R07, R08, R10, R16 "…" without pairing them to accounts: the sandbox's choice is the
 * NACHA codes R01 to R16 in order, account 101 + n returning R(n+1) (README.md, "ACH").
 */
const RETURN_REASONS: readonly string[] = [
  'Insufficient Funds', 'Account Closed', 'No Account/Unable to Locate Account', 'Invalid Account Number',
  'Unauthorized Debit to Consumer Account Using Corporate SEC Code', 'Returned per ODFI\'s Request',
  'Authorization Revoked by Customer', 'Payment Stopped', 'Uncollected Funds',
  'Customer Advises Not Authorized', 'Check Truncation Entry Return', 'Account Sold to Another DFI',
  'Invalid ACH Routing Number', 'Representative Payee Deceased', 'Beneficiary or Account Holder Deceased',
  'Account Frozen',
];

export interface ReturnReason {
  code: string;
  text: string;
}

export function returnReasonOf(account: string): ReturnReason | undefined {
  const m = /^10178(1(?:0[1-9]|1[0-6]))$/.exec(account);
  if (!m) return undefined;
  const n = Number(m[1]) - 101;
  return { code: `R${String(n + 1).padStart(2, '0')}`, text: RETURN_REASONS[n] as string };
}

export const last4 = (digits: string) => digits.slice(-4);

/** A masked number as the gateway's lists show one: the last four only (gateway-facts.md, ACH). */
export function maskDigits(digits: string): string {
  return `${'x'.repeat(Math.max(0, digits.length - 4))}${last4(digits)}`;
}

/** Reads `{accountholder, routing, account, account_type}`; the reason names the field, never its value. */
export function readBankAccount(raw: unknown): { account: BankAccount } | { problem: 'accountholder' | 'routing' | 'account' | 'account_type' } {
  const o = (typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  if (typeof o.accountholder !== 'string' || o.accountholder.trim() === '' || o.accountholder.length > 255) return { problem: 'accountholder' };
  const routing = typeof o.routing === 'string' ? o.routing.replace(/[\s-]/g, '') : '';
  if (!/^\d{9}$/.test(routing)) return { problem: 'routing' };
  const account = typeof o.account === 'string' ? o.account.replace(/[\s-]/g, '') : '';
  if (!ACCOUNT_SHAPE.test(account)) return { problem: 'account' };
  const type = o.account_type ?? 'checking';
  if (type !== 'checking' && type !== 'savings') return { problem: 'account_type' };
  return { account: { accountholder: o.accountholder.trim(), routing, account, account_type: type } };
}
