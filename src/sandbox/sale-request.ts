import { ERRORS, SALE_ERRORS, type ErrorSpec, type SaleErrorName } from './errors';
import { CARDREF_SHAPE, isCardNumber } from './cards';

/**
 * Parses the body of POST /transactions (spec §2.3) into a typed sale, or says why not:
 *   - request-shape problems → HTTP 400 gateway error (`reject`);
 *   - card-data problems (Luhn, length, expiration) → HTTP 200 result_code "E" (`saleError`), as the gateway
 *     treats them as a failed transaction, not a bad request.
 */

export type CardSource =
  /** A card reference token, from `UMCardRef` (spec) or `creditcard.number` + expiration "0000" (REST v2 docs). */
  | { kind: 'token'; cardref: string; via: 'UMCardRef' | 'creditcard.number' }
  | { kind: 'card'; number: string; expiration: string };

export interface SaleInput {
  amountCents: number;
  amount: string;
  tax?: string;
  tip?: string;
  invoice: string;
  card: CardSource;
}

export type SaleParse =
  | { ok: true; sale: SaleInput }
  | { ok: false; reject: ErrorSpec; detail?: string }
  | { ok: false; saleError: SaleErrorName; invoice: string };

/** Decimal string > 0, at most 2 decimals and 10 integer digits. */
const AMOUNT = /^\d{1,10}(\.\d{1,2})?$/;
const MAX_INVOICE = 255;
const MAX_FIELD = 255;

export function toCents(amount: string): number {
  const [whole, frac = ''] = amount.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
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

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseSale(body: unknown, now: Date): SaleParse {
  if (!isRecord(body)) return { ok: false, reject: ERRORS.bodyNotObject };
  if (body.command === undefined || body.command === null || body.command === '') return { ok: false, reject: ERRORS.missingCommand };
  // Other commands exist at the gateway (gateway-facts.md) but the project needs only cc:sale.
  if (body.command !== 'cc:sale') return { ok: false, reject: ERRORS.unsupportedCommand };

  if (body.amount === undefined || body.amount === null || body.amount === '') return { ok: false, reject: ERRORS.missingAmount };
  // Strings only: the spec's interface sends every value, amounts included, as a string (§2).
  if (typeof body.amount !== 'string' || !AMOUNT.test(body.amount) || toCents(body.amount) <= 0) return { ok: false, reject: ERRORS.invalidAmount, detail: 'a decimal string > 0 with at most 2 decimals' };
  const amountCents = toCents(body.amount);

  let tax: string | undefined;
  let tip: string | undefined;
  if (body.amount_detail !== undefined) {
    const d = body.amount_detail;
    if (!isRecord(d)) return { ok: false, reject: ERRORS.invalidAmountDetail };
    for (const part of ['tax', 'tip'] as const) {
      const v = d[part];
      if (v === undefined) continue;
      if (typeof v !== 'string' || !AMOUNT.test(v)) return { ok: false, reject: ERRORS.invalidAmountDetail, detail: `${part} must be a decimal string` };
      if (part === 'tax') tax = v;
      else tip = v;
    }
    // The detail is a breakdown of the total (spec §2.3), so its parts cannot exceed it.
    if ((tax ? toCents(tax) : 0) + (tip ? toCents(tip) : 0) > amountCents) return { ok: false, reject: ERRORS.invalidAmountDetail, detail: 'tax + tip exceed amount' };
  }

  if (body.invoice !== undefined && (typeof body.invoice !== 'string' || body.invoice.length > MAX_INVOICE)) return { ok: false, reject: ERRORS.invalidField, detail: `invoice must be a string of at most ${MAX_INVOICE} characters` };
  const invoice = typeof body.invoice === 'string' ? body.invoice : '';

  const card = parseCard(body);
  if ('reject' in card) return { ok: false, reject: card.reject, ...(card.detail ? { detail: card.detail } : {}) };
  if ('saleError' in card) return { ok: false, saleError: card.saleError, invoice };
  return { ok: true, sale: { amountCents, amount: body.amount, ...(tax ? { tax } : {}), ...(tip ? { tip } : {}), invoice, card: card.source } };

  function parseCard(b: Record<string, unknown>): { source: CardSource } | { reject: ErrorSpec; detail?: string } | { saleError: SaleErrorName } {
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
    for (const f of ['cardholder', 'cvc', 'avs_street', 'avs_zip'] as const) {
      if (cc[f] !== undefined && (typeof cc[f] !== 'string' || cc[f].length > MAX_FIELD)) return { reject: ERRORS.invalidField, detail: `creditcard.${f} must be a string` };
    }
    if (cc.number === undefined || cc.number === null || cc.number === '') return { reject: ERRORS.missingCard, detail: 'creditcard.number' };
    if (typeof cc.number !== 'string') return { reject: ERRORS.invalidField, detail: 'creditcard.number must be a string' };
    if (cc.expiration !== undefined && typeof cc.expiration !== 'string') return { reject: ERRORS.invalidField, detail: 'creditcard.expiration must be a string' };
    // Documented REST v2 token form (gateway-facts.md, Transactions).
    if (cc.expiration === '0000' && CARDREF_SHAPE.test(cc.number)) return { source: { kind: 'token', cardref: cc.number, via: 'creditcard.number' } };
    if (!isCardNumber(cc.number)) return { saleError: 'invalidCardNumber' };
    const exp = expirationState(typeof cc.expiration === 'string' ? cc.expiration : '', now);
    if (exp === 'invalid') return { saleError: 'invalidExpiration' };
    if (exp === 'expired') return { saleError: 'cardExpired' };
    return { source: { kind: 'card', number: cc.number, expiration: cc.expiration as string } };
  }
}

export { SALE_ERRORS };
