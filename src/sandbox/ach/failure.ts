import type { SandboxCore } from '../core';
import type { LifecycleEvent } from '../webhooks/events';
import { achEvent } from './webhook-objects';

/**
 * A check that fails after it was sent, on request (`POST /_sandbox/ach/failures`, `sb.achFail`): status `E` and
 * `ach.failed` about it (gateway-facts.md, ACH: "`ach.failed` (some processors only)"). Nothing at the gateway
 * starts one (the processor does), and the facts do not say when it comes, so only tests and scripts do here: a
 * check submitted or settled (its batch may be closed already), a debit or a credit alike. `changes` as the other
 * steps' ({status} old and new: **choice**, the facts give no fields for it).
 */
export class AchFailError extends Error {}

export function achFail(core: SandboxCore, trankey: string): LifecycleEvent {
  const tx = core.lifecycle.get(trankey);
  const check = tx?.check;
  if (!tx || !check) throw new AchFailError('trankey must name a check transaction');
  if (check.status !== 'B' && check.status !== 'S') throw new AchFailError('only a submitted or settled check can fail');
  const before = check.status;
  check.status = 'E';
  return achEvent(core.lifecycle, tx, 'ach.failed', { status: before }, { status: 'E' }, core.clock.now());
}
