import type { Logger } from '../../observability/logger';
import type { Lifecycle } from '../lifecycle';
import type { SandboxSettings } from '../settings';
import { WebhookDispatcher, type WebhookAttempt } from './dispatcher';
import { buildEvent, type WebhookEvent } from './envelope';
import { createWebhookObserver, type LifecycleEvent } from './events';

/**
 * The sandbox sends the gateway's webhooks (issue 27; README.md, "Webhooks"): the lifecycle's changes become
 * events (events.ts), each is signed and posted to every `webhookUrls` receiver (dispatcher.ts). For tests,
 * explicit controls make disorder and duplicates deterministic: hold events, then release them in a chosen
 * order, one of them twice; the `webhookDisorderMs` and `webhookDuplicatePercent` knobs do the same at random.
 */

export type { WebhookAttempt } from './dispatcher';
export type { WebhookEventType } from './events';

export interface WebhookEventRecord {
  event_id: string;
  event_type: string;
  event_triggered: string;
  /** The body as posted (parsed). */
  payload: Record<string, unknown>;
  /** The exact bytes posted and signed. */
  raw: string;
  /** Waiting for release() or resume(). */
  held: boolean;
}

/** What tests (`sb.webhooks`) and the admin routes (`/_sandbox/webhooks`) control. */
export interface WebhookControl {
  /** Every event emitted since the start or reset(), oldest first (the last 10000). */
  events(): WebhookEventRecord[];
  /** Every delivery attempt so far, oldest first (the last 10000). */
  attempts(): WebhookAttempt[];
  /** From now on new events wait instead of being sent. */
  hold(): void;
  holding(): boolean;
  /**
   * Sends held events one after another in the order given (event ids; an id named again, or one already sent,
   * is delivered again: a duplicate), each first try answered before the next is sent, so the order given is
   * the order of arrival. Without ids: every held event, oldest first. Holding stays on. A failed try is
   * retried on the schedule, as any other. Unknown ids throw before anything is sent.
   */
  release(eventIds?: readonly string[]): Promise<WebhookAttempt[]>;
  /** Stops holding and sends what is held, oldest first. */
  resume(): Promise<WebhookAttempt[]>;
  /** Delivers an event once more (release([eventId])): the same event_id and bytes, as a gateway retry after a lost answer. */
  redeliver(eventId: string): Promise<WebhookAttempt[]>;
}

export interface SandboxWebhooks extends WebhookControl {
  /** An event of no lifecycle change (the card updater's): sent as any other while receivers are set. */
  announce(change: LifecycleEvent): void;
  /** After a settings change: the batch timer and the receivers' connections follow. */
  configure(): void;
  /** Forgets events, holds and pending retries (the sandbox's reset()); settings stay. */
  reset(): void;
  close(): Promise<void>;
}

export class WebhookControlError extends Error {}

const MAX_EVENTS = 10_000;

/** How often the batch timer looks: a tenth of the interval, between 10 ms and 1 s. */
const tickEveryMs = (intervalMs: number) => Math.min(1000, Math.max(10, Math.floor(intervalMs / 10)));

export function createSandboxWebhooks(life: Lifecycle, settings: SandboxSettings, logger: Logger, now: () => number = Date.now): SandboxWebhooks {
  const dispatcher = new WebhookDispatcher(() => settings, logger);
  let log: WebhookEvent[] = [];
  let held: WebhookEvent[] = [];
  let holding = false;
  let closed = false;
  let ticker: { timer: NodeJS.Timeout; everyMs: number } | undefined;
  let daily: NodeJS.Timeout | undefined;

  const enabled = () => !closed && settings.webhookUrls.length > 0;

  const emit = (change: LifecycleEvent) => {
    const event = buildEvent(change, settings.merchantKey);
    log.push(event);
    if (log.length > MAX_EVENTS) log.splice(0, log.length - MAX_EVENTS);
    if (holding) {
      held.push(event);
      return;
    }
    const draw = () => (settings.webhookDisorderMs > 0 ? Math.floor(Math.random() * (settings.webhookDisorderMs + 1)) : 0);
    dispatcher.send(event, draw(), false);
    if (Math.random() * 100 < settings.webhookDuplicatePercent) dispatcher.send(event, draw(), true);
  };

  const observer = createWebhookObserver(life, enabled, emit);
  // Called inside the API's handling of a change: whatever fails here, the change and its answer stand.
  const guarded = (what: string, run: () => void) => {
    try {
      run();
    } catch (err) {
      logger.error('sandbox webhook not emitted', { change: what, error: err instanceof Error ? err.message : String(err) });
    }
  };
  life.observer = {
    adopted: (tx, now) => guarded('adopted', () => observer.adopted(tx, now)),
    followedUp: (op) => guarded(op.command, () => observer.followedUp(op)),
    batchClosed: (batch, now) => guarded('batch close', () => observer.batchClosed(batch, now)),
    batchFailed: (batch, reason, now) => guarded('batch failure', () => observer.batchFailed(batch, reason, now)),
  };

  const find = (id: string) => log.find((e) => e.event_id === id);

  /**
   * The daily close's timer (wall time, to the sandbox clock's next close): set again after each close, each
   * settings change and each jump of the clock (core.ts), so the close comes without waiting for a call.
   */
  const scheduleDaily = () => {
    if (daily) clearTimeout(daily);
    daily = undefined;
    const at = !closed && enabled() ? life.nextDailyClose(now(), settings) : undefined;
    if (at === undefined) return;
    daily = setTimeout(() => {
      daily = undefined;
      life.tick(now(), settings);
      scheduleDaily();
    }, Math.min(Math.max(0, at - now()) + 5, 2 ** 31 - 1));
    daily.unref();
  };

  /** Runs the batch timer while receivers are set: a due batch closes (and says so) without waiting for a call. */
  const configure = () => {
    scheduleDaily();
    const everyMs = !closed && enabled() && settings.batchCloseIntervalMs > 0 ? tickEveryMs(settings.batchCloseIntervalMs) : 0;
    if (ticker && ticker.everyMs !== everyMs) {
      clearInterval(ticker.timer);
      ticker = undefined;
    }
    if (everyMs > 0 && !ticker) {
      const timer = setInterval(() => life.tick(now(), settings), everyMs);
      ticker = { timer, everyMs };
    }
    dispatcher.prune();
  };

  const release = async (eventIds?: readonly string[]): Promise<WebhookAttempt[]> => {
    const chosen = (eventIds ?? held.map((e) => e.event_id)).map((id) => {
      const event = find(id);
      if (!event) throw new WebhookControlError('unknown event_id');
      return event;
    });
    const out: WebhookAttempt[] = [];
    for (const event of chosen) {
      const wasHeld = held.includes(event);
      held = held.filter((e) => e !== event);
      out.push(...(await dispatcher.sendInTurn(event, !wasHeld)));
    }
    return out;
  };

  configure();
  return {
    events: () =>
      log.map((e) => ({ event_id: e.event_id, event_type: e.event_type, event_triggered: e.event_triggered, payload: JSON.parse(e.raw) as Record<string, unknown>, raw: e.raw, held: held.includes(e) })),
    attempts: () => dispatcher.attempts(),
    hold: () => void (holding = true),
    holding: () => holding,
    release,
    resume: () => {
      holding = false;
      return release();
    },
    redeliver: (eventId) => release([eventId]),
    configure,
    announce: (change) => {
      if (enabled()) emit(change);
    },
    reset() {
      log = [];
      held = [];
      holding = false;
      observer.reset();
      dispatcher.reset();
    },
    async close() {
      closed = true;
      if (ticker) clearInterval(ticker.timer);
      ticker = undefined;
      if (daily) clearTimeout(daily);
      daily = undefined;
      held = [];
      await dispatcher.close();
    },
  };
}
