import type { GatewayClient } from '../gateway/client';
import { toCents } from '../gateway/money';
import type { ListEnvelope, TransactionDetail } from '../gateway/types';
import { taggedReference } from '../writes/reference';
import { createdMs, type Read } from './find-sale';

/**
 * The refunds (credits) the gateway's batch lists hold since a moment (issue 42). A refund is a transaction of
 * its own (trantype_code C; a voided one Z, "Voided Credit Card Refund") in the batch that was open when it was
 * made (gateway-facts.md, Looking transactions up; the reference's batch list example). No documented field of
 * it names the sale it refunded, so tokengate recognises its own by the tag it sent in `custom_fields`
 * (src/writes/reference.ts). What this list can prove:
 *   - a credit carrying a write's tag: that refund happened (found);
 *   - no credit of a refund's amount, tagged for it or untagged, in every batch that could hold it: it did not
 *     happen as a credit (absence needs the look-up's money to agree too: find.ts);
 *   - an untagged credit of its amount (a whole refund's creditvoid, a console refund, or a gateway that dropped
 *     the custom field): nothing either way. The refund stays unknown; an operator decides.
 * The batch lists are read whole (their order is not documented), current batch first, then closed batches
 * newest first back to the sale's own batch (a credit needs the sale settled, so it is in a later batch) or the
 * first one opened before the horizon. An unsettled sale has no credits: the caller does not scan. Reads go
 * through `read` (spare budget only).
 */
export interface Credit {
  key: string;
  refnum: string;
  cents: number;
  /** The write reference of tokengate's tag, when it carries one. */
  tag?: string;
  voided: boolean;
}

export interface CreditScanDeps {
  gateway: Pick<GatewayClient, 'listBatches' | 'listBatchTransactions'>;
  read: Read;
  pageSize?: number;
}

const CREDIT_CODES = new Set(['C', 'Z']);

export function creditOf(tx: TransactionDetail): Credit | undefined {
  if (!CREDIT_CODES.has(tx.trantype_code) || tx.result_code === 'E' || tx.result_code === 'D') return undefined;
  const tag = taggedReference(tx.custom_fields);
  return { key: tx.key, refnum: tx.refnum, cents: toCents(tx.amount), ...(tag ? { tag } : {}), voided: tx.trantype_code === 'Z' || tx.status_code === 'V' };
}

/**
 * `sinceMs`: the time horizon (the batches' `opened` has no zone: the caller takes a margin); `saleBatch`: the
 * settled sale's batch (its look-up's `batch.key`): the scan stops there, whichever comes first.
 */
export function createCreditScan(deps: CreditScanDeps): (sinceMs: number, saleBatch?: string) => Promise<Credit[]> {
  const { gateway, read } = deps;
  const limit = deps.pageSize ?? 100;

  /** Every page of one list: ends on an empty page or at `total` (a gateway that caps `limit` lower is still read whole). */
  async function whole(page: (offset: number) => Promise<ListEnvelope<TransactionDetail>>, into: Credit[]): Promise<void> {
    for (let offset = 0; ; ) {
      const list = await page(offset);
      for (const tx of list.data) {
        const credit = creditOf(tx);
        if (credit) into.push(credit);
      }
      offset += list.data.length;
      if (list.data.length === 0 || offset >= list.total) return;
    }
  }

  return async (sinceMs, saleBatch) => {
    const credits: Credit[] = [];
    await whole((offset) => read(() => gateway.listBatchTransactions('current', { limit, offset })), credits);
    for (let offset = 0; ; ) {
      const batches = await read(() => gateway.listBatches({ limit, offset }));
      for (const batch of batches.data) {
        if (batch.status === 'open') continue; // the current batch, read above
        // The sale's own batch closed before any credit of it could be made: it and older ones hold none.
        if (batch.key === saleBatch) return credits;
        await whole((o) => read(() => gateway.listBatchTransactions(batch.key, { limit, offset: o })), credits);
        // This batch was open before the horizon: it held whatever was made then; older ones closed before.
        if (!(createdMs(batch.opened) >= sinceMs)) return credits;
      }
      offset += batches.data.length;
      if (batches.data.length === 0 || offset >= batches.total) return credits;
    }
  };
}
