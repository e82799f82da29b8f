import type { SandboxCore } from './core';
import { randomAlnum } from './fixtures';
import type { LifecycleTx } from './lifecycle';
import { toCents } from './sale-request';
import { SettingsError } from './settings';

/**
 * What a merchant's console (or another integration on the same merchant) puts in the open batch, for tests of
 * settlements (issue 39), through `POST /_sandbox/batches/current/console` (loopback only):
 *   {"kind":"refund","amount":"5.00"}                     a refund no tokengate write made (a credit with no tag)
 *   {"kind":"sale","amount":"7.00"}                       a sale made elsewhere
 *   {"kind":"amount","transaction":"<key>","amount":"…"}  the batch holds another amount for a sale in it (the
 *                                                         console's adjust before the close; no webhook says so)
 *   {"kind":"drop","transaction":"<key>"}                 a fault, no console's: the open batch loses a sale it
 *                                                         holds (the processor rejected it); its look-up still says
 *                                                         approved and unsettled, and no batch ever holds it (the
 *                                                         `missing` verdict's case)
 * Each answers {"key": the transaction}. A refund made in the console joins the batch like one by the API
 * (follow-ups.ts): the reference documents no difference in the batch list.
 */
export function consoleEntry(core: SandboxCore, body: unknown, now: number): { key: string } {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (b.kind === 'drop') {
    const tx = typeof b.transaction === 'string' ? core.lifecycle.get(b.transaction) : undefined;
    if (!tx || tx.state !== 'unsettled' || !core.lifecycle.dropFromBatch(tx, now)) throw new SettingsError('transaction must be a transaction in the open batch');
    return { key: tx.key };
  }
  const amount = typeof b.amount === 'string' && /^\d{1,7}(\.\d{1,2})?$/.test(b.amount) ? toCents(b.amount) : NaN;
  if (!(amount > 0)) throw new SettingsError('amount must be a positive amount, like "5.00"');
  const life = core.lifecycle;
  if (b.kind === 'amount') {
    const tx = typeof b.transaction === 'string' ? life.get(b.transaction) : undefined;
    if (!tx || tx.state !== 'unsettled') throw new SettingsError('transaction must be a transaction in the open batch');
    tx.capturedCents = amount;
    tx.authCents = amount;
    return { key: tx.key };
  }
  if (b.kind !== 'refund' && b.kind !== 'sale') throw new SettingsError('kind must be refund, sale, amount or drop');
  const tx: LifecycleTx = {
    key: `d${randomAlnum(14)}`,
    refnum: core.ledger.nextRefnum(now),
    kind: b.kind,
    resultCode: 'A',
    state: 'unsettled',
    created: now,
    amountCents: amount,
    authCents: amount,
    capturedCents: amount,
    refundedCents: 0,
    adjustedCents: 0,
    refunds: [],
    invoice: `console-${randomAlnum(8)}`,
    authcode: String(100000 + Math.floor(Math.random() * 900000)),
  };
  life.add(tx);
  life.joinBatch(tx, now);
  return { key: tx.key };
}
