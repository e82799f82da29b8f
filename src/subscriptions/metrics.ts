import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from './clock';
import type { SubscriptionStore } from './types';

/** A renewal attempt's end, as the metric counts it. */
export type RenewalResult = 'approved' | 'declined' | 'error' | 'removed' | 'closed' | 'deferred';

export interface RenewalMetrics {
  attempts: Counter<'result'>;
  /** Renewals a day's budget could not hold, moved to the next day (src/subscriptions/day-pacing.ts). */
  spilled: Counter;
}

/** How far behind its due time a renewal counts as late (the alert TokengateRenewalsLate). */
export const LATE_AFTER_MS = 3600_000;

/**
 * This replica's renewal attempts by result (`deferred`: not sent now, no budget or Redis away, or an unknown
 * outcome waiting for the reconciler: the period stays due), and the renewals due more than an hour ago by
 * tokengate's clock, read from the shared due set at scrape time (every replica reports the same figure).
 */
export function createRenewalMetrics(registry: Registry, due: { store: SubscriptionStore; clock: Clock }): RenewalMetrics {
  new Gauge({
    name: 'tokengate_subscription_renewals_late',
    help: 'Subscriptions whose renewal (or retry) fell due more than an hour ago and is not done (the budget could not hold it, or renewals are failing)',
    registers: [registry],
    async collect() {
      const now = await due.clock.now().catch(() => undefined);
      const late = now === undefined ? undefined : await due.store.dueCount(now - LATE_AFTER_MS).catch(() => undefined);
      if (late !== undefined) this.set(late);
    },
  });
  return {
    spilled: new Counter({
      name: 'tokengate_subscription_renewals_spilled_total',
      help: 'Renewals due on a day (tokengate\'s clock, UTC) still not done when it ended: the day\'s budget less its checkouts could not hold them; they go first the next day. Counted once across replicas',
      registers: [registry],
    }),
    attempts: new Counter({
      name: 'tokengate_subscription_renewals_total',
      help: 'Renewal attempts of this replica by result: approved, declined, error (result E), removed (the card or customer was removed: not sent), closed (the card updater said its account is closed: not sent), deferred (not sent now or of unknown outcome: the period stays due)',
      labelNames: ['result'],
      registers: [registry],
    }),
  };
}
