import type { EventDraft, EventSink } from '../events/types';
import type { Logger } from '../observability/logger';
import type { Transition } from './lifecycle';
import { subscriptionObject } from './objects';
import type { SubscriptionRecord, SubscriptionStore } from './types';

/**
 * A change to a subscription as a compare-and-set loop: read, apply, swap over the version read; someone else's
 * change first (another replica's renewal, a PATCH) and the change is applied again to what they left. A
 * transition that finds nothing to do (already applied) ends it. Its events are appended once the swap held,
 * each with an identity that makes a repeat one event (src/events).
 */
export interface Commit {
  (key: string, change: (r: SubscriptionRecord) => Transition | undefined): Promise<SubscriptionRecord | undefined>;
}

const TRIES = 8;

export function createCommit(deps: { store: SubscriptionStore; events?: EventSink; appended?: () => void; logger: Logger }): Commit {
  const { store } = deps;
  return async (key, change) => {
    for (let i = 0; i < TRIES; i += 1) {
      const current = await store.get(key);
      if (!current) return undefined;
      const t = change(current);
      if (!t) return current;
      if (!(await store.swap(t.next))) continue;
      await appendEvents(deps, t);
      return t.next;
    }
    throw new Error('subscription changed too often to apply a change');
  };
}

/** The transition's events, named so a repeat of the same change is one event. */
export function eventDrafts(t: Transition): EventDraft[] {
  const r = t.next;
  const data = subscriptionObject(r);
  const last = r.history.at(-1);
  return t.events.map((type) => {
    let change = `${type}:${r.key}`;
    if (type === 'subscription.renewed' || type === 'subscription.past_due' || type === 'subscription.unpaid') change += `:${last?.period ?? r.next_period}`;
    else if (type === 'subscription.payment_failed') change += `:${last?.period ?? r.next_period}:${r.attempts}:${last?.at ?? ''}`;
    else if (type === 'subscription.updated') change += `:${r.version}`;
    return { type, change, data };
  });
}

export async function appendEvents(deps: { events?: EventSink; appended?: () => void; logger: Logger }, t: Transition): Promise<void> {
  if (!deps.events || t.events.length === 0) return;
  try {
    await deps.events.append(eventDrafts(t));
    deps.appended?.();
  } catch (err) {
    deps.logger.error('could not append a subscription\'s events', { err, types: t.events });
  }
}
