import { Agent, request } from 'undici';
import type { Logger } from '../../observability/logger';
import { signatureOf, type WebhookEvent } from './envelope';
import { shownUrl, type WebhookSettings } from './settings';

/**
 * Delivery as the gateway does it (gateway-facts.md, Webhooks): a POST per event and receiver, 5 s connect and
 * 45 s read timeouts, any 2xx ends it, anything else (timeout, 4xx, 5xx, no connection) is tried again after the
 * next delay of the retry schedule until the schedule is spent. Many at once, at most 20 connections per
 * receiver, so nothing keeps them in order. Never awaited by the API: a receiver that is down or hangs costs
 * the sandbox's answers nothing. Every timer is tracked and every socket belongs to an Agent that close() destroys.
 */

/** The gateway's cap on parallel deliveries to one endpoint (gateway-facts.md). */
export const MAX_CONNECTIONS_PER_RECEIVER = 20;
/** Attempts kept for tests and the admin route; the oldest go first beyond this. */
const MAX_RECORDS = 10_000;

export type AttemptOutcome = 'delivered' | 'http_error' | 'timeout' | 'unreachable' | 'error';

export interface WebhookAttempt {
  event_id: string;
  event_type: string;
  /** The receiver as configured, less credentials and query. */
  url: string;
  /** 1 for the first try of a delivery; a duplicate delivery counts its own tries from 1. */
  attempt: number;
  /** True for a delivery beyond the event's first (release() naming it again, redeliver(), the duplicate knob). */
  duplicate: boolean;
  /** Epoch ms when it was sent, and how long until its answer (or failure). */
  at: number;
  durationMs: number;
  outcome: AttemptOutcome;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Set when it will be tried again: the delay taken from the retry schedule. */
  retryInMs?: number;
  /** Set when it failed and the schedule is spent: the gateway gives up on it. */
  gaveUp?: true;
}

interface Target {
  href: string;
  authorization?: string;
}

/** `https://user:pass@host/path` → the URL without them and a Basic header (the gateway's optional hook auth). */
function targetOf(url: string): Target {
  const u = new URL(url);
  if (!u.username && !u.password) return { href: u.href };
  const credentials = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  u.username = '';
  u.password = '';
  return { href: u.href, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'UND_ERR_SOCKET']);

function outcomeOf(err: unknown): AttemptOutcome {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TIMEOUTS.has(code)) return 'timeout';
  if (typeof code === 'string' && UNREACHABLE.has(code)) return 'unreachable';
  return 'error';
}

export class WebhookDispatcher {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly agents = new Map<string, Agent>();
  private records: WebhookAttempt[] = [];
  /** Bumped by reset(): answers of attempts sent before it are neither recorded nor retried. */
  private generation = 0;
  private closed = false;

  constructor(
    private readonly settings: () => WebhookSettings,
    private readonly logger: Logger,
  ) {}

  /** Every receiver gets the event after `delayMs`, then retries on the schedule. Returns at once. */
  send(event: WebhookEvent, delayMs: number, duplicate: boolean): void {
    for (const url of this.settings().webhookUrls) this.later(delayMs, () => void this.attempt(event, url, 1, duplicate));
  }

  /** Every receiver in turn, each first try awaited (so a chosen order is the order of arrival). */
  async sendInTurn(event: WebhookEvent, duplicate: boolean): Promise<WebhookAttempt[]> {
    const out: WebhookAttempt[] = [];
    for (const url of this.settings().webhookUrls) {
      const a = await this.attempt(event, url, 1, duplicate);
      if (a) out.push(a);
    }
    return out;
  }

  attempts(): WebhookAttempt[] {
    return this.records.map((r) => ({ ...r }));
  }

  /** After a settings change: agents of receivers no longer configured, or of an old connect timeout, go. */
  prune(): void {
    const s = this.settings();
    for (const [key, agent] of this.agents) {
      if (!s.webhookUrls.some((url) => key === this.agentKey(url, s))) {
        this.agents.delete(key);
        void agent.close().catch(() => undefined);
      }
    }
  }

  /** Drops pending retries and the record (the sandbox's reset()); receivers stay. */
  reset(): void {
    this.generation++;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.records = [];
  }

  /** No timer left, every socket destroyed (in-flight posts are aborted and not retried). */
  async close(): Promise<void> {
    this.closed = true;
    this.reset();
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((a) => a.destroy().catch(() => undefined)));
  }

  private later(ms: number, run: () => void): void {
    if (this.closed) return;
    if (ms <= 0) return run();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    // Not unref'd: a timer close() forgot would keep the process up, where a test sees it.
    this.timers.add(timer);
  }

  private agentKey(url: string, s: WebhookSettings): string {
    return `${s.webhookConnectTimeoutMs}\u0000${url}`;
  }

  private agentFor(url: string, s: WebhookSettings): Agent {
    const key = this.agentKey(url, s);
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new Agent({ connections: MAX_CONNECTIONS_PER_RECEIVER, connect: { timeout: s.webhookConnectTimeoutMs } });
      this.agents.set(key, agent);
    }
    return agent;
  }

  private async attempt(event: WebhookEvent, url: string, n: number, duplicate: boolean): Promise<WebhookAttempt | undefined> {
    const s = this.settings();
    // A receiver removed from the settings since the event was sent gets no more tries.
    if (this.closed || !s.webhookUrls.includes(url)) return undefined;
    const generation = this.generation;
    const target = targetOf(url);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (s.webhookSecret) headers['x-signature'] = signatureOf(event.raw, s.webhookSecret);
    if (target.authorization) headers.authorization = target.authorization;
    const at = Date.now();
    let outcome: AttemptOutcome;
    let status: number | undefined;
    try {
      const res = await request(target.href, { dispatcher: this.agentFor(url, s), method: 'POST', headers, body: event.raw, headersTimeout: s.webhookTimeoutMs, bodyTimeout: s.webhookTimeoutMs });
      status = res.statusCode;
      // The status decides; the body is read only to free the connection.
      outcome = status >= 200 && status < 300 ? 'delivered' : 'http_error';
      await res.body.dump().catch(() => undefined);
    } catch (err) {
      outcome = outcomeOf(err);
    }
    if (this.closed || generation !== this.generation) return undefined;
    const record: WebhookAttempt = { event_id: event.event_id, event_type: event.event_type, url: shownUrl(url), attempt: n, duplicate, at, durationMs: Date.now() - at, outcome, ...(status !== undefined ? { status } : {}) };
    if (outcome !== 'delivered') {
      const delay = this.settings().webhookRetryScheduleMs[n - 1];
      if (delay === undefined) record.gaveUp = true;
      else {
        record.retryInMs = delay;
        this.later(delay, () => void this.attempt(event, url, n + 1, duplicate));
      }
    }
    this.records.push(record);
    if (this.records.length > MAX_RECORDS) this.records.splice(0, this.records.length - MAX_RECORDS);
    // Never the body or the signature: ids, type, where and what happened.
    const level = outcome === 'delivered' ? 'http' : 'info';
    this.logger.log(level, outcome === 'delivered' ? 'sandbox webhook delivered' : 'sandbox webhook not delivered', {
      event_id: record.event_id, event_type: record.event_type, url: record.url, attempt: n, outcome, status, retry_in_ms: record.retryInMs, gave_up: record.gaveUp,
    });
    return record;
  }
}
