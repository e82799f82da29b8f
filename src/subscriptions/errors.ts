/** Why a subscription change was refused before anything was sent (stable codes; src/http/write-errors.ts maps them). */

/** A change that needs an active, past-due, unpaid or paused subscription on a canceled or completed one → 409. */
export class SubscriptionNotActiveError extends Error {
  readonly code = 'subscription_not_active';
  constructor() {
    super('the subscription is canceled or completed');
    this.name = 'SubscriptionNotActiveError';
  }
}

/** A field the request's shape allowed but its meaning does not (a start date in the past) → 400 naming the field. */
export class SubscriptionInputError extends Error {
  readonly code = 'invalid_request';
  constructor(readonly path: string, readonly rule: string) {
    super('the subscription request is invalid');
    this.name = 'SubscriptionInputError';
  }
}
