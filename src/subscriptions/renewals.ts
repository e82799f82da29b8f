import { randomUUID } from 'node:crypto';
import { NotFoundError, type Caller } from '../access';
import type { EventSink } from '../events/types';
import type { CallClass } from '../limiter';
import type { Logger } from '../observability/logger';
import type { Checkout, RenderSale } from '../sales/checkout';
import { sentness, unwrapNotSent } from '../writes';
import type { Clock } from './clock';
import { createCommit } from './commit';
import { createDayPacing } from './day-pacing';
import { applyOutcome, endAtPeriodEnd, type Outcome, type RetryPolicy } from './lifecycle';
import type { RenewalMetrics, RenewalResult } from './metrics';
import type { PaymentMethods } from './payment-methods';
import type { StoredResponse, WriteContext } from '../idempotency';
import type { ResultCode, Transaction } from '../gateway/types';
import type { SubscriptionRecord, SubscriptionStore } from './types';

/**
 * The renewals (guarantee 13), run by every replica: each tick takes the subscriptions due by tokengate's clock
 * (the due set in Redis), claims each (one replica works on a subscription at a time) and charges its period
 * through the checkout's one write protocol, under an Idempotency-Key derived from the subscription, the period
 * and the attempt: whichever replica, restart or failover runs it again, the same key answers the same charge,
 * and an unknown outcome answers 409 until the reconciler has settled it from the gateway's records, so a
 * period is charged at most once, ever. Its answer changes the subscription in the same completion
 * (`alsoRecord`); a replay applies it again, which finds it done.
 */
export interface Renewals {
  start(): void;
  stop(): Promise<void>;
  /** One pass over what is due now (tests and the scheduler's loop). Answers how many were worked on. */
  tick(): Promise<number>;
  /**
   * The reconciler found a write's answer (ReconcilerDeps.resolved): a renewal's is applied to its subscription
   * at once, as its completion would have (the period's answer; a bank debit's link, so a later return reaches
   * it), whatever write it is called with (another's is left alone). Answers whether it was a renewal's.
   */
  resolved(write: { scope: string; key: string }, context: WriteContext | undefined, response: StoredResponse): Promise<boolean>;
}

export interface RenewalSettings {
  /** How often a replica looks at the due set (ms). */
  pollMs: number;
  /** How many due subscriptions one pass takes at most. */
  batch: number;
  /** How many of a pass's renewals a replica works on at once (1 when absent). */
  concurrency?: number;
  /** The budget class renewals are charged in. */
  cls: CallClass;
  /** A renewal attempt's write lease (its claim and its `sending` mark last as long). */
  leaseMs: number;
  policy: RetryPolicy;
}

export interface RenewalDeps {
  store: SubscriptionStore;
  clock: Clock;
  checkout: Checkout;
  methods: PaymentMethods;
  render: RenderSale;
  events?: EventSink;
  appended?: () => void;
  logger: Logger;
  settings: RenewalSettings;
  metrics?: RenewalMetrics;
}

/**
 * tokengate's own caller for renewals. Its `sub` holds a control character, which the JWT edge refuses in any
 * token's `sub` (src/http/token-checks.ts), so no caller's Idempotency-Keys can meet a renewal's.
 */
export const RENEWALS_CALLER: Caller = { sub: 'tokengate\u0000renewals', anyCustomer: true };

/** A renewal attempt's Idempotency-Key (under RENEWALS_CALLER), and how it reads back (the key may hold colons). */
const renewalKey = (key: string, period: number, attempt: number) => `renewal:${key}:${period}:${attempt}`;
const RENEWAL_KEY = /^renewal:(.+):(\d+):(\d+)$/;

export function createRenewals(deps: RenewalDeps): Renewals {
  const { store, clock, checkout, methods, logger, settings } = deps;
  const commit = createCommit(deps);
  const pacing = createDayPacing({ store, pollMs: settings.pollMs, batch: settings.batch, spilled: deps.metrics?.spilled, logger });
  const owner = randomUUID();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let stopped = true;
  let closing = false;

  async function renew(key: string, now: number): Promise<void> {
    const r = await store.get(key);
    if (!r || r.due_ms === null || r.due_ms > now || (r.status !== 'active' && r.status !== 'past_due')) return;
    if (r.cancel_at_period_end) {
      await commit(key, endAtPeriodEnd);
      return;
    }
    const period = r.next_period;
    const attempt = r.attempts;
    let pm: string;
    let bank: boolean;
    try {
      // A wallet read the view needs travels in the renewal's class, not the paced read class: in the 10,000-
      // subscription run every refusal on the 1st was this read, refused while the renewal had a slot.
      ({ key: pm, bank } = await methods.resolve(RENEWALS_CALLER, r.customer, r.payment_method ?? undefined, settings.cls));
    } catch (err) {
      if (!(unwrapNotSent(err) instanceof NotFoundError)) throw err;
      await settle(key, period, attempt, { kind: 'removed' }, r.payment_method ?? '');
      return;
    }
    if (pm === r.blocked_method) {
      // A hard decline's card is never charged again: the subscription waits for a new one (PATCH, a new default).
      await commit(key, (cur) => (cur.version === r.version ? { next: { ...cur, due_ms: null, version: cur.version + 1 }, events: [] } : undefined));
      return;
    }
    if (await methods.isClosed(r.customer, pm)) {
      // The card updater said its account is closed: a hard decline on this card, without a gateway call.
      await settle(key, period, attempt, { kind: 'closed' }, pm);
      return;
    }
    // The mark a cancel waits for: from here to the answer, no cancel answers (so none answers before a charge).
    const marked: SubscriptionRecord = { ...r, sending: { period, until_ms: Date.now() + settings.leaseMs }, version: r.version + 1 };
    if (!(await store.swap(marked))) return; // changed meanwhile (a cancel, a PATCH): the next pass reads it again
    const invoice = r.invoice_prefix ? `${r.invoice_prefix}-${period + 1}` : undefined;
    // A card or a bank account (issue 38): the checkout's one charge either way. A bank account is debited with
    // the subscription's consent as the shopper's authorization, under the recurring SEC code PPD (contract,
    // "Bank payments": renewals use PPD); its later return reaches the subscription through its link (returns.ts).
    try {
      const result = await checkout.pay({
        caller: RENEWALS_CALLER,
        idempotencyKey: renewalKey(key, period, attempt),
        // Fixed per attempt, whatever card it goes to: a card changed while the attempt's outcome is unknown must
        // meet that outcome (409 until reconciled, then its replay), never a refusal that would leave it due.
        fingerprint: `renewal:${key}:${period}:${attempt}`,
        input: {
          customer: r.customer, paymentMethod: pm, amount: r.amount, amountDetail: r.amount_detail ?? undefined, capture: true, recurring: true, cls: settings.cls,
          ...(invoice ? { invoice } : {}), ...(bank ? { authorization: { text: r.consent.text } } : {}),
        },
        alsoRecord: (outcome) => () => settle(key, period, attempt, outcome, pm, bank),
      }, deps.render);
      // A replay: the answer was kept but maybe not its change to the subscription (a crash between): applied
      // again from the stored answer, which finds it done if it was.
      if (result.replayed) await settle(key, period, attempt, outcomeOfAnswer(result.response), pm, bank);
    } catch (err) {
      const e = unwrapNotSent(err);
      if (e instanceof NotFoundError) {
        // The removal guard stopped it (guarantee 10): a removed card or customer is a hard decline, never retried on it.
        await settle(key, period, attempt, { kind: 'removed' }, pm);
        return;
      }
      // Not sent (no budget, Redis away) or of unknown outcome (the reconciler settles it; the same key answers
      // 409 until then): the mark goes, the period stays due, and the next pass asks again under the same key.
      logger.info('renewal not settled now; the next pass asks again', { sent: sentness(err), reason: (e as { code?: string } | null)?.code });
      count('deferred');
      await commit(key, (cur) => (cur.sending ? { next: { ...cur, sending: null, version: cur.version + 1 }, events: [] } : undefined));
    }
  }

  const count = (result: RenewalResult) => deps.metrics?.attempts.inc({ result });

  async function settle(key: string, period: number, attempt: number, outcome: Outcome, pm: string, bank = false): Promise<void> {
    const now = await clock.now();
    count(outcome.kind);
    // Linked before the period is marked paid, so no return can miss it; one that comes in between records the
    // approval itself before the return (applyLinkedReturn), and the commit below then finds it done.
    if (bank && outcome.kind === 'approved' && outcome.transaction.key) await store.linkSale(outcome.transaction.key, { key, period, attempt, payment_method: pm });
    await commit(key, (cur) => applyOutcome(cur, period, attempt, outcome, now, settings.policy, pm));
  }

  async function tick(): Promise<number> {
    const now = await clock.now();
    const keys = await store.due(now, await pacing.allowance(now));
    let worked = 0;
    let next = 0;
    // A few at once (each under its own claim, as two replicas would be): a renewal waits on the gateway most of
    // its time, so one at a time held a replica to one gateway round trip per renewal (issue 37's bench: ~3 a
    // second per replica on a busy box, less than a day's budget at the 1st's peak); the limiter still decides
    // when each call goes.
    const worker = async () => {
      while (!closing && next < keys.length) {
        const key = keys[next++] as string;
        if (!(await store.claim(key, owner, settings.leaseMs))) continue;
        worked += 1;
        try {
          await renew(key, now);
        } catch (err) {
          logger.error('renewal failed; the next pass tries again', { err });
        } finally {
          await store.release(key, owner).catch(() => undefined);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, settings.concurrency ?? 1) }, worker));
    return worked;
  }

  const loop = () => {
    if (stopped) return;
    running = tick().catch((err: unknown) => {
      logger.warn('renewal pass failed', { err });
      return 0;
    }).finally(() => {
      running = undefined;
      if (!stopped) timer = setTimeout(loop, settings.pollMs * (0.75 + Math.random() / 2)).unref();
    });
  };

  async function resolved(write: { scope: string; key: string }, context: WriteContext | undefined, response: StoredResponse): Promise<boolean> {
    const m = write.scope === RENEWALS_CALLER.sub ? RENEWAL_KEY.exec(write.key) : null;
    if (!m) return false;
    // What the attempt sent (its write context): the method charged, and whether it was a bank debit.
    await settle(m[1] as string, Number(m[2]), Number(m[3]), outcomeOfAnswer(response), context?.payment_method ?? '', context?.bank !== undefined);
    return true;
  }

  return {
    tick,
    resolved,
    start() {
      if (!stopped) return;
      stopped = false;
      closing = false;
      timer = setTimeout(loop, settings.pollMs * Math.random()).unref();
    },
    async stop() {
      stopped = true;
      closing = true;
      clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}

/** A stored sale answer as the outcome it was: 201 approved, 402 declined (with its code), else a gateway error. */
export function outcomeOfAnswer(response: StoredResponse): Outcome {
  const body = (response.body ?? {}) as { key?: string; error?: { transaction?: { key?: string; error_code?: string } } };
  const tx = (key: string | undefined, code: ResultCode, errorCode?: string): Transaction =>
    ({ type: 'transaction', key: key ?? '', refnum: '', is_duplicate: 'N', result_code: code, result: '', authcode: '', ...(errorCode ? { error_code: errorCode } : {}) });
  if (response.status === 201) return { kind: 'approved', transaction: tx(body.key, 'A') };
  const declined = body.error?.transaction;
  if (response.status === 402) return { kind: 'declined', transaction: tx(declined?.key, 'D', declined?.error_code) };
  return { kind: 'error', transaction: tx(undefined, 'E') };
}
