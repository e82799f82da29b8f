import { createHash, randomInt } from 'node:crypto';
import { AVS_TEXT, CARD_TYPE_LETTER, CVC_TEXT, brandOf, maskCardNumber, outcomeFor } from './cards';
import { SALE_ERRORS, type SaleErrorName } from './errors';
import { randomAlnum, type FixtureStore } from './fixtures';
import { formatCents, toCents, type SaleInput } from './sale-request';
import { ScriptedDeclines } from './scripted-declines';

/** Fixed texts of a card-not-present sale answer (UsaEPay.NET WireFormatDeserializationTests, CcSale). */
export const SALE_TRANTYPE = 'Credit Card Sale';
export const ENTRY_MODE_KEYED = 'Card Not Present, Manually Keyed';
/** What a sale with `send_receipt` and `email` answers in `receipts.customer` (same capture). */
export const RECEIPT_SENT = 'Mail Sent Successfully';

const REFNUM_EPOCH_MS = Date.UTC(2024, 0, 1);

/** Processes sales: outcome by test card, refnums, batches, duplicate folding, and the record of every charge. */

export type Delivery = 'pending' | 'delivered' | 'garbled' | 'lost';

/** A sale the sandbox PROCESSED (charged or declined). Errors (result_code E) are not sales and not recorded. */
export interface RecordedTransaction {
  refnum: string;
  key: string;
  /** Epoch ms when the sale was processed. */
  time: number;
  endpointKey: string;
  clientIp: string;
  invoice: string;
  amount: string;
  auth_amount: string;
  result_code: 'A' | 'P' | 'D';
  result: string;
  /** Masked card number (first four + x + last four). */
  maskedNumber: string;
  /** The token charged, when the sale used one. */
  cardref?: string;
  custkey?: string;
  pmkey?: string;
  cardSource: 'UMCardRef' | 'creditcard.number' | 'card' | 'payment_key';
  /** Sent with `traits.is_recurring` (gateway-facts.md: a charge the shopper does not start). */
  recurring?: true;
  /** True for an `authonly` (held, not charged until captured: see ledger.get(key) in lifecycle.ts). */
  authOnly?: boolean;
  /** Later identical sales folded into this one (is_duplicate "Y"), when duplicate folding is on. */
  foldedDuplicates: number;
  /** What became of the answer: delivered, garbled (fault), lost (hang, reset, client gone) or still pending. */
  delivery: Delivery;
  /** True only when a readable answer was fully sent. */
  delivered: boolean;
}

export type TransactionResponse = Record<string, unknown> & { type: 'transaction'; key: string; refnum: string; result_code: string };

export interface SaleOutcome {
  response: TransactionResponse;
  /** The new record, when a sale was processed (not for errors or folded duplicates). */
  record?: RecordedTransaction;
  folded: boolean;
  /** Extra time before answering (slow test cards), in ms. */
  delayMs: number;
}

/** Folding window: "shortly after" in gateway-facts.md; 15 minutes is the emulator's choice. */
export const DUPLICATE_WINDOW_MS = 15 * 60_000;

export interface SaleContext {
  endpointKey: string;
  clientIp: string;
  now: number;
  duplicateFolding: boolean;
  /** Folding compares within one scope only (authonly never folds into a sale); '' for sales. */
  foldScope?: string;
  slowCardScale: number;
  /** A removed payment method's token: refused (602, the default) or honoured (charged). */
  deletedCardref?: 'refused' | 'honoured';
}

export class Ledger {
  private records: RecordedTransaction[] = [];
  private duplicates = new Map<string, { record: RecordedTransaction; response: TransactionResponse }>();
  private lastRefnum = 0;

  private batches = new Map<string, { key: string; batchrefnum: number; sequence: string }>();
  foldedTotal = 0;
  /** Declines on request (scripted-declines.ts). */
  readonly scripted = new ScriptedDeclines();

  constructor(private readonly fixtures: FixtureStore) {}

  transactions(): RecordedTransaction[] {
    return this.records.map((r) => ({ ...r }));
  }

  /** Records, counters and duplicate memory back to start; refnums keep increasing so they stay unique. */
  reset(): void {
    this.records = [];
    this.duplicates.clear();
    this.foldedTotal = 0;
    this.scripted.clear();
  }

  error(name: SaleErrorName, invoice: string, now: number): SaleOutcome {
    const e = SALE_ERRORS[name];
    const response: TransactionResponse = { type: 'transaction', key: this.newKey(), refnum: this.nextRefnum(now), is_duplicate: 'N', result_code: 'E', result: 'Error', error: e.error, error_code: e.error_code, authcode: '', invoice, auth_amount: '0.00' };
    return { response, folded: false, delayMs: 0 };
  }

  sale(input: SaleInput, ctx: SaleContext): SaleOutcome {
    let number: string;
    let expiration: string;
    let token: { cardref: string; custkey?: string; pmkey?: string } | undefined;
    if (input.card.kind === 'token') {
      const found = this.fixtures.lookupToken(input.card.cardref);
      // A rotated, unknown or expired token is an error answer the client recognises by its code (10142).
      if (!found || found.expires < new Date(ctx.now).toISOString().slice(0, 10)) return this.error('cardrefInvalid', input.invoice, ctx.now);
      if (found.removed && ctx.deletedCardref !== 'honoured') return this.error('cardrefRemoved', input.invoice, ctx.now);
      number = found.number;
      expiration = found.expiration;
      token = { cardref: input.card.cardref, ...(found.custkey ? { custkey: found.custkey, pmkey: found.pmkey } : {}) };
    } else {
      number = input.card.number;
      expiration = input.card.expiration;
    }

    const dupKey = `${ctx.foldScope ?? ''}|${createHash('sha256').update(number).digest('hex')}|${input.amountCents}|${input.invoice}`;
    if (ctx.duplicateFolding) {
      const prior = this.duplicates.get(dupKey);
      if (prior && ctx.now - prior.record.time <= DUPLICATE_WINDOW_MS) {
        prior.record.foldedDuplicates++;
        this.foldedTotal++;
        // The ORIGINAL transaction's answer, flagged (gateway-facts.md, Transactions).
        return { response: { ...prior.response, is_duplicate: 'Y' }, folded: true, delayMs: 0 };
      }
    }

    const card = outcomeFor(number);
    const outcome = this.scripted.take(token?.pmkey, card) ?? card;
    const key = this.newKey();
    const refnum = this.nextRefnum(ctx.now);
    const authCents = outcome.kind === 'declined' ? 0 : outcome.kind === 'partial' ? Math.floor((input.amountCents * (outcome.partialPercent as number)) / 100) : input.amountCents;
    const resultCode = outcome.kind === 'approved' ? 'A' : outcome.kind === 'partial' ? 'P' : 'D';
    const result = { A: 'Approved', P: 'Partially Approved', D: 'Declined' }[resultCode];
    const masked = maskCardNumber(number);
    const brand = brandOf(number);
    // Field order and sets as captured from the real sandbox (UsaEPay.NET WireFormatDeserializationTests, CcSale).
    const response: TransactionResponse = {
      type: 'transaction',
      key,
      refnum,
      is_duplicate: 'N',
      result_code: resultCode,
      result,
      authcode: resultCode === 'D' ? '' : String(randomInt(100000, 1000000)),
      creditcard: { type: CARD_TYPE_LETTER[brand], number: masked, category_code: 'A', entry_mode: ENTRY_MODE_KEYED },
      invoice: input.invoice,
      avs: { result_code: outcome.avs, result: AVS_TEXT[outcome.avs] ?? '' },
      cvc: { result_code: outcome.cvc, result: CVC_TEXT[outcome.cvc] ?? '' },
      ...(resultCode === 'D' ? { error: outcome.decline?.error, error_code: outcome.decline?.error_code } : { batch: this.batchFor(ctx.now) }),
      auth_amount: formatCents(authCents),
      ...(input.amountDetail ? { amount_detail: amountDetailEcho(input.amountDetail, input.amountCents) } : {}),
      ...(input.saveCard && resultCode !== 'D'
        ? { savedcard: { type: brand, key: token ? token.cardref : this.fixtures.saveCard(number, expiration), cardnumber: masked, expiration } }
        : {}),
      trantype: SALE_TRANTYPE,
      ...(input.receiptTo ? { receipts: { customer: RECEIPT_SENT } } : {}),
    };
    const record: RecordedTransaction = {
      refnum,
      key,
      time: ctx.now,
      endpointKey: ctx.endpointKey,
      clientIp: ctx.clientIp,
      invoice: input.invoice,
      amount: input.amount,
      auth_amount: formatCents(authCents),
      result_code: resultCode,
      result,
      maskedNumber: masked,
      ...(token ?? {}),
      cardSource: input.card.kind === 'token' ? input.card.via : 'card',
      ...(input.recurring ? { recurring: true } : {}),
      foldedDuplicates: 0,
      delivery: 'pending',
      delivered: false,
    };
    this.records.push(record);
    if (resultCode !== 'D') this.fixtures.rememberTransactionCard(key, { number, expiration });
    this.duplicates.delete(dupKey);
    this.duplicates.set(dupKey, { record, response });
    this.pruneDuplicates(ctx.now);
    return { response, record, folded: false, delayMs: Math.round((outcome.delayMs ?? 0) * ctx.slowCardScale) };
  }

  /** Sales the duplicate memory still holds (those of the last DUPLICATE_WINDOW_MS, give or take a clock step). */
  get duplicateMemorySize(): number {
    return this.duplicates.size;
  }

  /**
   * Insertion order is time order (sale() deletes a key before setting it again), so expired entries are at
   * the front: drop them and stop at the first live one. Each sale does work for what expired, not a scan of
   * the whole memory (which made every sale O(sales of the last 15 minutes) and slowed the sandbox down
   * round after round in the overhead benchmark).
   */
  private pruneDuplicates(now: number): void {
    for (const [k, v] of this.duplicates) {
      if (now - v.record.time <= DUPLICATE_WINDOW_MS) break;
      this.duplicates.delete(k);
    }
  }

  /** Transaction keys look like the gateway's: lowercase alphanumerics, 15 characters, starting with a letter. */
  private newKey(): string {
    return `d${randomAlnum(14)}`;
  }

  /** Numeric, strictly increasing, and unique across restarts (seeded from the clock). */
  /**
   * Increasing across resets and restarts (clock-based), and at most 12 digits: real refnums are 10 digits
   * (gateway-api-v2.md examples), and a 13-19 digit one could pass Luhn and be taken for a card number
   * by every PAN scrubber downstream. Centiseconds since 2024-01-01 stay at 11 digits until the 2050s.
   */
  nextRefnum(now: number): string {
    this.lastRefnum = Math.max(this.lastRefnum + 1, Math.floor((now - REFNUM_EPOCH_MS) / 10));
    return String(this.lastRefnum);
  }

  /**
   * One batch per UTC day (an emulator simplification). `batchrefnum` is a NUMBER in a sale's answer (captured
   * and in the reference's examples; a string in transaction lookups): 400000 + days since 2024-01-01, so it
   * stays the same for the day across restarts.
   */
  private batchFor(now: number): { type: 'batch'; key: string; batchrefnum: number; sequence: string } {
    const day = new Date(now).toISOString().slice(0, 10);
    let b = this.batches.get(day);
    if (!b) {
      b = { key: `ft${randomAlnum(13)}`, batchrefnum: 400_000 + Math.floor((now - REFNUM_EPOCH_MS) / 86_400_000), sequence: String(this.batches.size + 1) };
      this.batches.set(day, b);
    }
    return { type: 'batch', key: b.key, batchrefnum: b.batchrefnum, sequence: b.sequence };
  }
}

/**
 * The amount_detail echo: tip, tax, shipping and subtotal always (zeros when not sent), discount when sent.
 * An unsent subtotal is what remains of the amount (as the captured transaction list shows for a plain sale).
 */
function amountDetailEcho(d: Partial<Record<'tax' | 'tip' | 'subtotal' | 'shipping' | 'discount', string>>, amountCents: number): Record<string, string> {
  const c = (v: string | undefined) => (v ? toCents(v) : 0);
  const rest = Math.max(0, amountCents - c(d.tax) - c(d.tip) - c(d.shipping) + c(d.discount));
  return { tip: d.tip ?? '0.00', tax: d.tax ?? '0.00', shipping: d.shipping ?? '0.00', subtotal: d.subtotal ?? formatCents(rest), ...(d.discount ? { discount: d.discount } : {}) };
}
