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

export interface Customer {
  type: 'customer';
  key: string;
  [field: string]: unknown;
}

export interface PaymentMethod {
  type: 'customerpaymentmethod';
  key: string;
  [field: string]: unknown;
}

/** What tokengate asks the gateway to charge: always a card reference, never card data. */
export interface SaleRequest {
  cardref: string;
  amount: string;
  amount_detail?: { tax?: string; tip?: string };
  invoice?: string;
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
