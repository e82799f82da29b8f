import type { GatewayClient } from '../gateway/client';
import { GatewayNotFoundError } from '../gateway/errors';
import type { GatewayResult, ListEnvelope, TransactionDetail } from '../gateway/types';

/**
 * Finds a sale or authorization tokengate may have sent, by what it sent (issue 12): its invoice (always set,
 * derived from the key when the caller gave none), its amount and its customer (sales carry `custkey`).
 * gateway-facts.md: no search by invoice exists, so the customer's transaction list is paged, newest first,
 * only as far back as the attempt's start; the batch lists are the fallback when the customer's list is not
 * usable (the customer was deleted meanwhile).
 */
export interface SaleLookup {
  /** 'sale' (cc:sale) or 'authonly'. */
  command: 'sale' | 'authonly';
  customer: string;
  invoice: string;
  amount: string;
  /** When the attempt started (ms since the epoch). */
  startedMs: number;
  /** The attempt's write reference: a transaction whose record names it is this attempt's, never another key's. */
  writer?: string;
}

export type Read = <T>(call: () => Promise<GatewayResult<T>>) => Promise<T>;

export interface FindSaleDeps {
  gateway: Pick<GatewayClient, 'listCustomerTransactions' | 'listBatches' | 'listBatchTransactions'>;
  /** Runs one gateway read through the budget at the reconciler's priority. */
  read: Read;
  /**
   * A transaction another key already accounts for is not this attempt's (two keys, same invoice and amount); one
   * whose record names `writer` is this attempt's own (its replica kept the record and died before the answer).
   */
  isTaken(transactionKey: string, writer?: string): Promise<boolean>;
  /** The gateway's `created` carries no zone: page this much further back than the attempt's start. */
  lookbackMarginMs: number;
  pageSize?: number;
}

/** "YYYY-MM-DD hh:mm:ss" read as UTC; the margin covers whatever zone the gateway meant. NaN if unreadable. */
export function createdMs(created: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(created);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : Number.NaN;
}

/** Amounts compared as cents, so "10", "10.0" and "10.00" agree (the gateway echoes numbers either way). */
export function cents(amount: string | undefined): number | undefined {
  if (amount === undefined || !/^\d+(\.\d{1,2})?$/.test(amount)) return undefined;
  const [whole, frac = ''] = amount.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
}

// trantype_code: S sale, A auth only (gateway-facts.md, Looking transactions up).
const TRANTYPE: Record<SaleLookup['command'], string> = { sale: 'S', authonly: 'A' };

/** Whether a transaction is what the attempt sent: its invoice, its command, its amount, its customer. */
export function matches(tx: TransactionDetail, lookup: Omit<SaleLookup, 'startedMs'>): boolean {
  return tx.invoice === lookup.invoice && tx.trantype_code === TRANTYPE[lookup.command] && cents(tx.amount) === cents(lookup.amount)
    && (tx.custkey === undefined || tx.custkey === lookup.customer);
}

export function createSaleFinder(deps: FindSaleDeps): (lookup: SaleLookup) => Promise<TransactionDetail | undefined> {
  const { gateway, read, isTaken } = deps;
  const limit = deps.pageSize ?? 50;

  /** Pages one newest-first list until a page ends before the horizon; the first untaken match wins. */
  async function scan(page: (offset: number) => Promise<ListEnvelope<TransactionDetail>>, lookup: SaleLookup): Promise<TransactionDetail | undefined> {
    const horizon = lookup.startedMs - deps.lookbackMarginMs;
    for (let offset = 0; ; offset += limit) {
      const list = await page(offset);
      for (const tx of list.data) if (matches(tx, lookup) && !(await isTaken(tx.key, lookup.writer))) return tx;
      const last = list.data[list.data.length - 1];
      if (!last || list.data.length < limit || offset + list.data.length >= list.total) return undefined;
      if (createdMs(last.created) < horizon) return undefined;
    }
  }

  async function inBatches(lookup: SaleLookup): Promise<TransactionDetail | undefined> {
    const found = await scan((offset) => read(() => gateway.listBatchTransactions('current', { limit, offset })), lookup);
    if (found) return found;
    // Closed batches, newest first, back to the one opened before the attempt began.
    const horizon = lookup.startedMs - deps.lookbackMarginMs;
    for (let offset = 0; ; offset += limit) {
      const batches = await read(() => gateway.listBatches({ limit, offset }));
      for (const batch of batches.data) {
        if (batch.status === 'open') continue; // the current batch, scanned above
        const tx = await scan((o) => read(() => gateway.listBatchTransactions(batch.key, { limit, offset: o })), lookup);
        if (tx) return tx;
        if (createdMs(batch.opened) < horizon) return undefined;
      }
      if (batches.data.length < limit || offset + batches.data.length >= batches.total) return undefined;
    }
  }

  return async (lookup) => {
    try {
      return await scan((offset) => read(() => gateway.listCustomerTransactions(lookup.customer, { limit, offset })), lookup);
    } catch (err) {
      if (!(err instanceof GatewayNotFoundError)) throw err;
      return inBatches(lookup);
    }
  };
}
