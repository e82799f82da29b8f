import express from 'express';
import { createAdminApp } from '../../src/http/admin-app';
import { createMetrics } from '../../src/observability/metrics';
import { createLogger, CapturingStream } from '../../src/observability/logger';
import { createTestClock, createWallClock } from '../../src/subscriptions/clock';
import { declineClassOf } from '../../src/subscriptions/declines';
import { applyOutcome } from '../../src/subscriptions/lifecycle';
import { dueAt, firstPeriodFrom } from '../../src/subscriptions/periods';
import type { SubscriptionRecord } from '../../src/subscriptions/types';
import type { Transaction } from '../../src/gateway/types';

const at = (iso: string) => Date.parse(iso);
const day = (ms: number) => new Date(ms).toISOString();

describe('period due dates', () => {
  test('when a month is anchored on the 31st, then shorter months fall on their last day and the 31st comes back after', () => {
    const anchor = at('2027-01-31T09:30:00.000Z');
    expect([0, 1, 2, 3, 4].map((n) => day(dueAt(anchor, 'month', 1, n)))).toEqual([
      '2027-01-31T09:30:00.000Z', '2027-02-28T09:30:00.000Z', '2027-03-31T09:30:00.000Z', '2027-04-30T09:30:00.000Z', '2027-05-31T09:30:00.000Z',
    ]);
  });

  test('when a leap day anchors a year, then common years fall on Feb 28 and the next leap year on Feb 29', () => {
    const anchor = at('2028-02-29T00:00:00.000Z');
    expect([1, 4].map((n) => day(dueAt(anchor, 'year', 1, n)))).toEqual(['2029-02-28T00:00:00.000Z', '2032-02-29T00:00:00.000Z']);
  });

  test('when intervals count several units, then each period counts from the anchor (no drift)', () => {
    const anchor = at('2027-01-30T00:00:00.000Z');
    expect(day(dueAt(anchor, 'month', 3, 4))).toBe('2028-01-30T00:00:00.000Z');
    expect(day(dueAt(anchor, 'week', 2, 3))).toBe('2027-03-13T00:00:00.000Z');
    expect(day(dueAt(anchor, 'day', 1, 365))).toBe('2028-01-30T00:00:00.000Z');
  });

  test('when resumed, then the first period not behind the clock is next', () => {
    const anchor = at('2027-01-01T00:00:00.000Z');
    expect(firstPeriodFrom(anchor, 'month', 1, 1, at('2027-04-15T00:00:00.000Z'))).toBe(4);
  });
});

describe('decline classes', () => {
  const tx = (code: Transaction['result_code'], error_code?: string) => ({ result_code: code, ...(error_code ? { error_code } : {}) });
  test('when the code is a hard one of gateway-facts.md, then it is hard; anything else (gateway errors too) is soft', () => {
    for (const c of ['10257', '10262', '79248', '79249', '601', '602']) expect(declineClassOf(tx('D', c))).toBe('hard');
    for (const c of ['10127', '10205', '10251']) expect(declineClassOf(tx('D', c))).toBe('soft');
    expect(declineClassOf(tx('E'))).toBe('soft');
  });
});

describe('retries running out', () => {
  const base: SubscriptionRecord = {
    key: 'sub_x', customer: 'c', payment_method: 'pm', amount: '1.00', amount_detail: null, interval: 'month', interval_count: 1,
    anchor_ms: at('2027-01-01T00:00:00.000Z'), count: null, periods_charged: 1, status: 'past_due', cancel_at_period_end: false, description: null,
    invoice_prefix: null, consent: { text: 't', accepted_at: '', by: 's' }, history: [], created_ms: 0, first_sale: null, due_ms: 0, version: 3,
    next_period: 1, attempts: 2, sending: null, blocked_method: null, fingerprint: 'f',
  };
  const declined = { kind: 'declined' as const, transaction: { type: 'transaction', key: 'k', refnum: '1', is_duplicate: 'N', result_code: 'D', result: 'Declined', authcode: '', error_code: '10251' } as Transaction };

  test('when the last retry declines softly, then the subscription is unpaid (or canceled by setting) with nothing planned', () => {
    const unpaid = applyOutcome(base, 1, 2, declined, 0, { scheduleMs: [1, 2], exhausted: 'unpaid' }, 'pm');
    expect(unpaid?.next).toMatchObject({ status: 'unpaid', due_ms: null, attempts: 3, version: 4 });
    expect(unpaid?.events).toEqual(['subscription.payment_failed', 'subscription.unpaid']);
    const canceled = applyOutcome(base, 1, 2, declined, 0, { scheduleMs: [1, 2], exhausted: 'cancel' }, 'pm');
    expect(canceled?.next.status).toBe('canceled');
  });

  test('when the same answer is applied twice, then the second finds it done', () => {
    const once = applyOutcome(base, 1, 2, declined, 0, { scheduleMs: [1, 2], exhausted: 'unpaid' }, 'pm');
    expect(once && applyOutcome(once.next, 1, 2, declined, 0, { scheduleMs: [1, 2], exhausted: 'unpaid' }, 'pm')).toBeUndefined();
  });
});

describe('the test clock on the admin port', () => {
  const logger = createLogger({ level: 'error', stream: new CapturingStream() });
  const serve = async (app: express.Express, run: (url: string) => Promise<void>) => {
    const server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as { port: number };
    try {
      await run(`http://127.0.0.1:${port}`);
    } finally {
      await new Promise((r) => server.close(r));
    }
  };
  const readiness = { draining: () => false, degraded: () => [] };

  test('when the clock cannot move (production), then /test/clock answers 404', async () => {
    await serve(createAdminApp({ metrics: createMetrics(), logger, readiness, clock: createWallClock() }), async (url) => {
      expect((await fetch(`${url}/test/clock`)).status).toBe(404);
      expect((await fetch(`${url}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"advance_ms":1}' })).status).toBe(404);
    });
  });

  test('when advanced outside production, then it moves forward only, by a whole number of ms', async () => {
    await serve(createAdminApp({ metrics: createMetrics(), logger, readiness, clock: createTestClock({ keyPrefix: 'unit' }) }), async (url) => {
      const post = (body: unknown) => fetch(`${url}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const res = await post({ advance_ms: 86_400_000 });
      expect(res.status).toBe(200);
      expect(Date.parse(((await res.json()) as { now: string }).now) - Date.now()).toBeGreaterThan(86_000_000);
      expect((await post({ advance_ms: -5 })).status).toBe(400);
      expect((await post({ advance_ms: 'soon' })).status).toBe(400);
    });
  });
});
