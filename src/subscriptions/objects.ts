import type { SubscriptionRecord } from './types';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The subscription as the API answers it (contract, "Subscriptions"): the record without its bookkeeping. */
export function subscriptionObject(r: SubscriptionRecord): Record<string, unknown> {
  return {
    type: 'subscription',
    key: r.key,
    customer: r.customer,
    payment_method: r.payment_method,
    amount: r.amount,
    amount_detail: r.amount_detail,
    interval: r.interval,
    interval_count: r.interval_count,
    anchor: iso(r.anchor_ms),
    count: r.count,
    periods_charged: r.periods_charged,
    // The next attempt: the next period's date, or a retry's (the history says which).
    next_charge_at: r.status === 'active' || r.status === 'past_due' ? iso(r.due_ms) : null,
    status: r.status,
    cancel_at_period_end: r.cancel_at_period_end,
    description: r.description,
    invoice_prefix: r.invoice_prefix,
    consent: r.consent,
    history: r.history,
    created: iso(r.created_ms),
  };
}
