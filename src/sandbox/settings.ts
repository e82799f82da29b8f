import { WEBHOOK_DEFAULTS, isWebhookSetting, validateWebhookSetting, type WebhookSettings } from './webhooks/settings';

/** The emulator's knobs: defaults, and validation of partial updates (from code or POST /_sandbox/settings). */

export type SandboxRateMode = 'fixed' | 'sliding';

/**
 * Where the spec and the real wire disagree (README, Wire format): `spec` (default) answers list `total` as an
 * integer and customers with the spec's `firstname`/`lastname` beside the wire's names; `wire` answers exactly
 * the captured forms (`total` a string, `first_name`/`last_name` only, no emulator-only `pmid`).
 */
export type SandboxWireFormat = 'spec' | 'wire';

/**
 * What a sale with the card reference of a removed payment method gets (undocumented at the gateway;
 * gateway-facts.md, the wallet): `refused` answers error 602, `honoured` still charges the card.
 */
export type SandboxDeletedCardref = 'refused' | 'honoured';

/**
 * Whether a transaction look-up lists a sale's refunds (issue 42): `none` (default) as the reference's example and
 * the real sandbox's capture (gateway-facts.md, Looking transactions up); `listed` for the other plausible reading.
 */
export type SandboxLookupRefunds = 'none' | 'listed';
/** Whether `GET /transactions/{key}` carries `auth_amount` (README.md, Sources: the spec's transaction response has it, the reference's look-up example and the capture do not). */
export type SandboxLookupAuthAmount = 'listed' | 'omitted';

/**
 * What the gateway keeps of a follow-up's `custom_fields` (issue 42): `echoed` (default) as a merchant who set the
 * fields up in the console gets them back on the refund's look-up and list items; `dropped` as one who did not
 * (the reference: "set up custom fields ... prior to using them").
 */
export type SandboxCustomFields = 'echoed' | 'dropped';

/**
 * Whether `check:sale` takes a Pay.js check form's `payment_key` (undocumented: gateway-facts.md, ACH): `accepted`
 * (default) it does, as `cc:sale` takes a card's; `refused` it answers an error, and the key is taken only by
 * `POST /customers/{c}/payment_methods` `[{"pay_type":"check","payment_key"}]` (README.md, "ACH").
 */
export type SandboxCheckPaymentKey = 'accepted' | 'refused';

export interface EndpointKeySettings {
  key: string;
  ratePerMinute?: number;
  ratePerDay?: number;
  /** Client IPs allowed on this endpoint key; unset = any IP (spec §1, §5: developer-registered endpoints). */
  allowIps?: string[];
}

/** The webhook knobs (webhooks/settings.ts) ride along with the rest. */
export interface SandboxSettings extends WebhookSettings {
  apiKey: string;
  apiPin: string;
  ratePerMinute: number;
  ratePerDay: number;
  rateWindowMs: number;
  rateDayWindowMs: number;
  rateMode: SandboxRateMode;
  latencyMs: number;
  jitterMs: number;
  /** Per-API-key setting at the real gateway, OFF by default (gateway-facts.md, Transactions). */
  duplicateFolding: boolean;
  /** Extra endpoint keys besides "v2" (spec §9). */
  endpointKeys: EndpointKeySettings[];
  /** Multiplies the slow test cards' delays (1 = the real 5 s / 15 s). */
  slowCardScale: number;
  wireFormat: SandboxWireFormat;
  /** Close (and settle) the open batch once it has been open this long; 0 = only POST batches/current/close. */
  batchCloseIntervalMs: number;
  /**
   * The merchant's daily close (gateway-facts.md, Batches and settlement: "once a day, at the merchant's
   * configured time"): "HH:MM" in the sandbox's gateway time, UTC (the zone the gateway writes its times in is
   * undocumented; every time the sandbox writes is UTC); '' = no daily close (only on request).
   */
  batchCloseAt: string;
  /** How long a Pay.js payment key can be used after it was minted (payment-keys.ts). */
  paymentKeyTtlMs: number;
  deletedCardref: SandboxDeletedCardref;
  lookupRefunds: SandboxLookupRefunds;
  lookupAuthAmount: SandboxLookupAuthAmount;
  customFields: SandboxCustomFields;
  /** The `merch_key` its webhooks carry (README.md, Webhooks). */
  merchantKey: string;
  /**
   * A `refund` without `amount` after an earlier partial refund (undocumented: the reference says only "a full
   * refund on the transaction"): `left` refunds what is left; `original` asks for the original amount, refused
   * as exceeding it once anything was refunded.
   */
  refundWithoutAmount: 'left' | 'original';
  checkPaymentKey: SandboxCheckPaymentKey;
  /**
   * A check form's `payment_key` sent on a CARD command (`cc:sale`, `authonly`), undocumented (README.md "ACH"):
   * `refused` it is unknown there (error 10210, the key unspent); `charged` the key is spent and the account
   * debited as by `check:sale` (a check's answer: no `creditcard`, `trantype` "Check Sale"), with no authorization.
   */
  cardSaleCheckKey: 'refused' | 'charged';
  /**
   * A refund (`refund`, `creditvoid`, `refund:adjust`) of a returned check (undocumented, README.md "ACH"): `refused`
   * error 10125, nothing to give back; `approved` a credit back to the account, as of a settled check.
   */
  returnedCheckRefund: 'refused' | 'approved';
  /**
   * Whether a credit to a bank account (a check's refund) comes back when the account is a return test account
   * (undocumented, README.md "ACH"): `never` (the facts show returns of debits only); `returned` on the ACH clock as
   * a debit's, `ach.returned` about the credit's key; `failed` then as `ach.failed` (status E) about it.
   */
  creditReturns: 'never' | 'returned' | 'failed';
}

/** The documented example credentials (gateway-facts.md, Authentication), so the documented header works as is. */
export const DEFAULT_SETTINGS: Readonly<SandboxSettings> = Object.freeze({
  apiKey: '_V87Qtb513Cd3vabM7RC0TbtJWeSo8p7',
  apiPin: '123456',
  ratePerMinute: 45,
  ratePerDay: 5000,
  rateWindowMs: 60_000,
  rateDayWindowMs: 86_400_000,
  rateMode: 'fixed',
  latencyMs: 0,
  jitterMs: 0,
  duplicateFolding: false,
  endpointKeys: [],
  slowCardScale: 1,
  wireFormat: 'spec',
  batchCloseIntervalMs: 0,
  batchCloseAt: '',
  paymentKeyTtlMs: 15 * 60_000,
  deletedCardref: 'refused',
  lookupRefunds: 'none',
  lookupAuthAmount: 'listed',
  customFields: 'echoed',
  // The reference's example merchant (UsaEPay.NET docs/api-rest.md, Webhooks): fixed, so a test can name it.
  merchantKey: '5qwnn5b51gnkd1b',
  refundWithoutAmount: 'left',
  checkPaymentKey: 'accepted',
  cardSaleCheckKey: 'refused',
  returnedCheckRefund: 'refused',
  creditReturns: 'never',
  ...WEBHOOK_DEFAULTS,
});

/** Path segments that are not endpoint keys (the spec's test paths). */
export const RESERVED_ENDPOINT_KEYS = new Set(['v2', 'RATELIMT', 'IPACCESS']);

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

const INTS: Record<string, [min: number, max: number]> = {
  ratePerMinute: [1, 1_000_000],
  ratePerDay: [1, 100_000_000],
  rateWindowMs: [1, 366 * 86_400_000],
  rateDayWindowMs: [1, 366 * 86_400_000],
  latencyMs: [0, 600_000],
  jitterMs: [0, 600_000],
  batchCloseIntervalMs: [0, 366 * 86_400_000],
  paymentKeyTtlMs: [1, 86_400_000],
};

function isInt(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max;
}

function checkEndpointKeys(raw: unknown): EndpointKeySettings[] {
  if (!Array.isArray(raw)) throw new SettingsError('endpointKeys must be an array');
  const seen = new Set<string>();
  return raw.map((item: unknown, i) => {
    if (!item || typeof item !== 'object') throw new SettingsError(`endpointKeys[${i}] must be an object`);
    const e = item as Record<string, unknown>;
    if (typeof e.key !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(e.key) || RESERVED_ENDPOINT_KEYS.has(e.key)) {
      throw new SettingsError(`endpointKeys[${i}].key must be 1-64 of [A-Za-z0-9_-] and not v2/RATELIMT/IPACCESS`);
    }
    if (seen.has(e.key)) throw new SettingsError(`endpointKeys[${i}].key is a duplicate`);
    seen.add(e.key);
    const out: EndpointKeySettings = { key: e.key };
    for (const name of ['ratePerMinute', 'ratePerDay'] as const) {
      const range = INTS[name] as [number, number];
      if (e[name] !== undefined) {
        if (!isInt(e[name], range[0], range[1])) throw new SettingsError(`endpointKeys[${i}].${name} must be a whole number in ${range.join('..')}`);
        out[name] = e[name];
      }
    }
    if (e.allowIps !== undefined) {
      if (!Array.isArray(e.allowIps) || !e.allowIps.every((ip) => typeof ip === 'string')) throw new SettingsError(`endpointKeys[${i}].allowIps must be an array of strings`);
      out.allowIps = [...(e.allowIps as string[])];
    }
    return out;
  });
}

/** Validates a partial update and returns a clean copy; unknown names and bad values throw SettingsError. */
export function validateSettings(partial: unknown): Partial<SandboxSettings> {
  if (!partial || typeof partial !== 'object' || Array.isArray(partial)) throw new SettingsError('settings must be an object');
  const out: Partial<SandboxSettings> = {};
  for (const [name, value] of Object.entries(partial)) {
    const range = INTS[name];
    if (range) {
      if (!isInt(value, range[0], range[1])) throw new SettingsError(`${name} must be a whole number in ${range.join('..')}`);
      (out as Record<string, unknown>)[name] = value;
    } else if (name === 'apiKey') {
      if (typeof value !== 'string' || !/^[^:\s]{8,}$/.test(value)) throw new SettingsError('apiKey must be 8+ characters without ":" or spaces');
      out.apiKey = value;
    } else if (name === 'apiPin') {
      if (typeof value !== 'string' || value.length === 0) throw new SettingsError('apiPin must be a non-empty string');
      out.apiPin = value;
    } else if (name === 'rateMode') {
      if (value !== 'fixed' && value !== 'sliding') throw new SettingsError('rateMode must be fixed or sliding');
      out.rateMode = value;
    } else if (name === 'wireFormat') {
      if (value !== 'spec' && value !== 'wire') throw new SettingsError('wireFormat must be spec or wire');
      out.wireFormat = value;
    } else if (name === 'duplicateFolding') {
      if (typeof value !== 'boolean') throw new SettingsError('duplicateFolding must be true or false');
      out.duplicateFolding = value;
    } else if (name === 'slowCardScale') {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) throw new SettingsError('slowCardScale must be a number in 0..100');
      out.slowCardScale = value;
    } else if (name === 'deletedCardref') {
      if (value !== 'refused' && value !== 'honoured') throw new SettingsError('deletedCardref must be refused or honoured');
      out.deletedCardref = value;
    } else if (name === 'lookupRefunds') {
      if (value !== 'none' && value !== 'listed') throw new SettingsError('lookupRefunds must be none or listed');
      out.lookupRefunds = value;
    } else if (name === 'lookupAuthAmount') {
      if (value !== 'listed' && value !== 'omitted') throw new SettingsError('lookupAuthAmount must be listed or omitted');
      out.lookupAuthAmount = value;
    } else if (name === 'customFields') {
      if (value !== 'echoed' && value !== 'dropped') throw new SettingsError('customFields must be echoed or dropped');
      out.customFields = value;
    } else if (name === 'merchantKey') {
      if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{4,64}$/.test(value)) throw new SettingsError('merchantKey must be 4-64 of [A-Za-z0-9_-]');
      out.merchantKey = value;
    } else if (name === 'refundWithoutAmount') {
      if (value !== 'left' && value !== 'original') throw new SettingsError('refundWithoutAmount must be left or original');
      out.refundWithoutAmount = value;
    } else if (name === 'batchCloseAt') {
      if (typeof value !== 'string' || !/^$|^([01]\d|2[0-3]):[0-5]\d$/.test(value)) throw new SettingsError('batchCloseAt must be "HH:MM" (UTC) or ""');
      out.batchCloseAt = value;
    } else if (name === 'checkPaymentKey') {
      if (value !== 'accepted' && value !== 'refused') throw new SettingsError('checkPaymentKey must be accepted or refused');
      out.checkPaymentKey = value;
    } else if (name === 'cardSaleCheckKey') {
      if (value !== 'refused' && value !== 'charged') throw new SettingsError('cardSaleCheckKey must be refused or charged');
      out.cardSaleCheckKey = value;
    } else if (name === 'returnedCheckRefund') {
      if (value !== 'refused' && value !== 'approved') throw new SettingsError('returnedCheckRefund must be refused or approved');
      out.returnedCheckRefund = value;
    } else if (name === 'creditReturns') {
      if (value !== 'never' && value !== 'returned' && value !== 'failed') throw new SettingsError('creditReturns must be never, returned or failed');
      out.creditReturns = value;
    } else if (name === 'endpointKeys') {
      out.endpointKeys = checkEndpointKeys(value);
    } else if (isWebhookSetting(name)) {
      Object.assign(out, validateWebhookSetting(name, value, (message) => new SettingsError(message)));
    } else {
      throw new SettingsError(`unknown setting "${name}"`);
    }
  }
  return out;
}

export function resolveSettings(partial: Partial<SandboxSettings> = {}): SandboxSettings {
  return { ...DEFAULT_SETTINGS, endpointKeys: [], ...validateSettings(partial) };
}
