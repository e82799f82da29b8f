import { assertAccess, canAccessCustomer, NotFoundError, type Caller } from '../access';
import type { EventSink } from '../events/types';
import type { Logger } from '../observability/logger';
import type { Checkout, PayInput, RenderSale } from '../sales/checkout';
import type { WriteResult } from '../writes';
import { WriteKeyReusedError } from '../writes/errors';
import type { Clock } from './clock';
import { appendEvents, createCommit } from './commit';
import { SubscriptionInputError, SubscriptionNotActiveError } from './errors';
import { firstChargeKey, subscriptionKey, type FirstCharges } from './first-charge';
import { canceledNow, isChangeable, periodDue, type Transition } from './lifecycle';
import { firstPeriodFrom } from './periods';
import type { PaymentMethods } from './payment-methods';
import type { FirstCharge, Interval, SubscriptionRecord, SubscriptionStore } from './types';

export interface CreateInput {
  amount: string;
  amountDetail?: { tax?: string; tip?: string };
  interval: Interval;
  intervalCount: number;
  /** `YYYY-MM-DD`; absent or today: the first period is charged now. */
  start?: string;
  count?: number;
  paymentMethod?: string;
  description?: string;
  invoicePrefix?: string;
  consent: { text: string };
}

export interface UpdateInput {
  paymentMethod?: string;
  amount?: string;
  amountDetail?: { tax?: string; tip?: string };
  description?: string;
  status?: 'paused' | 'active';
}

export interface Created {
  record: SubscriptionRecord;
  /** The first charge's answer when one was made now (a 402 or 502 means nothing was created). */
  sale?: WriteResult;
  replayed: boolean;
}

export interface SubscriptionService {
  create(req: { caller: Caller; custkey: string; idempotencyKey: string; fingerprint: string; input: CreateInput }, render: RenderSale, log?: Logger): Promise<Created | { declined: WriteResult }>;
  get(caller: Caller, key: string): Promise<SubscriptionRecord>;
  list(caller: Caller, custkey: string): Promise<SubscriptionRecord[]>;
  update(caller: Caller, key: string, input: UpdateInput): Promise<SubscriptionRecord>;
  cancel(caller: Caller, key: string, atPeriodEnd: boolean): Promise<SubscriptionRecord>;
  /**
   * The customer was deleted (src/wallet/removals.ts): each of its subscriptions not ended yet is canceled now
   * (`subscription.canceled`), as a cancel does (after a renewal in flight answers). Idempotent. Answers how many.
   */
  cancelAllOf(custkey: string): Promise<number>;
}

/** The caller of the cancels a customer's deletion makes (a control character: no token's `sub` can be it). */
const REMOVALS_CALLER: Caller = { sub: 'tokengate\u0000removals', anyCustomer: true };

export interface SubscriptionServiceDeps {
  store: SubscriptionStore;
  clock: Clock;
  checkout: Checkout;
  methods: PaymentMethods;
  events?: EventSink;
  appended?: () => void;
  logger: Logger;
  /** How long a cancel waits at most for a renewal attempt in flight to answer (its write's lease). */
  sendingLeaseMs: number;
  /** The subscriptions first charges create (first-charge.ts): the same for their answer, the reconciler and a replay. */
  firstCharges: FirstCharges;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createSubscriptionService(deps: SubscriptionServiceDeps): SubscriptionService {
  const { store, clock, checkout, methods, logger, firstCharges } = deps;
  const commit = createCommit(deps);

  /** The record if the caller may see it: anything else is the same 404 as an unknown key (no hint). */
  async function owned(caller: Caller, key: string): Promise<SubscriptionRecord> {
    const r = await store.get(key);
    if (!r || !canAccessCustomer(caller, r.customer)) throw new NotFoundError();
    return r;
  }

  const changed = (r: SubscriptionRecord, change: Partial<SubscriptionRecord>, events: Transition['events'] = ['subscription.updated']): Transition =>
    ({ next: { ...r, ...change, version: r.version + 1 }, events });

  const service: SubscriptionService = {
    async cancelAllOf(custkey) {
      let canceled = 0;
      for (const r of await store.listByCustomer(custkey)) {
        if (!isChangeable(r.status)) continue;
        try {
          await service.cancel(REMOVALS_CALLER, r.key, false);
          canceled += 1;
        } catch (err) {
          if (!(err instanceof SubscriptionNotActiveError)) throw err; // ended meanwhile
        }
      }
      return canceled;
    },

    async create({ caller, custkey, idempotencyKey, fingerprint, input }, render, log) {
      assertAccess(caller, custkey);
      const key = subscriptionKey(caller.sub, idempotencyKey);
      const existing = await store.get(key);
      if (existing) {
        if (existing.fingerprint !== fingerprint) throw new WriteKeyReusedError();
        return { record: existing, replayed: true };
      }
      const now = await clock.now();
      const today = new Date(now).toISOString().slice(0, 10);
      if (input.start !== undefined && input.start < today) throw new SubscriptionInputError('body.start', 'not_in_past');
      const chargeNow = input.start === undefined || input.start === today;
      // The card must be the customer's now (a later charge checks again: it may be removed meanwhile).
      const { key: card, bank } = await methods.resolve(caller, custkey, input.paymentMethod);
      const anchor = chargeNow ? now : Date.parse(`${input.start}T00:00:00.000Z`);
      const base: SubscriptionRecord = {
        key, customer: custkey, payment_method: input.paymentMethod ?? null, amount: input.amount, amount_detail: input.amountDetail ?? null,
        interval: input.interval, interval_count: input.intervalCount, anchor_ms: anchor, count: input.count ?? null, periods_charged: 0,
        status: 'active', cancel_at_period_end: false, description: input.description ?? null, invoice_prefix: input.invoicePrefix ?? null,
        consent: { text: input.consent.text, accepted_at: new Date(now).toISOString(), by: caller.sub }, history: [], created_ms: now, first_sale: null,
        due_ms: anchor, version: 1, next_period: 0, attempts: 0, sending: null, blocked_method: null, fingerprint,
      };
      if (!chargeNow) {
        const stored = await store.create(base);
        // Two creates racing under one key: the loser answers as a replay would (or key reused for another body).
        if (!stored.created) {
          if (stored.record.fingerprint !== fingerprint) throw new WriteKeyReusedError();
          return { record: stored.record, replayed: true };
        }
        await appendEvents(deps, { next: stored.record, events: ['subscription.created'] });
        return { record: stored.record, replayed: false };
      }
      // The first period, with the shopper present: a checkout sale through the one write protocol, under a key of
      // its own derived from the create's, so a retried create replays it. The subscription's terms are kept
      // before the charge is sent, and the subscription is created from them when the charge is approved, once,
      // by whichever learns of it first: its answer (in the same completion), the reconciler's resolution of a
      // lost answer (first-charge.ts), or a replay of it (below).
      let first: FirstCharge = { record: base, card, bank };
      const pay: PayInput = {
        customer: custkey, paymentMethod: card, amount: input.amount, amountDetail: input.amountDetail, capture: true,
        ...(input.invoicePrefix ? { invoice: `${input.invoicePrefix}-1` } : {}),
        // A bank account: the consent is the shopper's authorization of this first debit (present: SEC WEB).
        ...(bank ? { authorization: { text: input.consent.text } } : {}),
      };
      const sale = await checkout.pay({
        caller, idempotencyKey: firstChargeKey(idempotencyKey), fingerprint, input: pay,
        // A duplicate-folding retry of the same charge keeps the terms its first attempt kept.
        started: async (attempt) => {
          first = await store.keepFirstCharge(first, !attempt.resumed);
        },
        alsoRecord: (outcome) => (outcome.kind === 'approved' ? () => firstCharges.paid(first, outcome.transaction.key) : undefined),
      }, render, log);
      if (sale.response.status !== 201) return { declined: sale };
      let record = await store.get(key);
      if (!record && sale.replayed) {
        // An answer the reconciler resolved, whose subscription its resolution could not create (or not yet):
        // created now from the terms the charge kept (or, were they gone, this request's, which is the same body).
        const kept = (await store.firstCharge(key)) ?? first;
        record = await firstCharges.paid(kept, (sale.response.body as { key?: string } | null)?.key ?? '');
      }
      if (!record) throw new Error('the subscription of an approved first charge is not stored yet');
      return { record, sale, replayed: sale.replayed };
    },

    get: owned,

    async list(caller, custkey) {
      assertAccess(caller, custkey);
      return store.listByCustomer(custkey);
    },

    async update(caller, key, input) {
      // A new card must be the customer's now.
      const r0 = await owned(caller, key);
      if (input.paymentMethod !== undefined) await methods.resolve(caller, r0.customer, input.paymentMethod);
      const now = await clock.now();
      const next = await commit(key, (r) => {
        if (!isChangeable(r.status)) throw new SubscriptionNotActiveError();
        const change: Partial<SubscriptionRecord> = {};
        if (input.amount !== undefined) change.amount = input.amount;
        if (input.amountDetail !== undefined) change.amount_detail = input.amountDetail;
        if (input.description !== undefined) change.description = input.description;
        if (input.paymentMethod !== undefined) {
          change.payment_method = input.paymentMethod;
          if (r.blocked_method !== input.paymentMethod) change.blocked_method = null;
          // A past-due or unpaid subscription is retried at once with the new card (contract, PATCH).
          if (r.status === 'past_due' || r.status === 'unpaid') Object.assign(change, { status: 'past_due', due_ms: now });
        }
        if (input.status === 'paused' && r.status !== 'paused') Object.assign(change, { status: 'paused', due_ms: null });
        if (input.status === 'active' && r.status === 'paused') {
          // Periods that fell due while paused are not charged: the next one ahead of the clock is.
          const n = firstPeriodFrom(r.anchor_ms, r.interval, r.interval_count, r.next_period, now);
          Object.assign(change, { status: 'active', next_period: n, attempts: 0, due_ms: periodDue(r, n) });
        }
        return changed(r, change);
      });
      if (!next) throw new NotFoundError();
      return next;
    },

    async cancel(caller, key, atPeriodEnd) {
      await owned(caller, key);
      const started = Date.now();
      for (;;) {
        const r = await owned(caller, key);
        if (!isChangeable(r.status)) throw new SubscriptionNotActiveError();
        // A renewal attempt between its status check and its answer: this cancel answers after it, so no charge
        // is ever sent after a cancel has answered (guarantee 13). A dead replica's mark ends with its lease.
        if (!atPeriodEnd && r.sending && r.sending.until_ms > Date.now() && Date.now() - started < deps.sendingLeaseMs) {
          await sleep(50);
          continue;
        }
        const t = atPeriodEnd
          ? changed(r, { cancel_at_period_end: true })
          : canceledNow(r);
        if (await store.swap(t.next)) {
          await appendEvents(deps, t);
          logger.info('subscription canceled', { at_period_end: atPeriodEnd });
          return t.next;
        }
      }
    },
  };
  return service;
}
