import { ERRORS, SALE_ERRORS, type ErrorSpec, type SaleErrorName } from './errors';
import { CARDREF_SHAPE, isCardNumber } from './cards';
import { classifyCommand } from './commands';

/**
 * Parses the body of POST /transactions (spec §2.3) into a typed sale, or says why not:
 *   - request-shape problems → HTTP 400 gateway error (`reject`);
 *   - card-data problems (Luhn, length, expiration) → HTTP 200 result_code "E" (`saleError`), as the gateway
 *     treats them as a failed transaction, not a bad request.
 */

export type CardSource =
  /** A card reference token, from `UMCardRef` (spec) or `creditcard.number` (REST v2 docs' "Token Sale", with or without expiration). */
  | { kind: 'token'; cardref: string; via: 'UMCardRef' | 'creditcard.number' }
  | { kind: 'card'; number: string; expiration: string };

/** The parts of `amount_detail` the gateway echoes or checks (REST reference, amount_detail object). */
export const DETAIL_PARTS = ['tax', 'tip', 'subtotal', 'shipping', 'discount'] as const;
export type DetailPart = (typeof DETAIL_PARTS)[number];

export interface SaleInput {
  amountCents: number;
  amount: string;
  tax?: string;
  tip?: string;
  /** The request's amount_detail, each part as a decimal string; undefined when the request had none. */
  amountDetail?: Partial<Record<DetailPart, string>>;
  invoice: string;
  card: CardSource;
  /** `save_card`: answer with `savedcard` (a reusable token). */
  saveCard?: boolean;
  /** `send_receipt` with an `email`: answer with `receipts`. */
  receiptTo?: string;
  /** `traits.is_recurring` (gateway-facts.md): recorded as such. */
  recurring?: boolean;
}

export type SaleParse =
  | { ok: true; sale: SaleInput }
  | { ok: false; reject: ErrorSpec; detail?: string }
  | { ok: false; saleError: SaleErrorName; invoice: string }
  /** A command the gateway does not know: a transaction-shaped answer (commands.ts). */
  | { ok: false; unknownCommand: true }
  /** `cc:save`: tokenise the card, no charge (save-card.ts). */
  | { ok: false; saveCard: true };

/** Decimal string > 0, at most 2 decimals and 10 integer digits. */
const AMOUNT = /^\d{1,10}(\.\d{1,2})?$/;
const MAX_INVOICE = 255;
const MAX_FIELD = 255;

export function toCents(amount: string): number {
  const [whole, frac = ''] = amount.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
}

/**
 * An amount as clients send it: a decimal string (spec, PHP strings) or a JSON number (the .NET client's
 * decimal, PHP floats such as 10.0). Either way > 0 or >= 0, at most 2 decimals and 10 integer digits.
 * Returns cents, or undefined when it is not such an amount (booleans, "1e3", 1.001 stay refused).
 */
export function amountCents(v: unknown, allowZero: boolean): number | undefined {
  let cents: number;
  if (typeof v === 'string') {
    if (!AMOUNT.test(v)) return undefined;
    cents = toCents(v);
  } else if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0 || v >= 1e10) return undefined;
    cents = Math.round(v * 100);
    if (Math.abs(v * 100 - cents) > 1e-6) return undefined;
  } else {
    return undefined;
  }
  return cents > 0 || allowZero ? cents : undefined;
}

/** Flags arrive as JSON booleans (.NET), 1/0 (the reference's examples) or strings (PHP forms). */
export function isTruthyFlag(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 'true' || v === 'Y' || v === 'y';
}

export function formatCents(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** True when MMYY is a real month that has not ended yet (UTC). */
export function expirationState(mmyy: string, now: Date): 'ok' | 'invalid' | 'expired' {
  const m = /^(0[1-9]|1[0-2])(\d\d)$/.exec(mmyy);
  if (!m) return 'invalid';
  const year = 2000 + Number(m[2]);
  const month = Number(m[1]);
  const nowMonths = now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
  return year * 12 + month < nowMonths ? 'expired' : 'ok';
}

/** Our tokens (four groups of four) and the reference's example token ("dx0c3ns6xips28h3": 16 alnum, a letter at least). */
function looksLikeToken(n: string): boolean {
  return CARDREF_SHAPE.test(n) || /^(?=[a-z0-9]*[a-z])[a-z0-9]{16}$/.test(n);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseSale(body: unknown, now: Date): SaleParse {
  if (!isRecord(body)) return { ok: false, reject: ERRORS.bodyNotObject };
  const command = classifyCommand(body.command);
  if (command.kind === 'missing') return { ok: false, reject: ERRORS.missingCommand };
  if (command.kind === 'unknown') return { ok: false, unknownCommand: true };
  if (command.kind === 'known' && command.name === 'cc:save') return { ok: false, saveCard: true };
  if (command.kind === 'not-emulated' || command.name !== 'cc:sale') return { ok: false, reject: ERRORS.unsupportedCommand, detail: 'not emulated by the sandbox' };

  if (body.amount === undefined || body.amount === null || body.amount === '') return { ok: false, reject: ERRORS.missingAmount };
  const cents = amountCents(body.amount, false);
  if (cents === undefined) return { ok: false, reject: ERRORS.invalidAmount, detail: 'a decimal > 0 with at most 2 decimals' };
  // A number is kept in the decimal-string form the rest of the emulator (and the spec) uses.
  const amount = typeof body.amount === 'string' ? body.amount : formatCents(cents);

  let amountDetail: Partial<Record<DetailPart, string>> | undefined;
  if (body.amount_detail !== undefined) {
    const d = body.amount_detail;
    if (!isRecord(d)) return { ok: false, reject: ERRORS.invalidAmountDetail };
    amountDetail = {};
    for (const part of DETAIL_PARTS) {
      const v = d[part];
      if (v === undefined || v === null) continue;
      const c = amountCents(v, true);
      if (c === undefined) return { ok: false, reject: ERRORS.invalidAmountDetail, detail: `${part} must be a decimal` };
      amountDetail[part] = formatCents(c);
    }
    // The detail is a breakdown of the total (spec §2.3), so tax and tip cannot exceed it.
    const { tax: t = '0', tip: p = '0' } = amountDetail;
    if (toCents(t) + toCents(p) > cents) return { ok: false, reject: ERRORS.invalidAmountDetail, detail: 'tax + tip exceed amount' };
  }
  const tax = amountDetail?.tax;
  const tip = amountDetail?.tip;

  if (body.invoice !== undefined && (typeof body.invoice !== 'string' || body.invoice.length > MAX_INVOICE)) return { ok: false, reject: ERRORS.invalidField, detail: `invoice must be a string of at most ${MAX_INVOICE} characters` };
  const invoice = typeof body.invoice === 'string' ? body.invoice : '';

  const card = parseCard(body, now);
  if ('reject' in card) return { ok: false, reject: card.reject, ...(card.detail ? { detail: card.detail } : {}) };
  if ('saleError' in card) return { ok: false, saleError: card.saleError, invoice };
  const receiptTo = isTruthyFlag(body.send_receipt) && typeof body.email === 'string' && body.email !== '' ? body.email : undefined;
  return {
    ok: true,
    sale: {
      amountCents: cents,
      amount,
      ...(tax ? { tax } : {}),
      ...(tip ? { tip } : {}),
      ...(amountDetail ? { amountDetail } : {}),
      invoice,
      card: card.source,
      ...(isTruthyFlag(body.save_card) ? { saveCard: true } : {}),
      ...(receiptTo ? { receiptTo } : {}),
      ...(isRecord(body.traits) && isTruthyFlag(body.traits.is_recurring) ? { recurring: true } : {}),
    },
  };
}

/** The card of a transaction body: a token (UMCardRef or creditcard.number) or card data, or why not. */
export function parseCard(b: Record<string, unknown>, now: Date): { source: CardSource } | { reject: ErrorSpec; detail?: string } | { saleError: SaleErrorName } {
  const hasRef = b.UMCardRef !== undefined && b.UMCardRef !== null && b.UMCardRef !== '';
  const hasCard = b.creditcard !== undefined && b.creditcard !== null;
  if (hasRef && hasCard) return { reject: ERRORS.ambiguousCard };
  if (hasRef) {
    if (typeof b.UMCardRef !== 'string') return { reject: ERRORS.invalidField, detail: 'UMCardRef must be a string' };
    return { source: { kind: 'token', cardref: b.UMCardRef, via: 'UMCardRef' } };
  }
  if (!hasCard) return { reject: ERRORS.missingCard };
  const cc = b.creditcard;
  if (!isRecord(cc)) return { reject: ERRORS.missingCard, detail: 'creditcard must be an object' };
  for (const f of ['cardholder', 'cvc', 'avs_street', 'avs_zip', 'avs_postalcode'] as const) {
    if (cc[f] !== undefined && (typeof cc[f] !== 'string' || cc[f].length > MAX_FIELD)) return { reject: ERRORS.invalidField, detail: `creditcard.${f} must be a string` };
  }
  if (cc.number === undefined || cc.number === null || cc.number === '') return { reject: ERRORS.missingCard, detail: 'creditcard.number' };
  if (typeof cc.number !== 'string') return { reject: ERRORS.invalidField, detail: 'creditcard.number must be a string' };
  if (cc.expiration !== undefined && typeof cc.expiration !== 'string') return { reject: ERRORS.invalidField, detail: 'creditcard.expiration must be a string' };
  // A token in the number: the documented form (expiration "0000", gateway-facts.md) and the reference's
  // "Token Sale" / the .NET client's TokenSaleRequest (only `cvc`, no expiration) alike.
  if (looksLikeToken(cc.number)) return { source: { kind: 'token', cardref: cc.number, via: 'creditcard.number' } };
  if (!isCardNumber(cc.number)) return { saleError: 'invalidCardNumber' };
  const exp = expirationState(typeof cc.expiration === 'string' ? cc.expiration : '', now);
  if (exp === 'invalid') return { saleError: 'invalidExpiration' };
  if (exp === 'expired') return { saleError: 'cardExpired' };
  return { source: { kind: 'card', number: cc.number, expiration: cc.expiration as string } };
}

export { SALE_ERRORS };
