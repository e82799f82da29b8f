import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Agent, request } from 'undici';
import type { Logger } from '../observability/logger';
import { destinationLabel, type EventMetrics } from './metrics';
import type { EventSigner } from './signing';
import type { DueEvent, EventLog } from './types';

/**
 * Delivers the log's events to every EVENTS_WEBHOOK_URLS entry (contract, "Payment events (out)"): a POST of
 * the event with Standard Webhooks headers; any 2xx ends it; anything else, or no answer within `timeoutMs`
 * (15 s), is tried again after the next delay of `scheduleMs`, counted from the end of the failed attempt;
 * after the last one the event is given up (counted undelivered; it stays readable in GET /v1/events).
 *
 * Every replica runs it, and the log's consumer groups make one replica hold an event at a time: an event is
 * taken by one consumer, and no other can take it before `timeoutMs + marginMs + delay` has passed since that
 * attempt started, which a live replica always ends first (a failed attempt is stamped as having started
 * `timeoutMs + marginMs` ago, so its retry comes `delay` after it ended). A replica killed mid-attempt, or
 * every replica at once, loses nothing: the event stays taken-and-unacknowledged in Redis and the next replica
 * to look takes it when it falls due.
 */
export interface EventDeliverySettings {
  destinations: readonly string[];
  /** EVENTS_RETRY_SCHEDULE_MS: the delays between attempts; its length is the number of retries. */
  scheduleMs: readonly number[];
  /** No answer within this long is a failed attempt (the contract's 15 s). */
  timeoutMs: number;
  /** How often each replica looks for new and due events. */
  pollMs: number;
  /** Kept between the end of an attempt and the earliest moment another replica may take it (clock skew, pauses). */
  marginMs?: number;
  /** Events taken per destination and look. */
  batch?: number;
}

export interface EventDeliveryDeps {
  log: EventLog;
  signer: EventSigner;
  settings: EventDeliverySettings;
  logger: Logger;
  metrics: EventMetrics;
}

export interface EventDelivery {
  start(): Promise<void>;
  /** Looks again at once (after this replica appended): an event does not wait for the next poll. */
  nudge(): void;
  /** One look at every destination (tests drive it); resolves when its attempts have ended. */
  runOnce(): Promise<number>;
  /** Stops looking and aborts attempts in flight (they are retried by whoever looks next). */
  stop(): Promise<void>;
}

type Outcome = { ok: true; status: number } | { ok: false; why: string };

export function createEventDelivery(deps: EventDeliveryDeps): EventDelivery {
  const { log, signer, settings, logger, metrics } = deps;
  const consumer = `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const marginMs = settings.marginMs ?? 2000;
  const batch = settings.batch ?? 20;
  // An attempt n may be followed once timeout + margin + the n-th delay have passed since it started; past the
  // last retry the event is still taken once more, to be given up by whoever holds it.
  const dueAfterMs = [...settings.scheduleMs, 0].map((delay) => settings.timeoutMs + marginMs + delay);
  const agent = new Agent({ connect: { timeout: Math.min(5000, settings.timeoutMs) }, keepAliveTimeout: 30_000 });
  const aborts = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  let looking = false;
  let again = false;
  let failing = false;
  const ensured = new Set<string>();

  async function post(url: string, due: DueEvent): Promise<Outcome> {
    const body = JSON.stringify(due.event);
    // One controller per post, let go when it ends: Node 20's AbortSignal.any keeps a WeakRef per call on the
    // long-lived stop signal (the 90-minute soak's heap diffs: ~700 -> 3,300 per replica and growing).
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(new DOMException('the event receiver did not answer in time', 'TimeoutError')), settings.timeoutMs);
    const onStop = () => controller.abort(aborts.signal.reason);
    if (aborts.signal.aborted) onStop();
    else aborts.signal.addEventListener('abort', onStop, { once: true });
    const signal = controller.signal;
    try {
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'user-agent': 'tokengate-events', ...signer.headers(due.event.id, body) },
        body,
        signal,
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300 ? { ok: true, status: res.statusCode } : { ok: false, why: `http_${res.statusCode}` };
    } catch (err) {
      const name = (err as Error).name;
      return { ok: false, why: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : ((err as { code?: string }).code ?? name) };
    } finally {
      clearTimeout(timeout);
      aborts.signal.removeEventListener('abort', onStop);
    }
  }

  async function attempt(url: string, due: DueEvent): Promise<void> {
    const destination = destinationLabel(url);
    const { event } = due;
    const last = settings.scheduleMs.length + 1;
    if (due.attempt > last) {
      // Its last attempt ended without an answer being recorded (that replica died): give it up now.
      await log.ack(url, event.id);
      metrics.undelivered.inc({ destination });
      logger.warn('payment event undelivered after the last retry', { destination, event: event.id, type: event.type, attempts: last });
      return;
    }
    const outcome = await post(url, due);
    if (outcome.ok) {
      metrics.deliveries.inc({ destination, result: 'delivered' });
      await log.ack(url, event.id);
      return;
    }
    metrics.deliveries.inc({ destination, result: 'failed' });
    if (aborts.signal.aborted) return; // stopping: left taken, whoever looks next retries it on schedule
    if (due.attempt >= last) {
      await log.ack(url, event.id);
      metrics.undelivered.inc({ destination });
      logger.warn('payment event undelivered after the last retry', { destination, event: event.id, type: event.type, attempts: due.attempt, reason: outcome.why });
      return;
    }
    logger.info('payment event delivery failed; retried on schedule', { destination, event: event.id, attempt: due.attempt, reason: outcome.why, retry_in_ms: settings.scheduleMs[due.attempt - 1] });
    await log.stamp(url, consumer, event.id, settings.timeoutMs + marginMs);
  }

  async function runOnce(): Promise<number> {
    let taken = 0;
    await Promise.all(settings.destinations.map(async (url) => {
      if (!ensured.has(url)) {
        await log.ensureDestination(url);
        ensured.add(url);
      }
      const fresh = await log.takeNew(url, consumer, batch);
      const due = await log.takeDue(url, consumer, dueAfterMs, batch);
      taken += fresh.length + due.length;
      await Promise.all([...fresh, ...due].map((d) => attempt(url, d).catch((err: unknown) => logger.warn('payment event delivery step failed', { destination: destinationLabel(url), err }))));
    }));
    return taken;
  }

  function schedule(delayMs: number): void {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      looking = true;
      running = runOnce().then((n) => {
        looking = false;
        if (failing) logger.info('payment event delivery: looks succeed again');
        failing = false;
        // A full batch may have more behind it; a nudge during the look asks for another at once.
        const more = n >= batch || again;
        again = false;
        schedule(more ? 0 : settings.pollMs * (0.75 + Math.random() / 2));
      }, (err: unknown) => {
        looking = false;
        if (!failing) logger.warn('payment event delivery: a look failed; quiet until one succeeds', { err });
        failing = true;
        schedule(settings.pollMs);
      });
    }, delayMs);
    timer.unref();
  }

  return {
    async start() {
      if (settings.destinations.length === 0) return;
      // Each destination's group is made before the first event can be appended by this replica, so none is
      // missed; if Redis is not there yet, the first look makes it.
      await Promise.all(settings.destinations.map((d) => log.ensureDestination(d).then(() => ensured.add(d), () => undefined)));
      stopped = false;
      schedule(0);
    },
    nudge() {
      if (stopped) return;
      if (looking) {
        again = true;
        return;
      }
      clearTimeout(timer);
      timer = undefined;
      schedule(0);
    },
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      aborts.abort();
      await running?.catch(() => undefined);
      await agent.close().catch(() => undefined);
    },
  };
}
