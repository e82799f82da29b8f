import { returnClassOf } from '../../src/subscriptions/declines';
import { applyReturn, type RetryPolicy } from '../../src/subscriptions/lifecycle';
import type { SubscriptionRecord } from '../../src/subscriptions/types';

/** A bank payment's return applied to its subscription (lifecycle.ts applyReturn; docs/subscriptions.md, "Bank accounts"). */
const DAY = 86_400_000;
const T0 = Date.parse('2027-03-01T00:00:00.000Z');
const policy: RetryPolicy = { scheduleMs: [DAY, 3 * DAY], exhausted: 'unpaid' };

function record(change: Partial<SubscriptionRecord> = {}): SubscriptionRecord {
  return {
    key: 'sub_1', customer: 'c1', payment_method: 'pm_bank', amount: '25.00', amount_detail: null, interval: 'month', interval_count: 1, anchor_ms: T0,
    count: null, periods_charged: 2, status: 'active', cancel_at_period_end: false, description: null, invoice_prefix: null,
    consent: { text: 'v4', accepted_at: new Date(T0).toISOString(), by: 'x' },
    history: [
      { period: 0, sale: 's0', result: 'approved', decline_class: null, decline_code: null, at: new Date(T0).toISOString(), next_retry_at: null },
      { period: 1, sale: 's1', result: 'approved', decline_class: null, decline_code: null, at: new Date(T0 + 31 * DAY).toISOString(), next_retry_at: null },
    ],
    created_ms: T0, first_sale: 's0', due_ms: T0 + 59 * DAY, version: 3, next_period: 2, attempts: 0, sending: null, blocked_method: null, fingerprint: 'f', ...change,
  };
}
const link = (period: number, sale: string, code: string | undefined) => ({ key: 'sub_1', period, attempt: 0, payment_method: 'pm_bank', sale, code });

test('when the return codes are classed, then only R01 and R09 are worth presenting again', () => {
  expect(['R01', 'R09'].map(returnClassOf)).toEqual(['soft', 'soft']);
  expect(['R02', 'R03', 'R04', 'R07', 'R08', 'R10', 'R16', undefined].map(returnClassOf)).toEqual(Array(8).fill('hard'));
});

test('when the latest period comes back R01, then it is reopened under a fresh attempt and retried a day after the return', () => {
  const now = T0 + 34 * DAY;
  const t = applyReturn(record(), link(1, 's1', 'R01'), now, policy);
  expect(t?.next).toMatchObject({ status: 'past_due', next_period: 1, attempts: 1, periods_charged: 1, due_ms: now + DAY, blocked_method: null });
  expect(t?.events).toEqual(['subscription.payment_failed', 'subscription.past_due']);
  // Applied once: the same return again changes nothing.
  expect(applyReturn(t!.next, link(1, 's1', 'R01'), now + 1, policy)).toBeUndefined();
});

test('when a soft return finds the schedule used up, then the subscription is unpaid', () => {
  const t = applyReturn(record(), { ...link(1, 's1', 'R09'), attempt: 2 }, T0 + 40 * DAY, policy);
  expect(t?.next).toMatchObject({ status: 'unpaid', due_ms: null });
  expect(t?.events).toContain('subscription.unpaid');
});

test('when an older period comes back R10 while a later one is paid, then it is recorded and the account blocked, and the paid period stays paid', () => {
  const t = applyReturn(record(), link(0, 's0', 'R10'), T0 + 40 * DAY, policy);
  expect(t?.next).toMatchObject({ status: 'past_due', next_period: 2, periods_charged: 1, blocked_method: 'pm_bank', due_ms: T0 + 59 * DAY });
  expect(t?.next.history.at(-1)).toMatchObject({ period: 0, sale: 's0', result: 'returned', decline_class: 'hard', decline_code: 'R10' });
});

test('when a renewal is on its way while the latest period comes back, then that attempt is not disturbed (nothing reopened)', () => {
  const sending = { period: 2, until_ms: T0 + 60 * DAY };
  const t = applyReturn(record({ sending }), link(1, 's1', 'R01'), T0 + 59 * DAY, policy);
  expect(t?.next).toMatchObject({ next_period: 2, attempts: 0, sending, periods_charged: 1, status: 'active' });
});

test('when a canceled subscription\'s payment comes back, then it is recorded and stays canceled with nothing planned', () => {
  const t = applyReturn(record({ status: 'canceled', due_ms: null }), link(1, 's1', 'R01'), T0 + 34 * DAY, policy);
  expect(t?.next).toMatchObject({ status: 'canceled', due_ms: null, next_period: 2, periods_charged: 1 });
});
