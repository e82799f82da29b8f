import type { EventDraft, EventSink } from '../events/types';
import { fromCents } from '../gateway/money';
import type { RecordChange, RecordChangeSink, SaleRecords, SaleView } from '../sale-records';
import { factsOfView, saleObject } from './sale-object';

export interface SaleEventsDeps {
  records: Pick<SaleRecords, 'view'>;
  events: EventSink;
  /** Called after events were appended (the delivery looks at once). */
  appended?: () => void;
}

/**
 * The payment events of changes to a sale's record that tokengate heard of (a gateway webhook, a refresh that
 * read the gateway): the records report them (src/sale-records, `onChange`), this renders and appends them.
 * `data` is the sale as `GET /v1/sales/{key}` answers it now (a refund: the refund object). The `change` of each
 * is the one tokengate's own write about the same money has (src/events/write-events.ts): one event either way.
 */
export function createSaleEvents(deps: SaleEventsDeps): RecordChangeSink {
  return async (changes) => {
    const views = new Map<string, Promise<SaleView | undefined>>();
    const viewOf = (saleKey: string) => {
      let v = views.get(saleKey);
      if (!v) views.set(saleKey, (v = deps.records.view(saleKey)));
      return v;
    };
    const drafts = (await Promise.all(changes.map(async (c) => draftOf(c, await viewOf(c.saleKey))))).flat();
    if (drafts.length === 0) return;
    await deps.events.append(drafts);
    deps.appended?.();
  };
}

function draftOf(c: RecordChange, view: SaleView | undefined): EventDraft[] {
  if (!view) return [];
  const sale = () => saleObject(factsOfView(c.saleKey, view));
  switch (c.kind) {
    case 'sale':
      return [{ type: c.type, change: `sale:${c.saleKey}`, data: sale() }];
    case 'captured':
      return [{ type: 'sale.captured', change: `capture:${c.saleKey}`, data: sale() }];
    case 'voided':
      return [{ type: 'sale.voided', change: `void:${c.saleKey}`, data: sale() }];
    case 'settled':
      // A bank payment's batch closing is not its settlement: the ACH clock's is (src/webhooks/ach-events.ts).
      if (view.record.fields?.bank) return [];
      return [{ type: 'sale.settled', change: `settle:${c.saleKey}`, data: sale() }];
    case 'refunded': {
      const refund = {
        type: 'refund', key: c.refund.key, refnum: c.refund.refnum ?? view.record.fields?.refnum ?? '', sale: c.saleKey, amount: fromCents(c.refund.cents),
        result_code: 'A', result: 'Approved', method: 'refund',
      };
      return [{ type: 'refund.succeeded', change: c.change, data: refund }];
    }
    case 'unvoided':
      return [{ type: 'sale.unvoided', change: `unvoid:${c.saleKey}`, data: sale() }];
    case 'adjusted':
      return [{ type: 'sale.adjusted', change: c.change, data: sale() }];
    case 'refund_voided': {
      // The refund as the sale now lists it (status voided), or, if no longer listed, what the record knew of it.
      const listed = view.refunds.find((r) => r.key === c.refund.key);
      const refund = {
        type: 'refund', key: c.refund.key, refnum: listed?.refnum ?? '', sale: c.saleKey, amount: fromCents(listed?.cents ?? c.refund.cents),
        result_code: 'A', result: 'Approved', method: listed?.method ?? 'refund', status_code: 'V', status: 'voided',
      };
      return [{ type: 'refund.voided', change: `refund-void:${c.refund.key}`, data: refund }];
    }
  }
}
