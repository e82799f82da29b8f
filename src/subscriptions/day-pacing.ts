import type { Counter } from 'prom-client';
import type { Logger } from '../observability/logger';
import type { SubscriptionStore } from './types';

/**
 * The day's renewals and the day's budget (issue 37, item 2; docs/subscriptions.md, "Renewals and the day's
 * budget"). Days are UTC days of tokengate's clock.
 *   Spread: a pass takes the day's due renewals (and the ones left from before, first) in proportion to the pass's
 *     share of what is left of the day: ceil(due through today × step / time left today), at least one, where the
 *     step is how far tokengate's clock moved since this replica's pass before (at least pollMs, at most a day):
 *     a pass late on a busy box takes the share of the time it missed, and a test clock running faster than the
 *     wall (the renewals bench's month in minutes) is paced by the day it shows, not the wall's poll. A day's
 *     1st with 3,000 renewals due at midnight does not spend the day window in its first minutes: the day's
 *     checkouts, served first in every window (the limiter's classes), take their calls as they come, and the
 *     renewals have what the day's budget less its checkouts leaves. Each replica paces its own passes.
 *   Spill: what the budget could not hold that day (the limiter refused the renewal class: `deferred`) stays due
 *     and goes first the next day. The first pass of a day counts the renewals still due from the day before,
 *     once across replicas (`recordSpill`), into `tokengate_subscription_renewals_spilled_total` (alert
 *     TokengateRenewalsSpilled). A jump of the test clock over several days judges only the day before it lands.
 */
export const DAY_MS = 86_400_000;

export const dayStartOf = (ms: number): number => ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
const dayName = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** How many renewals one pass may start now: the share of what is left today that `stepMs` of it is. */
export function passAllowance(dueThroughToday: number, nowMs: number, stepMs: number, batch: number): number {
  const left = Math.max(stepMs, dayStartOf(nowMs) + DAY_MS - nowMs);
  return Math.min(batch, Math.max(1, Math.ceil((dueThroughToday * stepMs) / left)));
}

/** A pass's step: the clock's move since the pass before (a first pass: one poll), within [pollMs, a day]. */
export function passStep(nowMs: number, previousMs: number | undefined, pollMs: number): number {
  return previousMs === undefined ? pollMs : Math.min(DAY_MS, Math.max(pollMs, nowMs - previousMs));
}

export interface DayPacing {
  /** How many due renewals this pass takes (and the spill of the day before judged, once a day). */
  allowance(nowMs: number): Promise<number>;
}

export interface DayPacingDeps {
  store: Pick<SubscriptionStore, 'dueCount' | 'dueBetween' | 'recordSpill'>;
  pollMs: number;
  batch: number;
  spilled?: Counter;
  logger: Logger;
}

export function createDayPacing(deps: DayPacingDeps): DayPacing {
  const { store } = deps;
  let judged: string | undefined;
  let previous: number | undefined;

  async function judge(nowMs: number): Promise<void> {
    const yesterday = dayStartOf(nowMs) - DAY_MS;
    const day = dayName(yesterday);
    if (judged === day) return;
    const count = await store.dueBetween(yesterday, yesterday + DAY_MS - 1);
    if ((await store.recordSpill(day, count)) && count > 0) {
      deps.spilled?.inc(count);
      deps.logger.warn('renewals moved to the next day: the day\'s budget could not hold them', { day, count });
    }
    judged = day;
  }

  return {
    async allowance(nowMs) {
      await judge(nowMs).catch((err: unknown) => deps.logger.warn('renewal spill not judged now; the next pass tries again', { err }));
      const due = await store.dueCount(dayStartOf(nowMs) + DAY_MS - 1);
      const step = passStep(nowMs, previous, deps.pollMs);
      previous = nowMs;
      return passAllowance(due, nowMs, step, deps.batch);
    },
  };
}
