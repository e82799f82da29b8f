import { createHash, randomBytes } from 'node:crypto';
import type { BankAccount } from './ach/bank';

/**
 * Pay.js payment keys (gateway-facts.md, "Adding a card without touching card data"): the browser's card form
 * (an iframe on the gateway's origin) sends the card here and gets back a single-use `payment_key`, which the
 * merchant's server then sends in place of `creditcard` in `cc:sale` or `authonly`. Emulator choices where the
 * facts are silent (README): a key lives `paymentKeyTtlMs` (15 minutes by default); it is tied to the public
 * key it was minted under; the first sale or authonly that names it consumes it, approved or declined; the
 * card is dropped from memory when the key is consumed, leaving only a marker that it was used.
 * A key's life is wall time, never the sandbox's movable clock (clock.ts): it bounds the real minutes between the
 * shopper's form and the merchant's call, which no test clock moves; on the sandbox clock a jump of a day (to move
 * the ACH clock or a subscription) expired a key minted a moment before it (issue 38 item 5).
 */

export interface PaymentKeyCard {
  number: string;
  /** MMYY */
  expiration: string;
  cvc?: string;
  cardholder?: string;
  avs_street?: string;
  avs_postalcode?: string;
}

export type ConsumeResult =
  | { ok: true; card: PaymentKeyCard }
  | { ok: false; reason: 'unknown' | 'used' | 'expired' };

/** A check form's key (gateway-facts.md, ACH: "yields a payment_key like the card form"). */
export type ConsumeCheckResult =
  | { ok: true; account: BankAccount }
  | { ok: false; reason: 'unknown' | 'used' | 'expired' };

interface Entry {
  publicKey: string;
  expiresAt: number;
  card: PaymentKeyCard | undefined;
  /** Set instead of `card` for a key the check form minted. */
  check?: BankAccount | undefined;
  /** Minted by the card form. */
  wasCard?: boolean;
}

/** The merchant's public key: derived from the API key, so it is stable across restarts (a real key is too). */
export function publicKeyFor(apiKey: string): string {
  return `_P${createHash('sha256').update(`publickey\u0000${apiKey}`).digest('base64url').replace(/[-_]/g, '').slice(0, 38)}`;
}

/** At most this many live keys: a browser flood cannot fill the emulator's memory. */
const MAX_KEYS = 50_000;

export class PaymentKeys {
  private readonly keys = new Map<string, Entry>();

  constructor(private readonly wall: () => number = Date.now) {}

  mint(publicKey: string, card: PaymentKeyCard, ttlMs: number): string {
    const now = this.wall();
    this.prune(now);
    if (this.keys.size >= MAX_KEYS) this.keys.delete(this.keys.keys().next().value as string);
    const key = `pk_${randomBytes(18).toString('base64url')}`;
    this.keys.set(key, { publicKey, expiresAt: now + ttlMs, card: { ...card }, wasCard: true });
    return key;
  }

  /** A key for a bank account typed into the check form: single use, the same life as a card's. */
  mintCheck(publicKey: string, account: BankAccount, ttlMs: number): string {
    const now = this.wall();
    this.prune(now);
    if (this.keys.size >= MAX_KEYS) this.keys.delete(this.keys.keys().next().value as string);
    const key = `pk_${randomBytes(18).toString('base64url')}`;
    this.keys.set(key, { publicKey, expiresAt: now + ttlMs, card: undefined, check: { ...account } });
    return key;
  }

  /** Whether `key` is a live check form's key of this merchant (nothing spent). */
  isCheck(key: string, publicKey: string): boolean {
    const entry = this.keys.get(key);
    return entry !== undefined && entry.publicKey === publicKey && !entry.wasCard && entry.check !== undefined && this.wall() < entry.expiresAt;
  }

  /** Takes the bank account of a check form's key; a card's key is unknown here (and stays unspent). */
  consumeCheck(key: string, publicKey: string): ConsumeCheckResult {
    const now = this.wall();
    const entry = this.keys.get(key);
    if (!entry || entry.publicKey !== publicKey || entry.wasCard) return { ok: false, reason: 'unknown' };
    if (!entry.check) return { ok: false, reason: 'used' };
    if (now >= entry.expiresAt) {
      this.keys.delete(key);
      return { ok: false, reason: 'expired' };
    }
    const account = entry.check;
    entry.check = undefined;
    return { ok: true, account };
  }

  /** Takes the card of a key minted under `publicKey`; a key of another merchant, or a check form's, is unknown here. */
  consume(key: string, publicKey: string): ConsumeResult {
    const now = this.wall();
    const entry = this.keys.get(key);
    if (!entry || entry.publicKey !== publicKey || !entry.wasCard) return { ok: false, reason: 'unknown' };
    if (!entry.card) return { ok: false, reason: 'used' };
    if (now >= entry.expiresAt) {
      this.keys.delete(key);
      return { ok: false, reason: 'expired' };
    }
    const card = entry.card;
    entry.card = undefined; // single use: the card leaves memory with its first use
    return { ok: true, card };
  }

  /** Keys minted and not yet used or expired (admin stats). */
  live(): number {
    const now = this.wall();
    let n = 0;
    for (const e of this.keys.values()) if ((e.card || e.check) && now < e.expiresAt) n++;
    return n;
  }

  reset(): void {
    this.keys.clear();
  }

  /** Insertion order is expiry order (one TTL for all): drop from the front until a live one. */
  private prune(now: number): void {
    for (const [k, e] of this.keys) {
      if (now < e.expiresAt) break;
      this.keys.delete(k);
    }
  }
}
