import { assertAccess, type Caller } from '../access';
import type { EventDraft } from '../events/types';
import type { GatewayClient } from '../gateway/client';
import { GatewayBadRequestError } from '../gateway/errors';
import type { Customer, CustomerFields, GatewayResult } from '../gateway/types';
import type { StoredResponse } from '../idempotency';
import type { Logger } from '../observability/logger';
import type { Budget } from '../tokens/token-service';
import type { Freshness } from '../views/freshness';
import { WriteInProgressError, WriteNotSentError, sentness, type WriteProtocol, type WriteResult } from '../writes';
import { CustomerExistsError, WalletWriteRefusedError } from './errors';
import { customerObject, customerRecordOf, type CustomerObject } from './objects';
import type { WalletStore } from './types';
import type { WalletView } from './wallet-view';

/**
 * Customers (issue 26, item 1): created by internal services through the one write protocol, one per merchant
 * `customerid` among those created through tokengate (a claim in Redis: SET NX of the customerid's hash → the
 * attempt, then → the custkey once created; a create under another key answers 409 `customer_exists` naming the
 * first; two creates racing on two replicas make one gateway customer). Read from the view; changed with the
 * gateway's PUT and the view updated in the same step.
 */
export interface CreateCustomerRequest {
  caller: Caller;
  idempotencyKey: string;
  fingerprint: string;
  /** `customerid` required; the gateway needs `company`, or `first_name` and `last_name` (the edge checks it). */
  fields: CustomerFields & { customerid: string };
}

export interface WalletCustomers {
  create(request: CreateCustomerRequest, render: (customer: CustomerObject) => StoredResponse, log?: Logger): Promise<WriteResult>;
  get(caller: Caller, custkey: string, options?: { fresh?: boolean }): Promise<{ customer: CustomerObject; freshness: Freshness }>;
  /** The fields given change ('' clears one); `customerid` never does. */
  update(caller: Caller, custkey: string, fields: Omit<CustomerFields, 'customerid'>): Promise<CustomerObject>;
  /**
   * The reconciler's look for a create whose outcome is unknown (`attempt`: its write reference): the newest
   * gateway customer with this `customerid` (the list paged through with `read`), its claim settled and its view
   * kept; undefined when there is none.
   */
  findCreated(customerid: string, attempt: string, read: ListRead): Promise<CustomerObject | undefined>;
  /** A create proven never made: its customerid claim is freed. */
  releaseClaim(customerid: string, attempt: string): Promise<void>;
}

/** One gateway read at the reconciler's priority. */
export type ListRead = <T>(call: () => Promise<GatewayResult<T>>) => Promise<T>;

export interface CustomerSettings {
  /** The write's lease: its wait for a slot and the gateway's create. */
  leaseMs: number;
  /** How long a create waits for another create of the same customerid to say which customer it made. */
  claimWaitMs?: number;
}

export interface CustomerDeps {
  gateway: Pick<GatewayClient, 'createCustomer' | 'updateCustomer' | 'listCustomers'>;
  budget: Budget;
  store: WalletStore;
  view: WalletView;
  writes: WriteProtocol;
  logger: Logger;
  settings: CustomerSettings;
}

/** A gateway call of a wallet write: a 4xx refusal proved nothing happened (not sent, a neutral 400). */
export async function walletWrite<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof GatewayBadRequestError) throw new WriteNotSentError(new WalletWriteRefusedError(err));
    throw err;
  }
}

export function createWalletCustomers(deps: CustomerDeps): WalletCustomers {
  const { gateway, budget, store, view, writes, logger, settings } = deps;
  const claimWaitMs = settings.claimWaitMs ?? 5_000;

  /** Another create of this customerid is running: wait for it to name its customer (or give up: 409 in progress). */
  async function claim(customerid: string, attempt: string): Promise<void> {
    const until = Date.now() + claimWaitMs;
    for (;;) {
      const held = await store.claimCustomerId(customerid, attempt);
      if (held.kind === 'claimed') return;
      if (held.kind === 'exists') throw new WriteNotSentError(new CustomerExistsError(held.custkey));
      if (Date.now() > until) throw new WriteNotSentError(new WriteInProgressError(Math.ceil(claimWaitMs / 1000)));
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  return {
    async create({ caller, idempotencyKey, fingerprint, fields }, render, log) {
      const { customerid } = fields;
      const spec = { scope: caller.sub, key: idempotencyKey, fingerprint, context: { op: 'customer_create' as const, customer: customerid }, leaseMs: settings.leaseMs };
      return writes.execute(spec, async (attempt) => {
        await claim(customerid, attempt.reference);
        let created;
        try {
          created = (await walletWrite(() => budget.run('capture', () => gateway.createCustomer(fields)))).value;
        } catch (err) {
          // Proven not sent (refused, the budget, the gateway unreachable): the customerid is free again.
          if (sentness(err) === 'no') await store.releaseCustomerId(customerid, { attempt: attempt.reference }).catch((e: unknown) => logger.warn('could not free a customerid claim', { err: e }));
          throw err;
        }
        const record = customerRecordOf(created);
        try {
          // Before the answer: a later create under another key must find this customer, never make a second.
          await store.settleCustomerId(customerid, attempt.reference, record.key);
        } catch (err) {
          // Created and not recorded: the reconciler finds it by customerid (an Error that is not "not sent").
          throw new Error('the customer was created and its customerid claim could not be settled', { cause: err });
        }
        const customer = customerObject(record, [], undefined);
        const event: EventDraft = { type: 'customer.created', change: `customer.created:${record.key}`, data: customer };
        return { response: render(customer), alongside: () => store.putCustomer(record.key, record, true), events: [event] };
      }, log);
    },

    async get(caller, custkey, options = {}) {
      assertAccess(caller, custkey);
      const read = await view.read(caller, custkey, options);
      return { customer: customerObject(read.customer, read.methods, read.chosenDefault), freshness: read.freshness };
    },

    async update(caller, custkey, fields) {
      assertAccess(caller, custkey);
      // A removed customer (or one the gateway does not know) is a 404 before anything is sent.
      const read = await view.read(caller, custkey);
      let updated;
      try {
        updated = (await walletWrite(() => budget.run('capture', () => gateway.updateCustomer(custkey, fields)))).value;
      } catch (err) {
        // Maybe applied at the gateway: the view reads the gateway's word when next asked.
        if (sentness(err) === 'maybe') await store.forget(custkey).catch((e: unknown) => logger.warn('could not distrust a customer view', { err: e }));
        throw err;
      }
      const record = customerRecordOf(updated);
      await store.putCustomer(custkey, record, false);
      return customerObject(record, read.methods, read.chosenDefault);
    },

    async findCreated(customerid, attempt, read) {
      let newest: Customer | undefined;
      for (let offset = 0; ; offset += 100) {
        const page = await read(() => gateway.listCustomers({ limit: 100, offset }));
        for (const c of page.data) if (c.customerid === customerid && (!newest || Number(c.custid) > Number(newest.custid))) newest = c;
        if (page.data.length < 100 || offset + page.data.length >= page.total) break;
      }
      if (!newest) return undefined;
      const record = customerRecordOf(newest);
      await store.settleCustomerId(customerid, attempt, record.key);
      await store.putCustomer(record.key, record, false);
      return customerObject(record, [], undefined);
    },

    releaseClaim: (customerid, attempt) => store.releaseCustomerId(customerid, { attempt }),
  };
}
