import { NotFoundError, type Caller } from '../access';
import type { GatewayClient } from '../gateway/client';
import { GatewayNotFoundError } from '../gateway/errors';
import type { Customer, PaymentMethod } from '../gateway/types';
import { StoreUnavailableError } from '../redis/errors';
import type { CallClass } from '../limiter';
import type { Logger } from '../observability/logger';
import type { Budget } from '../tokens/token-service';
import { createBackgroundRefresh } from '../views/background-refresh';
import { freshnessOf, REFRESH_CLASS, type Freshness } from '../views/freshness';
import { customerRecordOf } from './objects';
import type { CustomerRecord, WalletSnapshot, WalletStore } from './types';

/** A customer as tokengate's view answers it: its fields, its methods, the chosen default, how fresh. */
export interface WalletRead {
  customer: CustomerRecord;
  methods: PaymentMethod[];
  chosenDefault: string | undefined;
  freshness: Freshness;
}

export interface WalletViewSettings {
  /** VIEW_WALLET_FRESH_MS: how long a customer's view answers as fresh after it last matched the gateway. */
  freshMs: number;
  /** How long one replica holds a customer's background refresh before another may try. */
  refreshLockMs?: number;
}

export interface WalletViewDeps {
  gateway: Pick<GatewayClient, 'getCustomer' | 'listPaymentMethods'>;
  budget: Budget;
  store: WalletStore;
  logger: Logger;
  settings: WalletViewSettings;
  now?: () => number;
}

export interface WalletReadOptions {
  /** The caller asked for the gateway's word. */
  fresh?: boolean;
  /**
   * The budget class a gateway read is charged in (default `read`). A read that a charge needs travels in the
   * charge's class: a renewal's wallet read in `renewal`, so the paced read class's day share (spent by
   * shoppers' reads) never refuses a renewal the budget has a slot for (docs/subscriptions.md).
   */
  cls?: CallClass;
}

export interface WalletView {
  /**
   * The customer and its payment methods (guarantee 9): from the view, at once, however old (a view past its
   * bound is refreshed behind the answer in spare budget); a miss or `fresh` (the caller asked for the gateway's
   * word) reads the gateway once in the caller's share and keeps it. A removed customer, or one the gateway does
   * not know, is NotFoundError. Access is the caller's to check first.
   */
  read(caller: Caller, custkey: string, options?: WalletReadOptions): Promise<WalletRead>;
  /**
   * Like read(), for a write naming one method: a method the view does not hold (added at the gateway since it
   * was loaded) is looked for once more in the gateway's word before it is taken as unknown.
   */
  withMethod(caller: Caller, custkey: string, pmkey: string, options?: Pick<WalletReadOptions, 'cls'>): Promise<WalletRead>;
}

const PAGE = 100;

export function createWalletView(deps: WalletViewDeps): WalletView {
  const { gateway, budget, store, logger, settings } = deps;
  const now = deps.now ?? Date.now;
  const refresher = createBackgroundRefresh(logger, 'wallet');

  /**
   * The gateway's word: the customer with all its methods in one read (`GET /customers/{c}` lists them); when
   * an answer leaves them out, the method list is paged through instead (100 a page).
   */
  async function fetch(caller: Caller, custkey: string, cls: CallClass, maxWaitMs?: number): Promise<{ customer: CustomerRecord; methods: PaymentMethod[] }> {
    const opts = { caller: caller.sub, ...(maxWaitMs !== undefined ? { maxWaitMs } : {}) };
    let customer: Customer;
    try {
      customer = (await budget.run(cls, () => gateway.getCustomer(custkey), opts)).value;
    } catch (err) {
      if (err instanceof GatewayNotFoundError) throw new NotFoundError();
      throw err;
    }
    let methods = customer.payment_methods;
    if (methods === undefined) {
      methods = [];
      for (let offset = 0; ; offset += PAGE) {
        const page = (await budget.run(cls, () => gateway.listPaymentMethods(custkey, { limit: PAGE, offset }), opts)).value;
        methods.push(...page.data);
        if (page.data.length < PAGE || methods.length >= page.total) break;
      }
    }
    return { customer: customerRecordOf(customer), methods };
  }

  /** Reads the gateway and keeps its word over `version`; the view as it then stands, or undefined if a write got in. */
  async function load(caller: Caller, custkey: string, version: number, cls: CallClass): Promise<WalletSnapshot | { bypass: true; customer: CustomerRecord; methods: PaymentMethod[] }> {
    const fetched = await fetch(caller, custkey, cls);
    const result = await store.refresh(custkey, version, fetched.customer, fetched.methods);
    if (result === 'deleted') throw new NotFoundError();
    const after = await store.read(custkey);
    if (after.deleted) throw new NotFoundError();
    if (after.seenMs !== undefined && after.customer) return after;
    // A write landed on a view nothing had loaded yet, between our version and our answer: the gateway's word
    // is answered, not kept, without the methods removed meanwhile.
    const removed = await Promise.all(fetched.methods.map((m) => store.isRemoved(custkey, m.key)));
    return { bypass: true, customer: fetched.customer, methods: fetched.methods.filter((_m, i) => !removed[i]) };
  }

  function refreshLater(caller: Caller, custkey: string, version: number): void {
    refresher.start(custkey, async () => {
      if (!(await store.claimRefresh(custkey, settings.refreshLockMs ?? 30_000))) return;
      const fetched = await fetch(caller, custkey, REFRESH_CLASS, 0);
      await store.refresh(custkey, version, fetched.customer, fetched.methods);
    });
  }

  const view: WalletView = {
    async withMethod(caller, custkey, pmkey, options = {}) {
      const got = await view.read(caller, custkey, options);
      const fromView = got.freshness.kind === 'hit' || got.freshness.kind === 'stale';
      return fromView && !got.methods.some((m) => m.key === pmkey) ? view.read(caller, custkey, { ...options, fresh: true }) : got;
    },

    async read(caller, custkey, options = {}) {
      const cls = options.cls ?? 'read';
      let snapshot: WalletSnapshot;
      try {
        snapshot = await store.read(custkey);
      } catch (err) {
        // Redis down: the gateway's word, nothing kept (reads keep working, guarantee 5).
        if (!(err instanceof StoreUnavailableError)) throw err;
        const fetched = await fetch(caller, custkey, cls);
        return { ...fetched, chosenDefault: undefined, freshness: { kind: 'bypass' } };
      }
      if (snapshot.deleted) throw new NotFoundError();
      if (options.fresh || snapshot.seenMs === undefined || !snapshot.customer) {
        const loaded = await load(caller, custkey, snapshot.version, cls);
        if ('bypass' in loaded) return { customer: loaded.customer, methods: loaded.methods, chosenDefault: snapshot.chosenDefault, freshness: { kind: 'bypass' } };
        return { customer: loaded.customer as CustomerRecord, methods: loaded.methods, chosenDefault: loaded.chosenDefault, freshness: { kind: options.fresh ? 'forced' : 'miss' } };
      }
      const freshness = freshnessOf(snapshot.seenMs, settings.freshMs, now());
      if (freshness.kind === 'stale') refreshLater(caller, custkey, snapshot.version);
      return { customer: snapshot.customer, methods: snapshot.methods, chosenDefault: snapshot.chosenDefault, freshness };
    },
  };
  return view;
}
