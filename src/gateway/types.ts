/** Gateway wire objects (gateway-api-v2.md §2, gateway-facts.md), parsed once at the client's edge. */

export type ResultCode = 'A' | 'P' | 'D' | 'E' | 'V';

export interface Transaction {
  type: 'transaction';
  key: string;
  refnum: string;
  is_duplicate: string;
  result_code: ResultCode;
  result: string;
  authcode: string;
  auth_amount?: string;
  invoice?: string;
  creditcard?: { number: string; category_code?: string };
  avs?: { result_code: string; result: string };
  cvc?: { result_code: string; result: string };
  /** `batchrefnum` is a number in sale answers and a string in lookups on the wire; kept as a string. */
  batch?: { type: 'batch'; key: string; sequence: string; batchrefnum?: string };
  /** Declines and transaction errors: text and code, kept as a string ("10127"; the wire sends 20019 as a number). */
  error?: string;
  error_code?: string;
  /** Text such as "Credit Card Sale" (the capture's) or a check's "Check Sale": what the gateway took the payment for. */
  trantype?: string;
  /** `save_card`: the stored card, masked (the `key` is a token and never leaves the gateway client's callers). */
  savedcard?: { type: string; key: string; cardnumber: string; expiration: string };
}

export interface CardRefToken {
  type: 'token';
  cardref: string;
  /** `YYYY-MM-DD`, the last day the token is valid. */
  expires: string;
  ccnumlast4: string;
  cardtype: string;
  custkey: string;
  pmkey: string;
}

export interface ListEnvelope<T> {
  type: 'list';
  limit: number;
  offset: number;
  data: T[];
  total: number;
}

/** The customer fields tokengate reads and writes (gateway-facts.md, the wallet): text, '' when unset. */
export const CUSTOMER_FIELDS = [
  'customerid', 'company', 'first_name', 'last_name', 'email', 'phone', 'fax', 'street', 'street2', 'city', 'state', 'postalcode', 'country',
  'url', 'notes', 'description',
] as const;
export type CustomerField = (typeof CUSTOMER_FIELDS)[number];

/**
 * A customer as the gateway answers it (create, update, read, list items), parsed once (parse.ts): every field
 * of CUSTOMER_FIELDS as text ('' when unset; the spec's `firstname`/`lastname` read as the wire's names).
 */
export type Customer = {
  type: 'customer';
  /** The custkey: what every other call names the customer by. */
  key: string;
  /** The gateway's own number (a JSON number in the create answer, a string elsewhere): kept as a string. */
  custid: string;
  /**
   * The customer's payment methods, when the answer lists them (`GET /customers/{c}`). Absent when the gateway
   * sent none or null: the create and update answers carry `null` whatever the customer holds, list items none.
   */
  payment_methods?: PaymentMethod[];
} & Record<CustomerField, string>;

/**
 * A customer to create: `company`, or `first_name` and `last_name` (the gateway refuses neither, 40015 at the
 * sandbox); the rest optional. An update sends only the fields to change: '' clears one.
 */
export type CustomerFields = Partial<Record<CustomerField, string>>;

/**
 * A stored payment method, masked, parsed once (parse.ts). `sortord` is a number whichever form the gateway
 * sent (a number in add answers, a string on reads). `default` is derived here and nowhere else: the gateway
 * never names the default, it is the method with `sortord` 0 (gateway-facts.md, the wallet). A customer may
 * have none at 0 (the real sandbox's captured methods and the fixtures start at 1): then no method is the
 * gateway's default, and choosing one for callers is the wallet's rule, not the gateway's.
 */
export interface PaymentMethod {
  type: 'customerpaymentmethod';
  key: string;
  /** `cc` for cards (a method without one is read as a card); `check` and others pass through. */
  pay_type: string;
  method_name: string;
  cardholder: string;
  /** The card's expiration, MMYY ('' for methods without one; the reference's `YYYY-MM-DD` form is read as MMYY). */
  expires: string;
  /** The brand as the gateway names it ("Visa"). */
  card_type: string;
  ccnum4last: string;
  avs_street: string;
  avs_postalcode: string;
  /** Absent when the answer carries none (the reference's single-method examples). */
  sortord?: number;
  /** `sortord === 0`. */
  default: boolean;
  /** "YYYY-MM-DD hh:mm:ss". */
  added: string;
  updated: string;
  /** A bank method (`pay_type` check): the account's and routing number's last four, and its type when given. */
  account_last4?: string;
  routing_last4?: string;
  account_type?: 'checking' | 'savings';
  /**
   * A bank's notice of change about this account (`ach.note_added`): its code and description only (the note's
   * corrected account or routing number is never kept), and when it was heard.
   */
  bank_notice?: { code: string; description: string; received: string };
}

/**
 * A payment method to add. Only a card the gateway already holds can be stored: that of an approved
 * transaction (`pay_type: transaction`, e.g. a Pay.js `payment_key` sale), never card data, which never passes
 * through tokengate. `default: true` makes it the customer's default (sortord 0; the former default moves to 1).
 */
export type NewPaymentMethod = {
  method_name?: string;
  default?: boolean;
  sortord?: number;
} & (
  | { pay_type: 'transaction'; transaction_key: string }
  /** A bank account from a Pay.js check form's key (SANDBOX_CHECK_PAYMENT_KEY `refused`: src/sandbox/README.md, "ACH"). */
  | { pay_type: 'check'; payment_key: string }
);

/**
 * A bank payment (gateway-facts.md, ACH): `check:sale` with a check form's `payment_key`, or `customer:sale` of a
 * saved bank method (`paymethod_key`). `sec` is the SEC code sent as `check.format`: `WEB` for a shopper's payment
 * on the web, `PPD` for a recurring debit. Always attached to the customer (its transaction list finds it).
 */
export type CheckSaleRequest = {
  amount: string;
  invoice?: string;
  custkey: string;
  sec: 'WEB' | 'PPD';
} & ({ payment_key: string } | { paymethod_key: string });

/** What `PUT /customers/{c}/payment_methods/{pm}` can change, and nothing else (gateway-facts.md). '' clears a text. */
export interface PaymentMethodChanges {
  method_name?: string;
  /** MMYY: the holder's card was renewed. */
  expires?: string;
  avs_street?: string;
  avs_postalcode?: string;
}

/** What tokengate asks the gateway to charge: always a card reference, never card data. */
export interface SaleRequest {
  cardref: string;
  amount: string;
  amount_detail?: { tax?: string; tip?: string };
  invoice?: string;
  /** Attaches the transaction to this gateway customer (listed by `GET /customers/{custkey}/transactions`). */
  custkey?: string;
  /**
   * A charge the shopper does not start (a renewal): sent as `traits.is_recurring` (gateway-facts.md, "Recurring
   * and other charges the shopper does not start"), the card networks' stored-credential indicator.
   */
  recurring?: boolean;
}

/**
 * A card collected in the browser by Pay.js (gateway-facts.md): the single-use `payment_key` stands in for the
 * card, in a sale or an authorization. With `custkey` and `save_customer_paymethod` the card is also stored as a
 * payment method of that customer (the answer does not name the new method: read the customer's methods, or
 * store it from the transaction instead, `addPaymentMethods` with `pay_type: transaction`); `save_card`
 * answers `savedcard` (masked number and expiration) so the new method can be recognised.
 */
export type PaymentKeyRequest = {
  payment_key: string;
  amount: string;
  amount_detail?: { tax?: string; tip?: string };
  invoice?: string;
  save_card?: boolean;
  cardholder?: string;
  method_name?: string;
  avs_street?: string;
  avs_postalcode?: string;
} & ({ custkey: string; save_customer_paymethod: true } | { custkey?: string; save_customer_paymethod?: false });

/** A sale or an authorization: a stored card's token, or a card just collected by Pay.js. */
export type ChargeRequest = SaleRequest | PaymentKeyRequest;

/** `authonly`: the same inputs as a sale (or a payment key); the funds are held until captured or voided. */
export type AuthorizeRequest = ChargeRequest;

/**
 * Follow-ups name the original by its `key` (gateway-facts.md prefers it to `refnum`). `ignore_duplicate`
 * asks the gateway not to fold this call into an identical one made shortly before (two equal partial refunds
 * are two refunds); tokengate's own idempotency already keeps a retry from reaching the gateway twice.
 */
interface FollowUp {
  trankey: string;
  ignore_duplicate?: boolean;
}

/** `cc:capture`: moves an open authorization into the current batch; `amount` may be lower than authorized. */
export interface CaptureRequest extends FollowUp {
  amount?: string;
}

/** `void`, or `cc:void:release` when `release` is true (the held funds are released at once). */
export interface VoidRequest extends FollowUp {
  release?: boolean;
}

/**
 * Money back, by the gateway's three commands (gateway-facts.md, The payment lifecycle):
 *   - 'refund' (default): a settled sale only, full without `amount`, partial with it; a new transaction;
 *   - 'creditvoid': voids when unsettled (answer carries the original `key`), otherwise refunds (a new `key`);
 *   - 'refund:adjust': unsettled, lowers the authorization by `amount`; settled, issues a credit. Needs `amount`.
 */
export type RefundRequest =
  | (FollowUp & { command?: 'refund'; amount?: string; custom_fields?: CustomFields })
  | (FollowUp & { command: 'creditvoid'; amount?: string })
  | (FollowUp & { command: 'refund:adjust'; amount: string; custom_fields?: CustomFields });

/**
 * The reference's `custom_fields` ("1".."20" → text): documented on `refund` and `refund:adjust` requests (not on
 * `creditvoid`) and on a transaction's look-up and list items; tokengate tags its refunds in one (issue 42).
 */
export type CustomFields = Record<string, string>;

export type RefundCommand = NonNullable<RefundRequest['command']>;

/** Transaction status (gateway-facts.md, Looking transactions up). */
export type StatusCode = 'N' | 'P' | 'B' | 'F' | 'S' | 'E' | 'V' | 'R' | 'T';

/** A refund issued against a transaction, as listed in its `refunds`. */
export interface RefundSummary {
  key: string;
  refnum: string;
  /** Money returned, "12.34". */
  amount: string;
  created: string;
  status_code: StatusCode;
  /** The refund's own result, when the lookup lists it (neither the captured lookup nor the emulator does). */
  result_code?: ResultCode;
  result?: string;
}

/**
 * A transaction as `GET /transactions/{key}` and the transaction lists describe it. `amount` is what was asked
 * for; `auth_amount` what is held or captured now (lower after a partial approval, a partial capture or an
 * adjust). `refunds` lists the refunds issued against it (empty when none, and on refunds themselves).
 */
export interface TransactionDetail {
  type: 'transaction';
  key: string;
  refnum: string;
  /** "YYYY-MM-DD hh:mm:ss". */
  created: string;
  /** S sale, A auth only, C credit/refund, … */
  trantype_code: string;
  trantype: string;
  status_code: StatusCode;
  status: string;
  result_code?: ResultCode;
  result?: string;
  authcode?: string;
  amount: string;
  auth_amount?: string;
  amount_detail?: Record<string, string>;
  invoice?: string;
  custkey?: string;
  creditcard?: { number: string; category_code?: string };
  /** The verification results of the sale (the captured lookup carries them, as a sale's answer does). */
  avs?: { result_code: string; result: string };
  cvc?: { result_code: string; result: string };
  batch?: Transaction['batch'];
  refunds: RefundSummary[];
  /**
   * The look-up carried a `refunds` list at all: neither the reference nor the real capture shows one
   * (gateway-facts.md, Looking transactions up), so without it `refunds` is empty and says nothing.
   */
  refundsListed?: boolean;
  /** On a refund: the transaction it returned money for. */
  original?: { key: string; refnum: string };
  /** Text custom fields, when the gateway kept some (a refund tokengate tagged: src/reconcile/refund-tag.ts). */
  custom_fields?: CustomFields;
  error?: string;
  error_code?: string;
}

export type BatchStatus = 'open' | 'closing' | 'closed';

/** A settlement batch (`GET /batches…`): amounts as "12.34", counts as integers. */
export interface Batch {
  type: 'batch';
  key: string;
  batchrefnum: string;
  sequence: string;
  status: BatchStatus;
  opened: string;
  closed?: string;
  sales_count: number;
  sales_amount: string;
  voids_count: number;
  voids_amount: string;
  refunds_count: number;
  refunds_amount: string;
}

/** Parsed `X-Rate-Limit: <used> of <per_minute>/min; <used> of <per_day>/day` (spec §8 rule 2). */
export interface RateLimitInfo {
  minuteUsed: number;
  minuteLimit: number;
  dayUsed: number;
  dayLimit: number;
}

/** Every successful client call returns the parsed value plus what the answer said about the budget. */
export interface GatewayResult<T> {
  value: T;
  rateLimit: RateLimitInfo | undefined;
  /** The host that answered (after any failover). */
  host: string;
  status: number;
}
