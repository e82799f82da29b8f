import type { EventDraft } from '../../src/events/types';
import { createLogger } from '../../src/observability/logger';
import type { Checkout, PayRequest } from '../../src/sales/checkout';
import { createTestClock } from '../../src/subscriptions/clock';
import { createFirstCharges, firstChargeKey, subscriptionKey } from '../../src/subscriptions/first-charge';
import { createMemorySubscriptionStore } from '../../src/subscriptions/memory-subscription-store';
import { createSubscriptionService } from '../../src/subscriptions/service';
import type { StoredResponse } from '../../src/idempotency';

/**
 * A first charge's subscription (docs/subscriptions.md, "create one"), whichever path learns of its approval: the
 * reconciler's resolution creates it from the terms the charge's attempt kept (not from anything the resolution
 * time holds), and a replay whose resolution did not create it creates the same one. Once: one record, one
 * `subscription.created`, however many paths get there.
 */
const logger = createLogger({ level: 'error' });
const T0 = Date.parse('2027-05-31T10:00:00.000Z');
const input = { amount: '12.00', interval: 'month' as const, intervalCount: 1, paymentMethod: 'pm1', invoicePrefix: 'inv', consent: { text: 'terms v9' } };
const caller = { sub: 'merchant', anyCustomer: true };

function setup() {
  const store = createMemorySubscriptionStore();
  const appended: EventDraft[] = [];
  const events = { append: async (drafts: readonly EventDraft[]) => { appended.push(...drafts); } };
  const clock = createTestClock({ keyPrefix: 't' });
  const firstCharges = createFirstCharges({ store, events, logger });
  /** What the stub checkout does: `lose` keeps the terms and loses the answer (as a timeout would); else replays `answer`. */
  let mode: { lose: true } | { replay: StoredResponse } = { lose: true };
  const checkout: Checkout = {
    async pay(request: PayRequest) {
      if ('lose' in mode) {
        await request.started?.({ reference: 'r', invoice: undefined, resumed: false });
        throw new Error('answer lost');
      }
      return { response: mode.replay, replayed: true };
    },
  };
  // Each request reads a later time: what a resolution or a replay creates must carry the first attempt's.
  let ticks = 0;
  const service = createSubscriptionService({
    store, clock: { ...clock, now: async () => T0 + 60_000 * ticks++ }, checkout, firstCharges, events, logger, sendingLeaseMs: 1000,
    methods: { resolve: async () => ({ key: 'pm1', bank: false }), isClosed: async () => false },
  });
  const create = async () => {
    const made = await service.create({ caller, custkey: 'c1', idempotencyKey: 'k1', fingerprint: 'f1', input }, () => ({ status: 201, body: {}, headers: {} }));
    if ('declined' in made) throw new Error('declined');
    return made;
  };
  return { store, appended, firstCharges, service, create, setMode: (m: typeof mode) => (mode = m) };
}

const approved: StoredResponse = { status: 201, body: { key: 'sale9' }, headers: {} };
const write = { scope: caller.sub, key: firstChargeKey('k1') };

test('when the reconciler finds a lost first charge approved, then it creates the subscription from the terms kept before the charge, first period paid; a second resolution changes nothing', async () => {
  const { store, appended, firstCharges, create } = setup();
  await expect(create()).rejects.toThrow('answer lost');
  const key = subscriptionKey(caller.sub, 'k1');
  expect(await store.get(key)).toBeUndefined();
  const kept = await store.firstCharge(key);

  expect(await firstCharges.resolved(write, { op: 'sale', customer: 'c1' }, approved)).toBe(true);
  const made = await store.get(key);
  expect(made).toMatchObject({ status: 'active', periods_charged: 1, next_period: 1, first_sale: 'sale9', created_ms: kept?.record.created_ms, anchor_ms: kept?.record.created_ms, consent: kept?.record.consent });
  expect(kept?.record.created_ms).toBe(T0);
  expect(made?.due_ms).toBe(Date.parse('2027-06-30T10:00:00.000Z'));
  expect(made?.history).toEqual([{ period: 0, sale: 'sale9', result: 'approved', decline_class: null, decline_code: null, at: new Date(kept?.record.created_ms ?? 0).toISOString(), next_retry_at: null }]);
  await firstCharges.resolved(write, { op: 'sale', customer: 'c1' }, approved);
  expect(await store.get(key)).toEqual(made);
  expect(appended.map((e) => e.type)).toEqual(['subscription.created']);
});

test('when a lost first charge resolves declined, or a write is not a first charge\'s, then nothing is created', async () => {
  const { store, appended, firstCharges, create } = setup();
  await expect(create()).rejects.toThrow('answer lost');
  const declined: StoredResponse = { status: 402, body: { error: { code: 'card_declined', transaction: { key: 'sale8', error_code: '10127' } } }, headers: {} };
  expect(await firstCharges.resolved(write, { op: 'sale', customer: 'c1' }, declined)).toBe(true);
  expect(await firstCharges.resolved({ scope: caller.sub, key: 'k1' }, { op: 'sale', customer: 'c1' }, approved)).toBe(false);
  expect(await store.listByCustomer('c1')).toEqual([]);
  expect(appended).toEqual([]);
});

test('when the client\'s retry replays an approved first charge whose subscription no resolution created, then the replay creates the same subscription once', async () => {
  const { store, appended, create, setMode } = setup();
  await expect(create()).rejects.toThrow('answer lost');
  const kept = await store.firstCharge(subscriptionKey(caller.sub, 'k1'));
  setMode({ replay: approved });
  const replayed = await create();
  expect(replayed).toMatchObject({ replayed: true, record: { first_sale: 'sale9', periods_charged: 1, created_ms: T0, anchor_ms: T0 } });
  expect(replayed.record).toEqual(await store.get(kept?.record.key ?? ''));
  // Asked again: the stored subscription, no second event.
  expect((await create()).record).toEqual(replayed.record);
  expect(appended.map((e) => e.type)).toEqual(['subscription.created']);
});
