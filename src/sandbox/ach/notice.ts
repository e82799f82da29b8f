import type { SandboxCore } from '../core';
import type { LifecycleEvent } from '../webhooks/events';
import { achEvent } from './webhook-objects';

/**
 * A bank's notice of change on request (`POST /_sandbox/ach/notes`, `sb.achNote`): `ach.note_added` about a check,
 * the note as the gateway's example writes one (gateway-facts.md, ACH: `C02:Corrected Routing:123456789`). Nothing
 * starts one at the gateway (a bank sends it), so only tests and scripts do here. The note goes in `changes.new`
 * {`note`} (the sandbox's choice: the facts give the note, not its field). It may carry a corrected account or
 * routing number: what receives it must keep the code and drop the rest.
 */
export const DEFAULT_NOTE = 'C02:Corrected Routing:011000015';

export class AchNoteError extends Error {}

export function achNote(core: SandboxCore, trankey: string, note: string = DEFAULT_NOTE): LifecycleEvent {
  const tx = core.lifecycle.get(trankey);
  if (!tx?.check) throw new AchNoteError('trankey must name a check transaction');
  if (!/^C\d\d:[^\n]{1,200}$/.test(note)) throw new AchNoteError('note must read like C02:Corrected Routing:…');
  return achEvent(core.lifecycle, tx, 'ach.note_added', {}, { note }, core.clock.now());
}
