import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import type { GatewayConfig } from '../config/types';
import type { Logger } from '../observability/logger';
import { GatewayError, GatewayRefusedError, GatewayServerError, GatewayUnavailableError, type FollowUpOperation } from './errors';
import { parseBatch, parseCardRefToken, parseCustomer, parseList, parsePaymentMethod, parsePublicKey, parseTransaction, parseTransactionDetail, type OnRedacted } from './parse';
import { parseRateLimitHeader } from './rate-limit-header';
import { createSigner, randomSeed } from './signer';
import { exchange, ExchangeAborted } from './exchange';
import { classifyTransportError, interpret } from './transport';
import type {
  AuthorizeRequest, Batch, CaptureRequest, CardRefToken, ChargeRequest, CheckSaleRequest, Customer, GatewayResult, ListEnvelope, PaymentMethod, RefundRequest,
  Transaction, TransactionDetail, VoidRequest,
} from './types';
import { walletCalls, type WalletCalls, type WalletOperation } from './wallet-calls';

/**
 * Metric label and budget hint of each call. Writes: sale, authorize, capture, void, refund and the wallet's
 * (customer_create/update/delete, payment_method_add/update/delete); the rest are reads.
 */
export type Operation =
  | 'sale' | 'authorize' | 'capture' | 'void' | 'refund'
  | 'cardref' | 'customers' | 'payment_methods' | 'publickey' | 'transaction' | 'customer_transactions' | 'batches' | 'batch_transactions'
  | WalletOperation;

export interface CallEvent {
  op: Operation;
  host: string;
  attempt: number;
  /** 'ok' or the error code. */
  outcome: string;
  status?: number;
  durationMs: number;
}

/** The gateway section of the config the client uses (config/types.ts documents each field). */
type ClientSettings = Pick<GatewayConfig, 'apiKey' | 'apiPin' | 'timeoutMs' | 'connectTimeoutMs' | 'maxResponseBytes' | 'cardRefField'>;

export interface GatewayClientOptions extends ClientSettings {
  /** The configured base URL, or the embedded sandbox's. */
  baseUrl: string;
  failoverHosts?: readonly string[];
  logger: Logger;
  seed?: () => string;
  /**
   * Called before a GET is re-sent after an answer or a timeout (the gateway may have counted the first try),
   * so the retry goes through the upstream budget. If it rejects, the original error is thrown instead.
   */
  beforeRetry?: (op: Operation) => Promise<void>;
  onCall?: (event: CallEvent) => void;
}

export interface ListParams {
  limit: number;
  offset: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface GatewayClient extends WalletCalls {
  /** `v2` or the endpoint key in the base URL's path: the unit the gateway's limits are counted by. */
  readonly endpointKey: string;
  /**
   * A decline (D) or a gateway error (E) is a Transaction, not an exception (the sale path branches on it).
   * A stored card's token, or a Pay.js `payment_key` (optionally saving the card to `custkey`).
   */
  sale(request: ChargeRequest, options?: CallOptions): Promise<GatewayResult<Transaction>>;
  /** A bank payment (`check:sale` or `customer:sale`): answers like a sale (D and E included). */
  checkSale(request: CheckSaleRequest, options?: CallOptions): Promise<GatewayResult<Transaction>>;
  /** `authonly`: answers like a sale (D and E included); capture, void or let it lapse afterwards. */
  authorize(request: AuthorizeRequest, options?: CallOptions): Promise<GatewayResult<Transaction>>;
  /**
   * Follow-ups: an answer with result_code E throws GatewayRefusedError (see its `reason`). Never re-sent once
   * they may have reached the gateway, like a sale. The answer is the gateway's: `auth_amount` after a capture
   * or adjust; for creditvoid, `key` equal to the original's when it voided, a new key when it refunded.
   */
  capture(request: CaptureRequest, options?: CallOptions): Promise<GatewayResult<Transaction>>;
  void(request: VoidRequest, options?: CallOptions): Promise<GatewayResult<Transaction>>;
  refund(request: RefundRequest, options?: CallOptions): Promise<GatewayResult<Transaction>>;
  /** Reads: an unknown key throws GatewayNotFoundError. */
  getTransaction(trankey: string, options?: CallOptions): Promise<GatewayResult<TransactionDetail>>;
  /** Newest first. */
  listCustomerTransactions(custkey: string, params: ListParams, options?: CallOptions): Promise<GatewayResult<ListEnvelope<TransactionDetail>>>;
  listBatches(params: ListParams, options?: CallOptions): Promise<GatewayResult<ListEnvelope<Batch>>>;
  getBatch(batchKey: string | 'current', options?: CallOptions): Promise<GatewayResult<Batch>>;
  listBatchTransactions(batchKey: string | 'current', params: ListParams, options?: CallOptions): Promise<GatewayResult<ListEnvelope<TransactionDetail>>>;
  getCardRef(custkey: string, pmkey: string, options?: CallOptions): Promise<GatewayResult<CardRefToken>>;
  listCustomers(params: ListParams, options?: CallOptions): Promise<GatewayResult<ListEnvelope<Customer>>>;
  listPaymentMethods(custkey: string, params: ListParams, options?: CallOptions): Promise<GatewayResult<ListEnvelope<PaymentMethod>>>;
  /** The merchant's public key for Pay.js (`GET /publickey`). */
  getPublicKey(options?: CallOptions): Promise<GatewayResult<string>>;
  close(): void;
}

export function endpointKeyOf(baseUrl: string): string {
  const m = /\/api\/([^/]+)\/?$/.exec(new URL(baseUrl).pathname);
  if (!m?.[1]) throw new Error('gateway base URL must end in /api/<v2 or endpoint key>/');
  return m[1];
}

/** The base URL with its host swapped for each failover host; scheme and path are kept (gateway-api-v2.md §1). */
export function hostBases(baseUrl: string, failoverHosts: readonly string[]): string[] {
  const primary = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  const bases = [primary.toString()];
  for (const host of failoverHosts) {
    const u = new URL(primary.toString());
    u.host = host;
    if (!bases.includes(u.toString())) bases.push(u.toString());
  }
  return bases;
}

export interface Attempt {
  op: Operation;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const endpointKey = endpointKeyOf(options.baseUrl);
  const bases = hostBases(options.baseUrl, options.failoverHosts ?? []);
  const sign = createSigner(options.apiKey, options.apiPin, options.seed ?? randomSeed);
  // undici (Node's own HTTP client engine): keep-alive pool per origin, a real connect timeout (so "could not
  // connect", safe to fail over, is told apart from "no answer after sending"), a response size cap, no
  // redirects, no automatic re-sends, and no proxy from the environment. One request per connection at a time
  // (pipelining 1): a sale must never queue behind another on a socket that may die.
  const dispatcher = new Agent({
    connections: 64,
    pipelining: 1,
    connect: { timeout: options.connectTimeoutMs },
    keepAliveTimeout: 4_000,
    maxResponseSize: options.maxResponseBytes,
    // Backstops only: the deadline below bounds the whole exchange.
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const log = options.logger;

  // Each base's origin, path and host, once: a plain path (what every call but a list sends) is joined to the
  // base's path as text; anything else goes through URL resolution as before.
  const targets = new Map(bases.map((base) => {
    const u = new URL(base);
    return [base, { origin: u.origin, pathname: u.pathname, host: u.host }] as const;
  }));
  const PLAIN_PATH = /^[A-Za-z0-9_~-][A-Za-z0-9_~%/-]*$/;

  function target(a: Attempt, base: string): { origin: string; path: string; host: string } {
    const t = targets.get(base) as { origin: string; pathname: string; host: string };
    if (a.query === undefined && PLAIN_PATH.test(a.path)) return { origin: t.origin, path: t.pathname + a.path, host: t.host };
    const url = new URL(a.path, base);
    for (const [k, v] of Object.entries(a.query ?? {})) url.searchParams.set(k, v);
    return { origin: url.origin, path: url.pathname + url.search, host: url.host };
  }

  async function once(a: Attempt, base: string, attempt: number, signal?: AbortSignal) {
    const { origin, path, host } = target(a, base);
    const started = performance.now();
    const emit = (outcome: string, status?: number) =>
      options.onCall?.({ op: a.op, host, attempt, outcome, status, durationMs: performance.now() - started });
    try {
      // A hard deadline over the whole exchange, answer body included (exchange.ts).
      const res = await exchange(dispatcher, {
        origin,
        path,
        method: a.method,
        body: a.body === undefined ? undefined : JSON.stringify(a.body),
        headers: { authorization: sign(), 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'tokengate/0.1' },
      }, options.timeoutMs, signal);
      const header = res.headers['x-rate-limit'];
      const rateLimit = parseRateLimitHeader(Array.isArray(header) ? header[0] : header);
      // Emitted once the answer is read for what it says (a follow-up's result E is 'refused'), by `call`.
      const done = (refused: boolean) => emit(refused ? 'refused' : res.status < 400 ? 'ok' : `http_${res.status}`, res.status);
      return { status: res.status, text: res.text, rateLimit, host, done };
    } catch (err) {
      const error = classifyTransportError(err, host, { timedOut: err instanceof ExchangeAborted, abandoned: signal?.aborted === true });
      emit(error.code);
      throw error;
    }
  }

  /**
   * One logical call: tries each host in turn while the failure proves nothing was sent (any method); a GET
   * that may have reached the gateway (timeout, reset, 5xx, unreadable) is re-sent once, on the next host.
   * A write (POST, PUT, DELETE: a sale, a follow-up, the wallet's) is never re-sent after it may have reached
   * the gateway (contract, guarantee 2).
   */
  async function call<T>(a: Attempt, parse: (body: unknown) => T, signal?: AbortSignal): Promise<GatewayResult<T>> {
    let resent = false;
    for (let i = 0; ; i++) {
      try {
        const answer = await once(a, bases[i % bases.length] as string, i + 1, signal);
        try {
          const result = interpret(answer, parse);
          answer.done(false);
          return result;
        } catch (err) {
          answer.done(err instanceof GatewayRefusedError);
          throw err;
        }
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err;
        log.debug('gateway call failed', { op: a.op, host: err.host, code: err.code, status: err.status, attempt: i + 1 });
        if (signal?.aborted) throw err;
        if (err instanceof GatewayUnavailableError) {
          if (i + 1 < bases.length) continue;
          throw err;
        }
        const retryable = a.method === 'GET' && !resent && (err.outcome === 'unknown' || err instanceof GatewayServerError);
        if (!retryable) throw err;
        resent = true;
        try {
          await options.beforeRetry?.(a.op);
        } catch {
          throw err;
        }
        await sleep(50 + Math.random() * 100);
      }
    }
  }

  /** A wallet answer's card-shaped number, redacted by the parser: the field is named, never the value. */
  const redactedIn = (op: Operation): OnRedacted => (answer, field) =>
    log.warn('gateway answer: a card-shaped number redacted, the answer kept', { op, answer, field });

  function charge(op: 'sale' | 'authorize', command: string, request: AuthorizeRequest, signal?: AbortSignal) {
    const body: Record<string, unknown> = { command, amount: request.amount };
    if (request.invoice !== undefined) body.invoice = request.invoice;
    if (request.custkey !== undefined) body.custkey = request.custkey;
    if (request.amount_detail) body.amount_detail = request.amount_detail;
    if ('payment_key' in request) {
      // gateway-facts.md, Pay.js: the payment key in place of creditcard; with save_customer_paymethod the card
      // is also stored on `custkey` (the answer does not name the new method).
      const { payment_key, save_customer_paymethod, save_card, cardholder, method_name, avs_street, avs_postalcode } = request;
      Object.assign(body, { payment_key, ...(save_customer_paymethod ? { save_customer_paymethod } : {}), ...(save_card ? { save_card } : {}) });
      for (const [k, v] of Object.entries({ cardholder, method_name, avs_street, avs_postalcode })) if (v !== undefined) body[k] = v;
      return call({ op, method: 'POST', path: 'transactions', body }, parseTransaction, signal);
    }
    if (request.recurring) body.traits = { is_recurring: true };
    // gateway-facts.md: the spec's UMCardRef, or the REST v2 form with the token as the number and expiration 0000.
    if (options.cardRefField === 'UMCardRef') body.UMCardRef = request.cardref;
    else body.creditcard = { number: request.cardref, expiration: '0000' };
    return call({ op, method: 'POST', path: 'transactions', body }, parseTransaction, signal);
  }

  /** A follow-up is a POST like a sale (so never re-sent after it may have been sent); E becomes a refusal. */
  function followUp(op: FollowUpOperation, body: Record<string, unknown>, signal?: AbortSignal) {
    return call({ op, method: 'POST', path: 'transactions', body }, (b) => refusedOrTransaction(op, parseTransaction(b)), signal);
  }

  function list<T>(op: Operation, path: string, params: ListParams, item: (value: unknown) => T, signal?: AbortSignal) {
    return call({ op, method: 'GET', path, query: listQuery(params) }, (b) => parseList(b, item), signal);
  }

  return {
    endpointKey,
    ...walletCalls(call, redactedIn),
    sale(request, callOptions) {
      return charge('sale', 'cc:sale', request, callOptions?.signal);
    },
    checkSale(request, callOptions) {
      const { sec, ...rest } = request;
      const command = 'paymethod_key' in rest ? 'customer:sale' : 'check:sale';
      // Only the SEC code rides in `check`: the account is behind the key or the saved method, never here.
      const body = { command, ...rest, check: { format: sec } };
      return call({ op: 'sale', method: 'POST', path: 'transactions', body }, parseTransaction, callOptions?.signal);
    },
    authorize(request, callOptions) {
      return charge('authorize', 'authonly', request, callOptions?.signal);
    },
    capture(request, callOptions) {
      const body = followUpBody('cc:capture', request);
      if (request.amount !== undefined) body.amount = request.amount;
      return followUp('capture', body, callOptions?.signal);
    },
    void(request, callOptions) {
      return followUp('void', followUpBody(request.release ? 'cc:void:release' : 'void', request), callOptions?.signal);
    },
    refund(request, callOptions) {
      const body = followUpBody(request.command ?? 'refund', request);
      if (request.amount !== undefined) body.amount = request.amount;
      if ('custom_fields' in request && request.custom_fields) body.custom_fields = request.custom_fields;
      return followUp('refund', body, callOptions?.signal);
    },
    getTransaction(trankey, callOptions) {
      return call({ op: 'transaction', method: 'GET', path: `transactions/${encodeURIComponent(trankey)}` }, parseTransactionDetail, callOptions?.signal);
    },
    listCustomerTransactions(custkey, params, callOptions) {
      return list('customer_transactions', `customers/${encodeURIComponent(custkey)}/transactions`, params, parseTransactionDetail, callOptions?.signal);
    },
    listBatches(params, callOptions) {
      return list('batches', 'batches', params, parseBatch, callOptions?.signal);
    },
    getBatch(batchKey, callOptions) {
      return call({ op: 'batches', method: 'GET', path: `batches/${encodeURIComponent(batchKey)}` }, parseBatch, callOptions?.signal);
    },
    listBatchTransactions(batchKey, params, callOptions) {
      return list('batch_transactions', `batches/${encodeURIComponent(batchKey)}/transactions`, params, parseTransactionDetail, callOptions?.signal);
    },
    getCardRef(custkey, pmkey, callOptions) {
      const path = `customers/${encodeURIComponent(custkey)}/payment_methods/${encodeURIComponent(pmkey)}/cardref`;
      return call({ op: 'cardref', method: 'GET', path }, parseCardRefToken, callOptions?.signal);
    },
    listCustomers(params, callOptions) {
      return call({ op: 'customers', method: 'GET', path: 'customers', query: listQuery(params) }, (b) => parseList(b, (c) => parseCustomer(c, redactedIn('customers'))), callOptions?.signal);
    },
    getPublicKey(callOptions) {
      return call({ op: 'publickey', method: 'GET', path: 'publickey' }, parsePublicKey, callOptions?.signal);
    },
    listPaymentMethods(custkey, params, callOptions) {
      const path = `customers/${encodeURIComponent(custkey)}/payment_methods`;
      return call({ op: 'payment_methods', method: 'GET', path, query: listQuery(params) }, (b) => parseList(b, (m) => parsePaymentMethod(m, redactedIn('payment_methods'))), callOptions?.signal);
    },
    close() {
      dispatcher.destroy().catch(() => undefined);
    },
  };
}

function followUpBody(command: string, request: { trankey: string; ignore_duplicate?: boolean }): Record<string, unknown> {
  const body: Record<string, unknown> = { command, trankey: request.trankey };
  if (request.ignore_duplicate) body.ignore_duplicate = true;
  return body;
}

/** Thrown from inside the parser so it leaves `call` as is (a GatewayError is never re-sent for a POST). */
function refusedOrTransaction(op: FollowUpOperation, tx: Transaction): Transaction {
  if (tx.result_code !== 'E') return tx;
  const raw = tx.error_code;
  const errorcode = raw !== undefined && /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
  throw new GatewayRefusedError(op, 'gateway refused the follow-up', { status: 200, errorcode });
}

function listQuery(p: ListParams): Record<string, string> {
  return { limit: String(p.limit), offset: String(p.offset) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
